#!/usr/bin/env bash
# Build lmc-nb as wheel + sdist, install the wheel into a clean virtual environment (no nbdev, Ray, torchvision,
# ipywidgets), and run the main job there. Usage: scripts/wheel_check.sh WORKDIR
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:?usage: wheel_check.sh WORKDIR}; mkdir -p "$work"
python3 -m build --sdist --wheel --outdir "$work/dist" . > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
ls "$work/dist"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# CPU-only torch: a local wheel where one is shipped (this machine), else PyTorch's CPU index (the README's path).
ver=$(python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
whl=$(ls /opt/wheels/torch-*+cpu-"$ver"-*.whl 2>/dev/null | head -1 || true)
if [ -n "$whl" ]; then "$py" -m pip install -q "$whl"
else "$py" -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu; fi
"$py" -m pip install -q "$work"/dist/*.whl
cd "$work"     # away from the source tree, so the installed wheel is what runs
"$py" - <<'PY'
import sys, subprocess, importlib.util as u
for name in ('nbdev', 'ray', 'torchvision', 'ipywidgets'):
    assert u.find_spec(name) is None, f"{name} is installed in the clean venv: the core install should not need it"
from lmc_nb.cli import main
assert 'torch' not in sys.modules, "importing the CLI imported torch"
PY
"$work/venv/bin/lmc" --version
"$work/venv/bin/lmc" report --quiet --epochs 2 --out "$work/report" > "$work/report.log"
grep -q "loss barrier" "$work/report/report.md"
"$py" -c "import lmc_nb, sys; print('lmc report ran from the wheel:', lmc_nb.__file__)"
