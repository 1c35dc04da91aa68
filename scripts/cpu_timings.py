"""Seconds per optimizer step of the paper-scale recipes that `29a_departures` prices on this machine's CPU (`regime.CPU_SECONDS_PER_STEP`).

    python scripts/cpu_timings.py OUT.json [RECIPE ...]

Each recipe trains through the library's own `train` on random 28 × 28 images, as `gpu_check.py` times the GPU:
(t(long) − t(short)) / (long − short steps) after a warm-up step. A recipe whose full batch would take minutes per step on
two cores (the ×16 and ×32 CNNs) is timed at a batch of `SMALL` images and scaled linearly to its batch (a convolution's cost
is linear in the batch); the JSON says which. Run it on an idle machine: another job on the same cores inflates every number.
"""
import json, os, platform, sys, time
from pathlib import Path
import torch
from lmc_nb.data import Data, Splits
from lmc_nb.train import TrainConfig, train
from lmc_nb.reproduce import PAPER_RECIPES, recipe_model

SMALL = 8
out = Path(sys.argv[1]); names = sys.argv[2:] or ['lewc_mlp4096', 'lewc_mlp8192', 'lewc_resnet20x32', 'lewc_vgg11x16']
cpu = next((l.split(':', 1)[1].strip() for l in Path('/proc/cpuinfo').read_text().splitlines() if l.startswith('model name')), platform.processor())
res = dict(cpu=cpu, threads=torch.get_num_threads(), torch=torch.__version__, date=time.strftime('%Y-%m-%d'), recipes={})
mem = int(next(l.split()[1] for l in Path('/proc/meminfo').read_text().splitlines() if l.startswith('MemTotal'))) * 1024
for name in names:
    r = PAPER_RECIPES[name]; bs = r['cfg']['bs']; conv = r['arch'][0] != 'mlp'; b = SMALL if conv else bs
    from lmc_nb.archs import model_for
    with torch.device('meta'): n_p = sum(p.numel() for p in model_for(r['arch'][0], (1, 28, 28), 10, **r['arch'][1]).parameters())
    if 12 * n_p > 0.9 * mem:                                             # float32 weights, gradients and one optimizer state: killed for memory before one step
        res['recipes'][name] = dict(sec_per_step=None, params_M=n_p / 1e6, reason=f"{n_p / 1e9:.2f} billion parameters: weights, gradients and optimizer state (≈ {12 * n_p / 1e9:.0f} GB) exceed this machine's {mem / 2 ** 30:.0f} GiB")
        print(name, res['recipes'][name], flush=True); out.write_text(json.dumps(res, indent=1)); continue
    m = recipe_model(name, 0)
    def run(steps):
        n = b * steps
        d = Splits(Data(torch.randn(n, 1, 28, 28), torch.randint(0, 10, (n,))), *[Data(torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,)))] * 2, 'noise', 10)
        c = TrainConfig(epochs=1, **{**r['cfg'], 'bs': b})
        t = time.perf_counter(); train(m, d, c, progress=False, validate=False, channels_last=r.get('channels_last', False)); return time.perf_counter() - t
    run(1)                                                               # warm-up
    short, long_ = 2, 5
    t1, t2 = run(short), run(long_)
    s = (t2 - t1) / (long_ - short)
    res['recipes'][name] = dict(sec_per_step=s * bs / b, measured_batch=b, batch=bs, scaled=b != bs, seconds=[t1, t2], steps=[short, long_])
    print(name, res['recipes'][name], flush=True)
    out.write_text(json.dumps(res, indent=1))
