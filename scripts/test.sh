#!/usr/bin/env bash
# lmc-nb's test command (README "Run the tests"; `.ci/run` calls it after installing everything).
# Fails on: lmc_nb/ out of sync with the notebooks, notebooks that nbdev_clean would change,
# nbdev_proc_nbs failing (the docs pre-processing), any notebook that errors under nbdev_test.
# Ends with one line `N passed, M failed` counting notebooks.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A snapshot of the working tree (tracked + untracked-not-ignored files), to export / clean without touching it.
snap="$tmp/snap"; mkdir -p "$snap"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null | tar -xf - -C "$snap"

echo "== library in sync with the notebooks (nbdev_export)"
if (cd "$snap" && nbdev_export >"$tmp/export.log" 2>&1); then
  if ! diff -r -q -x __pycache__ "$snap/lmc_nb" "$root/lmc_nb"; then
    echo "FAIL: lmc_nb/ differs from what nbdev_export produces; run nbdev_export and commit"; fail=1
  else echo "ok"; fi
else cat "$tmp/export.log"; echo "FAIL: nbdev_export errored"; fail=1; fi

echo "== notebooks clean (nbdev_clean)"
if (cd "$snap" && nbdev_clean >"$tmp/clean.log" 2>&1); then
  dirty=$(cd "$snap" && for f in $(find nbs -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*'); do cmp -s "$f" "$root/$f" || echo "$f"; done)
  if [ -n "$dirty" ]; then echo "FAIL: nbdev_clean would change:"; echo "$dirty"; fail=1; else echo "ok"; fi
else cat "$tmp/clean.log"; echo "FAIL: nbdev_clean errored"; fail=1; fi

echo "== docs pre-processing (nbdev_proc_nbs)"
# Without Quarto on PATH, nbdev_proc_nbs tries to download Quarto and then runs `pip install -e` on the folder it is
# in (here the snapshot): a no-op `quarto` shim for this one step keeps it from touching the machine.
mkdir -p "$tmp/bin"; printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/quarto"; chmod +x "$tmp/bin/quarto"
if (cd "$snap" && PATH="$tmp/bin:$PATH" nbdev_proc_nbs >"$tmp/proc.log" 2>&1); then echo "ok"
else tail -20 "$tmp/proc.log"; echo "FAIL: nbdev_proc_nbs errored"; fail=1; fi

echo "== notebooks (nbdev_test)"
total=$(python3 -c "
from nbdev.config import get_config
from nbdev.doclinks import nbglob
print(len(nbglob(get_config().path('nbs_path'), skip_folder_re='^[_.]', skip_file_re='^[_.]')))")
nbdev_test --timing 2>&1 | tee "$tmp/test.log"
status=${PIPESTATUS[0]}
failed=$(awk '/nbdev Tests Failed On The Following Notebooks/{f=1; next} f && /\.ipynb/{n++} END{print n+0}' "$tmp/test.log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=$total; fi   # nbdev_test crashed before listing
[ "$failed" -gt 0 ] && fail=1
echo "$((total - failed)) passed, $failed failed"
exit $fail
