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

# The vision extra: torchvision models through `lmc align` (issue 36). torch and torchvision must import together; the pair
# tested here is torch 2.14.1 + torchvision 0.29.1 (PyTorch's local CPU wheel cannot import the index's torchvision).
"$py" -m pip install -q "torch==2.14.1" "torchvision==0.29.1" "$(ls "$work"/dist/*.whl)[vision]"
"$py" - <<'PY'
# A: torchvision's ResNet-18 at random initialisation; B: the same network with every hidden unit permuted (a planted
# permutation, found by lmc-nb's own derived spec). Aligning B onto A must remove the barrier entirely.
import torch, torchvision
from safetensors.torch import save_file
from lmc_nb.autospec import auto_spec
from lmc_nb.perm import random_perms, apply_perm
torch.manual_seed(0)
A = torchvision.models.resnet18(num_classes=10).eval()
with torch.no_grad(): A.train(); A(torch.randn(64, 3, 28, 28)); A.eval()      # non-trivial batch-norm statistics
spec = auto_spec(A, torch.randn(2, 3, 28, 28))
sd = {k: v.detach().contiguous() for k, v in A.state_dict().items()}
save_file(sd, 'A.safetensors')
save_file({k: v.contiguous() for k, v in apply_perm(spec, sd, random_perms(spec, sd, seed=1)).items()}, 'B.safetensors')
print(f"planted: {len(spec.groups)} groups")
PY
"$work/venv/bin/lmc" align A.safetensors B.safetensors --model torchvision.models:resnet18 --model-kwargs '{"num_classes": 10}' \
    --channels 3 --limit 1000 --lams 3 --boot 50 --stat-samples 200 --quiet --out "$work/align" > "$work/align.log"
"$py" - "$work/align" <<'PY'
import json, sys, torch
from safetensors.torch import load_file
out = sys.argv[1]; p = json.load(open(f'{out}/align.json'))['paths']
A, Bw = load_file('A.safetensors'), load_file(f'{out}/B_aligned_weight.safetensors')
assert all(torch.equal(A[k], Bw[k]) for k in A), "the planted permutation was not undone exactly"
assert p['weight']['loss_barrier'] < 1e-5, p['weight']
print(f"lmc align (torchvision resnet18, vision extra): B aligned = A exactly; loss barrier {p['none']['loss_barrier']:.3g} unaligned, "
      f"{p['weight']['loss_barrier']:.1e} aligned")
PY
