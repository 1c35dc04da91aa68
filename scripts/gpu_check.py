"""The GPU check of lmc-nb: run on a machine with a CUDA GPU (CI has none).

    python scripts/gpu_check.py OUT.json [--quick] [--cpu] [--only CHECK,...]   (--cpu: a dry run of the script itself on the CPU;
    --only: these checks and no recipe timings)

1. Correctness there: `train`, `train_many`, `evaluate`, `path_outputs` on the GPU (an explicit `device` and `$LMC_DEVICE`),
   models given back where they were, weights within rounding of a CPU run (bounded by what another batch order moves).
2. Time: seconds per optimizer step of every paper-scale recipe (`lmc_nb.reproduce.PAPER_RECIPES`) through the library's own
   `train` / `train_many`, as (t(long) − t(short)) / (long − short steps) after a warm-up, so start-up costs cancel.
   `training_hours` turns them into hours per reproduction.
OUT.json is rewritten after every check and recipe, so a run cut short keeps what it measured. Exit status 1 if a check fails.
"""
import json, os, sys, time, warnings, tempfile
from dataclasses import replace
from pathlib import Path
import torch
from lmc_nb.data import Data, Splits, load_data
from lmc_nb.train import TrainConfig, train, evaluate, init_model
from lmc_nb.many import train_many
from lmc_nb.interp import path_outputs
from lmc_nb.nnutil import compute_device, module_device
from lmc_nb.reproduce import PAPER_RECIPES, recipe_model, training_hours

out, quick, DEV = Path(sys.argv[1]), '--quick' in sys.argv, 'cpu' if '--cpu' in sys.argv else 'cuda'
assert DEV == 'cpu' or torch.cuda.is_available(), 'gpu_check needs a CUDA GPU'
cuda = DEV == 'cuda'
sync = torch.cuda.synchronize if cuda else (lambda: None)
res = dict(gpu=torch.cuda.get_device_name(0) if cuda else 'cpu (dry run)', torch=torch.__version__, date=time.strftime('%Y-%m-%d'), checks={}, recipes={})
save = lambda: out.write_text(json.dumps(res, indent=1))

def check(name, fn):
    try: d = fn(); res['checks'][name] = dict(ok=True, detail=d); print('PASS', name, d, flush=True)
    except Exception as e: res['checks'][name] = dict(ok=False, detail=repr(e)[:800]); print('FAIL', name, repr(e)[:800], flush=True)
    save()

gap = lambda m1, m2: max(float((a - b).detach().abs().max()) for a, b in zip(m1.parameters(), m2.parameters()))
gmm = load_data('gmm', n=6000, k=8)
arch = dict(arch='mlp', d_in=gmm.in_shape[0], widths=[32] * 3, d_out=gmm.n_classes)
cfg = TrainConfig(epochs=2, bs=256, lr=3e-3)

def mlp_train():
    ref = init_model(arch, 0); train(ref, gmm, cfg, progress=False)
    cu = init_model(arch, 0); train(cu, gmm, cfg, progress=False, device=DEV)
    order = init_model(arch, 0); train(order, gmm, replace(cfg, seed=1), progress=False)
    assert module_device(cu).type == 'cpu', 'the model did not come back'
    assert gap(cu, ref) < 0.2 * gap(order, ref), (gap(cu, ref), gap(order, ref))
    return dict(gpu_vs_cpu=gap(cu, ref), batch_order=gap(order, ref))

def env_device():
    seen = []
    m = init_model(arch, 0); h = m.register_forward_pre_hook(lambda mod, a: seen.append(a[0].device.type))
    os.environ['LMC_DEVICE'] = DEV
    try: train(m, gmm, replace(cfg, epochs=1), progress=False, validate=False)
    finally: del os.environ['LMC_DEVICE']; h.remove()
    assert set(seen) == {DEV} and module_device(m).type == 'cpu', (set(seen), module_device(m))
    return dict(steps_on_cuda=len(seen))

def resume():
    with tempfile.TemporaryDirectory() as tmp:
        part = init_model(arch, 0); train(part, gmm, replace(cfg, epochs=1), ckpt=Path(tmp) / 'r', progress=False, device=DEV)
        res_ = init_model(arch, 0); train(res_, gmm, cfg, ckpt=Path(tmp) / 'r', progress=False, device=DEV)
    whole = init_model(arch, 0); train(whole, gmm, cfg, progress=False, device=DEV)
    assert gap(res_, whole) < 1e-6, gap(res_, whole)
    return dict(resumed_vs_whole=gap(res_, whole))

def many():
    ms = train_many([init_model(arch, s) for s in (0, 1)], gmm, cfg, seeds=[0, 1], progress=False, device=DEV)
    seq = [init_model(arch, s) for s in (0, 1)]
    for s, m in enumerate(seq): train(m, gmm, replace(cfg, seed=s), progress=False, validate=False, device=DEV)
    order = init_model(arch, 0); train(order, gmm, replace(cfg, seed=1), progress=False, device=DEV)
    g = max(gap(a, b) for a, b in zip(ms, seq))
    assert all(module_device(m).type == 'cpu' for m in ms) and g < 0.2 * gap(order, seq[0]), (g, gap(order, seq[0]))
    return dict(vmap_vs_sequential=g, batch_order=gap(order, seq[0]))

imgs = Splits(Data(torch.randn(512, 1, 28, 28), torch.randint(0, 10, (512,))), *[Data(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,)))] * 2, 'noise', 10)
rn = dict(arch='resnet20', width=0.25, in_ch=1, scheme='wasym', sigma_f=1.0)
def conv_channels_last():
    c_ = TrainConfig(epochs=2, bs=64)
    ref = init_model(rn, 0); train(ref, imgs, c_, progress=False, validate=False)
    cu = init_model(rn, 0); train(cu, imgs, c_, progress=False, validate=False, channels_last=True, device=DEV)
    order = init_model(rn, 0); train(order, imgs, replace(c_, seed=1), progress=False, validate=False)
    assert module_device(cu).type == 'cpu' and all(t.is_contiguous() for t in cu.state_dict().values())
    for mod in cu.modules():                                                      # W-asym: the fixed entries are still exactly F
        if getattr(mod, 'D', None) is not None and hasattr(mod, 'effective_weight'):
            with torch.no_grad(): assert torch.equal(mod.effective_weight()[mod.D == 0], mod.F[mod.D == 0])
    assert gap(cu, ref) < gap(order, ref), (gap(cu, ref), gap(order, ref))        # TF32 convolutions: rounding, below another batch order
    return dict(gpu_nhwc_vs_cpu=gap(cu, ref), batch_order=gap(order, ref))

def bf16():
    m = init_model(arch, 0)
    with warnings.catch_warnings(): warnings.simplefilter('error', RuntimeWarning); h = train(m, gmm, replace(cfg, amp='bf16'), progress=False, device=DEV)
    assert h[-1]['val_acc'] > 0.5, h[-1]
    return dict(val_acc=h[-1]['val_acc'])

def paths_and_eval():
    A, B = init_model(arch, 0), init_model(arch, 1)
    for m, s in ((A, 0), (B, 1)): train(m, gmm, replace(cfg, seed=s), progress=False)
    lams = torch.linspace(0, 1, 5)
    d_mlp = float((path_outputs(A, B, gmm.test.X, lams, device=DEV) - path_outputs(A, B, gmm.test.X, lams)).abs().max())
    bn = dict(arch='resnet20', width=0.25, in_ch=1, norm='batch')
    Ra, Rb = init_model(bn, 0), init_model(bn, 1)
    o_cu = path_outputs(Ra, Rb, imgs.test.X, lams, bn_data=imgs.train, device=DEV)
    d_bn = float((o_cu - path_outputs(Ra, Rb, imgs.test.X, lams, bn_data=imgs.train)).abs().max())
    e_cu, e_cpu = evaluate(A, gmm.test, device=DEV), evaluate(A, gmm.test)
    assert o_cu.device.type == 'cpu' and module_device(Ra).type == 'cpu'
    assert d_mlp < 1e-3 and d_bn < 1e-2 and abs(e_cu['loss'] - e_cpu['loss']) < 1e-4 and e_cu['acc'] == e_cpu['acc'], (d_mlp, d_bn, e_cu, e_cpu)
    return dict(mlp_path_max_diff=d_mlp, bn_path_max_diff=d_bn, eval_loss_diff=abs(e_cu['loss'] - e_cpu['loss']))

def own_model_align():
    "A torchvision ResNet-18 (on the CPU dry run, where torchvision may not import: a small conv net) aligned and interpolated under `$LMC_DEVICE`, against the CPU."
    from lmc_nb.align import align_pair
    try: import torchvision; make, who = (lambda: torchvision.models.resnet18(num_classes=10)), 'torchvision resnet18'
    except Exception:
        if cuda: raise
        make, who = (lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 10))), 'small conv net (no torchvision)'
    torch.manual_seed(0); A, B = make(), make()
    X, y = torch.randn(320, 3, 32, 32), torch.randint(0, 10, (320,))
    d = Splits(Data(X[:256], y[:256]), Data(X[256:], y[256:]), Data(X[256:], y[256:]), 'noise', 10)
    run = lambda: align_pair(A, B, d, methods=('weight', 'activation'), lams=5, n_boot=0, stat_samples=128, progress=False)
    ref, seen = run(), []
    h = A.register_forward_pre_hook(lambda mod, a: seen.append(a[0].device.type))
    os.environ['LMC_DEVICE'] = DEV
    try: got = run()
    finally: del os.environ['LMC_DEVICE']; h.remove()
    gap = {k: max(abs(a - b) for a, b in zip(ref['paths'][k]['loss'], got['paths'][k]['loss'])) for k in ref['paths']}
    same_perms = all(torch.equal(p, q) for p, q in zip(ref['aligned']['weight'][1].values(), got['aligned']['weight'][1].values()))
    assert module_device(A).type == 'cpu' and DEV in seen, (module_device(A), set(seen))
    assert max(gap.values()) < 1e-2 and same_perms, (gap, same_perms)
    return dict(model=who, devices_seen=sorted(set(seen)), loss_gap=gap, weight_perms_equal=same_perms, groups=got['spec']['groups'])

only = sys.argv[sys.argv.index('--only') + 1].split(',') if '--only' in sys.argv else None
for name, fn in (('mlp_train', mlp_train), ('env_device', env_device), ('resume', resume), ('train_many', many),
                 ('conv_channels_last', conv_channels_last), ('bf16', bf16), ('paths_and_eval', paths_and_eval), ('own_model_align', own_model_align)):
    if only is None or name in only: check(name, fn)

def time_recipe(name):
    r = PAPER_RECIPES[name]; bs, S = r['cfg']['bs'], r.get('many', 1)
    short, long_ = (3, 8) if quick else (5, 25)
    if cuda: torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    ms = [recipe_model(name, s).to(DEV) for s in range(S)]
    def run(steps):
        n = bs * steps
        d = Splits(Data(torch.randn(n, 1, 28, 28, device=DEV), torch.randint(0, 10, (n,), device=DEV)), *[Data(torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,)))] * 2, 'noise', 10)
        c = TrainConfig(epochs=1, **r['cfg'])
        sync(); t = time.perf_counter()
        if S > 1: train_many(ms, d, c, progress=False)
        else: train(ms[0], d, c, progress=False, validate=False, channels_last=r.get('channels_last', False))
        sync(); return time.perf_counter() - t
    run(short)                                                          # warm-up: cuDNN's algorithm search, lazy initialisation
    t1, t2 = run(short), run(long_)
    res['recipes'][name] = dict(sec_per_step=(t2 - t1) / (long_ - short), steps=[short, long_], seconds=[t1, t2], batch=bs, models_per_step=S,
                                params_M=sum(p.numel() for p in ms[0].parameters()) / 1e6, peak_GB=torch.cuda.max_memory_allocated() / 1e9 if cuda else None)
    res['hours'] = training_hours({k: v['sec_per_step'] for k, v in res['recipes'].items()})
    print(name, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in res['recipes'][name].items()}, flush=True); save()
    del ms

names = [n for n in PAPER_RECIPES if cuda or n in ('ni_mlp512', 'lewc_mlp512', 'ig_myrtle16', 'ig_resnet20x1')] if only is None else []   # a dry run: a few small ones
order = sorted(names, key=lambda k: ('vgg11' in k, 'resnet20x32' in k))   # the largest last: a run cut short keeps the rest
for name in order:
    try: time_recipe(name)
    except Exception as e: res['recipes'][name] = dict(error=repr(e)[:500]); print('ERROR', name, repr(e)[:500], flush=True); save()
if names: print('hours of training per reproduction (paper scale, this GPU):', {k: round(v, 2) for k, v in res.get('hours', {}).items()})
sys.exit(0 if all(c['ok'] for c in res['checks'].values()) else 1)
