"""Measure a reproduction's independent pairs on a lent GPU machine with the notebook's own code, and bring back the small
per-pair results (JSON) for the notebook to read from its cache. Models stay there: a device call returns at most 64 MiB.

    python scripts/device_pairs.py run NOTEBOOK --upto TEXT --call EXPR --pairs LO:HI --pack DIR [--procs 12] [--deadline S]
                                       [--scale cpu] [--device cuda] [--out $OUT]
    python scripts/device_pairs.py unpack FILE.tgz DIR      # here: the results into data_root()/DIR (files already there are kept)
    python scripts/device_pairs.py selftest                 # CPU, smoke scale, seconds (CI)

`run` starts --procs worker processes. Each executes the notebook's code cells that come before the first cell containing
TEXT (its definitions: data, recipe, the cached per-pair measurement) in the notebook's folder, at --scale, with
LMC_DEVICE=--device (so `train`, `train_stitch` … run there) and one CPU thread, TF32 off (f32 arithmetic, as on a CPU); then
it evaluates EXPR with `i` bound to each of its pairs (i ≡ k mod procs, in order). EXPR should be the notebook's own cached
function (e.g. "bars('vgg11', 0.25, i)"), so each result is written under the notebook's own name and key. The parent packs
every JSON file under data_root()/DIR into OUT/pairs.tgz every 10 s (a run cut short keeps what it finished) and stops the
workers before --deadline seconds. Example (24c's VGG pairs 3–50 on an H100):

    python scripts/device_pairs.py run nbs/24c_lewc_cnn_settle.ipynb --upto '## The looks' --call "bars('vgg11', CFG['cnns']['vgg11'], i)" \\
        --pairs 3:51 --pack lewc_width/bars --deadline 480 --out $OUT

A notebook that keeps its pairs with the repository (`cached_json(…, keep=evidence(…))`, e.g. 24d_lewc_vgg_second) also writes
them under nbs/claims/evidence/ where the workers run: on this machine that is the checkout itself (commit the folder); from a
GPU machine the packed cache files come back, and the notebook keeps them at its next run here.
"""
import argparse, json, os, subprocess, sys, tarfile, time
from pathlib import Path

def prefix(nb:Path, upto:str)->str:
    "The notebook's code before the first cell that contains `upto` (refused if no cell does: the whole notebook would run)."
    cells = json.loads(nb.read_text())['cells']
    stop = next((k for k, c in enumerate(cells) if upto in ''.join(c['source'])), None)
    if stop is None: raise SystemExit(f"{nb}: no cell contains {upto!r}; name the first cell that must not run")
    return '\n\n'.join(''.join(c['source']) for c in cells[:stop] if c['cell_type'] == 'code')

def work(a):
    "One worker: the notebook's definitions, then EXPR for each of its pairs."
    import matplotlib; matplotlib.use('Agg')
    import torch
    torch.set_num_threads(1); torch.backends.cudnn.allow_tf32 = False; torch.backends.cuda.matmul.allow_tf32 = False
    nb = Path(a.notebook).resolve(); os.chdir(nb.parent)
    ns = {'__name__': '__device_pairs__'}; exec(compile(prefix(nb, a.upto), str(nb), 'exec'), ns)
    lo, hi = map(int, a.pairs.split(':'))
    for i in range(lo, hi):
        if (i - lo) % a.procs != a.k: continue
        if time.time() > a.stop_at: print(f"w{a.k}: deadline, stopping before pair {i}", flush=True); break
        t = time.perf_counter(); eval(a.call, ns, {'i': i})
        print(f"w{a.k} pair {i}: {time.perf_counter() - t:.0f} s {time.strftime('%H:%M:%S')}", flush=True)

def pack(src:Path, out:Path)->int:
    "Every JSON result under `src` into out/pairs.tgz (written whole, then renamed); how many."
    fs = sorted(src.rglob('*.json')) if src.exists() else []
    tmp = out / '.pairs.tgz'
    with tarfile.open(tmp, 'w:gz') as tf:
        for f in fs: tf.add(f, arcname=str(f.relative_to(src)))
    os.replace(tmp, out / 'pairs.tgz'); return len(fs)

def unpack(tgz:str, sub:str):
    "The results into data_root()/sub; a file already there is kept (the cache is never overwritten)."
    from lmc_nb.data import data_root
    dst = data_root() / sub; new = kept = 0
    with tarfile.open(tgz) as tf:
        for m in tf.getmembers():
            if not m.isfile() or m.name.startswith('/') or '..' in Path(m.name).parts: raise SystemExit(f"{tgz}: refusing {m.name!r}")
            p = dst / m.name
            if p.exists(): kept += 1; continue
            p.parent.mkdir(parents=True, exist_ok=True); tmp = p.with_name('.' + p.name + '.tmp')
            tmp.write_bytes(tf.extractfile(m).read()); os.replace(tmp, p); new += 1
    print(f"unpacked {new} results into {dst} ({kept} already there, kept)")

def run(a):
    "The parent: workers, packing every 10 s, and the deadline."
    env = {**os.environ, 'LMC_SCALE': a.scale, 'LMC_DEVICE': a.device, 'OMP_NUM_THREADS': '1', 'PYTHONUNBUFFERED': '1'}
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lmc_nb.data import data_root
    prefix(Path(a.notebook), a.upto)                                   # refused here, before any worker starts
    out, src, t0 = Path(a.out), data_root() / a.pack, time.time(); out.mkdir(parents=True, exist_ok=True)
    stop_at = t0 + a.deadline - 60                                     # no new pair in the last minute
    args = [sys.executable, __file__, 'work', a.notebook, '--upto', a.upto, '--call', a.call, '--pairs', a.pairs, '--procs', str(a.procs), '--stop-at', str(stop_at)]
    procs = [subprocess.Popen(args + ['--k', str(k)], env=env) for k in range(a.procs)]
    while any(p.poll() is None for p in procs) and time.time() < t0 + a.deadline - 15:
        time.sleep(10); pack(src, out)
    for p in procs:
        if p.poll() is None: p.kill()
    n = pack(src, out); bad = [k for k, p in enumerate(procs) if p.returncode not in (0, None, -9)]
    print(f"done: {n} results under {src} packed into {out / 'pairs.tgz'}, {time.time() - t0:.0f} s" + (f"; workers {bad} failed" if bad else ''), flush=True)
    if bad: sys.exit(1)

def selftest():
    "CPU, smoke scale (CI): 24c's own `bars` for two VGG pairs in two workers, packed, unpacked elsewhere byte for byte; a missing stop cell is refused."
    import tempfile, shutil
    repo, tmp = Path(__file__).resolve().parents[1], Path(tempfile.mkdtemp())
    nb = str(repo / 'nbs' / '24c_lewc_cnn_settle.ipynb')
    args = [sys.executable, __file__, 'run', nb, '--upto', '## The looks', '--call', "bars('vgg11', CFG['cnns']['vgg11'], i)", '--pairs', '3:5',
            '--procs', '2', '--pack', 'lewc_width/bars', '--deadline', '600', '--scale', 'smoke', '--device', 'cpu', '--out', str(tmp / 'out')]
    subprocess.run(args, env={**os.environ, 'LMC_DATA': str(tmp / 'there')}, check=True, capture_output=True)
    subprocess.run([sys.executable, __file__, 'unpack', str(tmp / 'out' / 'pairs.tgz'), 'lewc_width/bars'], env={**os.environ, 'LMC_DATA': str(tmp / 'here')}, check=True, capture_output=True)
    there = {f.relative_to(tmp / 'there'): f.read_bytes() for f in (tmp / 'there' / 'lewc_width' / 'bars').glob('vgg11-*.json')}
    here = {f.relative_to(tmp / 'here'): f.read_bytes() for f in (tmp / 'here' / 'lewc_width' / 'bars').glob('vgg11-*.json')}
    assert len(there) == 2 and here == there, (sorted(map(str, there)), sorted(map(str, here)))
    assert all('acc' in json.loads(b)['weight'] and 'where' not in json.loads(b) for b in here.values())   # measured on a CPU: no GPU note
    r = subprocess.run([sys.executable, __file__, 'run', nb, '--upto', 'no such cell', '--call', 'i', '--pairs', '0:1', '--pack', 'x', '--out', str(tmp / 'o2')],
                       capture_output=True, text=True)
    assert r.returncode != 0 and 'no cell contains' in r.stderr, r.stderr
    shutil.rmtree(tmp); print(f"selftest: {len(here)} pairs measured by 2 workers come back byte for byte; a missing stop cell is refused")

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('cmd', choices=['run', 'work', 'unpack', 'selftest']); ap.add_argument('notebook', nargs='?', help='the notebook (run, work) or the .tgz (unpack)')
    ap.add_argument('dir', nargs='?', help='unpack: the cache folder under data_root()')
    ap.add_argument('--upto'); ap.add_argument('--call'); ap.add_argument('--pairs'); ap.add_argument('--pack')
    ap.add_argument('--procs', type=int, default=12); ap.add_argument('--deadline', type=float, default=480)
    ap.add_argument('--scale', default='cpu'); ap.add_argument('--device', default='cuda'); ap.add_argument('--out', default=os.environ.get('OUT', 'device_out'))
    ap.add_argument('--k', type=int, default=0); ap.add_argument('--stop-at', type=float, default=float('inf'))
    a = ap.parse_args()
    if a.cmd == 'selftest': selftest()
    elif a.cmd == 'unpack': unpack(a.notebook, a.dir or ap.error('unpack needs DIR'))
    else:
        for f in ('upto', 'call', 'pairs') + (('pack',) if a.cmd == 'run' else ()):
            if getattr(a, f) is None: ap.error(f"{a.cmd} needs --{f}")
        (work if a.cmd == 'work' else run)(a)
