#!/bin/bash
# Every reproduction at its smoke scale on a GPU machine with LMC_DEVICE=cuda (`lmc reproduce --device`'s path).
#   bash scripts/gpu_smoke.sh prepare   # here: converts the notebooks to scripts in .gpu/ (git-ignored), with Fashion-MNIST
#   bash scripts/gpu_smoke.sh run       # there (repo root): runs each; one line per notebook: rc, seconds, peak GPU memory
# The GPU machine has PyTorch but no Jupyter or IPython, so `prepare` also writes a print-only stand-in for IPython.display;
# it exists only in .gpu/ and only for this check. Pass NBS="22_ni_swap_costs ..." to run a subset; TMO: seconds per notebook.
set -u
cd "$(dirname "$0")/.."
ALL="20_ni_q1q2_fashion 20b_ni_h5_settle 21_ts_reproductions 21b_ts_fig7_settle 22_ni_swap_costs 23_ni_coherence 24_lewc_width 24b_lewc_skip_settle 25_ig_stitching 25a_ig_stitch_ladder 25c_ig_d3_settle 26_ni_vit 27_ni_wresnet_sigma"
if [ "${1:-}" = prepare ]; then
  rm -rf .gpu && mkdir -p .gpu/data/FashionMNIST/raw .gpu/shim/IPython
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
  cp /usr/share/datasets/fashion-mnist/*.gz .gpu/data/FashionMNIST/raw/
  printf 'def get_ipython(): return None\nversion_info = (8, 24, 0)\n' > .gpu/shim/IPython/__init__.py
  printf 'class Markdown(str): pass\nclass HTML(str): pass\ndef display(*xs):\n    for x in xs: print(x if isinstance(x, str) else repr(x))\n' > .gpu/shim/IPython/display.py
  for f in $ALL; do
    jupyter nbconvert --to script nbs/$f.ipynb --output-dir .gpu --log-level ERROR && mv .gpu/$f.txt .gpu/$f.py
    printf '\nimport torch as _t\nprint("GPU_SMOKE_DONE cuda peak GB", round(_t.cuda.max_memory_allocated() / 1e9, 3) if _t.cuda.is_available() else None)\n' >> .gpu/$f.py
  done
  du -sh .gpu; exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 prepare|run"; exit 2; }
OUTDIR=${OUT:-/tmp/gpu_smoke}; mkdir -p "$OUTDIR"; fail=0
cd nbs
for f in ${NBS:-$ALL}; do
  t0=$(date +%s)
  LMC_SCALE=smoke LMC_DEVICE=${DEV:-cuda} MPLBACKEND=Agg LMC_DATA=$PWD/../.gpu/data PYTHONPATH=${PYTHONPATH:-}:$PWD/..:$PWD/../.gpu/shim PYTHONUNBUFFERED=1 \
    timeout ${TMO:-150} python3 ../.gpu/$f.py > "$OUTDIR/$f.log" 2>&1
  rc=$?; [ $rc = 0 ] || fail=1
  echo "$f rc=$rc $(( $(date +%s) - t0 )) s $(grep -o 'GPU_SMOKE_DONE.*' "$OUTDIR/$f.log")"
  [ $rc = 0 ] || tail -5 "$OUTDIR/$f.log"
done
exit $fail
