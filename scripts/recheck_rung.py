"""Re-measure pairs of a ResNet-20 width rung of LEWC Table 1 with 24c's own code at the cpu scale (02d's evidence section).

    python scripts/recheck_rung.py PAIRS [WIDTH]     # e.g. 3,4,5 0.25  (24c's ladder pairs are 3-8; 24's own are 0-2)

Runs 24c_lewc_cnn_settle.ipynb's cells up to its `values` function (LMC_SCALE=cpu), then measures the calibrated loss
barrier without permutation of the given pairs (seeds 2i, 2i + 1) at WIDTH, training their models on the guarded path
(`train(channels_last=True)` asks `layout.safe_layout`) into 24's model cache, and prints the values. Run two at once
with OMP_NUM_THREADS=1 on disjoint pairs; the per-pair results are cached as 24c caches them.
"""
import json, os, sys, time
from pathlib import Path
os.environ['LMC_SCALE'] = 'cpu'
from execnb.shell import CaptureShell

nbs = Path(__file__).resolve().parent.parent / 'nbs'
cells = json.loads((nbs / '24c_lewc_cnn_settle.ipynb').read_text())['cells']
upto = next(i for i, c in enumerate(cells) if 'def values(' in ''.join(c['source']))
os.chdir(nbs); sh = CaptureShell()
for c in cells[:upto + 1]:
    if c['cell_type'] == 'code':
        sh.run(''.join(c['source']))
        if sh.exc: sys.exit(f"24c's setup failed: {sh.exc}")
pairs, width = [int(x) for x in sys.argv[1].split(',')], float(sys.argv[2]) if len(sys.argv) > 2 else 0.25
t0 = time.perf_counter()
sh.run(f"import torch; torch.set_num_threads(1); _v = values('resnet20', {width}, {pairs}, 'none', 'loss')")
if sh.exc: sys.exit(f"measuring failed: {sh.exc}")
print(json.dumps(dict(width=width, pairs=pairs, none_loss=sh.user_ns['_v'], seconds=round(time.perf_counter() - t0))))
