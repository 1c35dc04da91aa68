"""Kill -9 a long run at random moments until it finishes, then check it against an uninterrupted run (issue 37, "Faults").

    python scripts/kill9.py sweep     [--kills 10] [--seed 0]   # a vectorised `lmc sweep`
    python scripts/kill9.py notebook  [--kills 10] [--seed 0]   # a reproduction (20_ni_q1q2_fashion at its smoke scale)

Each target runs once uninterrupted (the reference), then again in a fresh data folder, killed with SIGKILL at a random
moment `--kills` times and restarted after each kill, then left to finish. The script checks and prints:
- every result is identical to the reference: each model's tensors (bit for bit), each run's test metrics, each cached
  JSON result, and (notebook) the rendered claims table;
- nothing finished is trained twice: a model file, a run's metrics.json or a cached result, once written, is never
  written again by a later restart (same bytes, same modification time);
- how many kills landed, and the time lost to them.
Not run by the tests (minutes); its figures are reported in the closing notes.
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRID = dict(scheme=['dense', 'wasym'], n=20000, width=64, depth=2, epochs=100, seed=[0, 1, 2, 3])
ENV = dict(os.environ, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1', PYTHONUNBUFFERED='1')


def command(target: str, work: Path) -> list:
    if target == 'sweep':
        return [shutil.which('lmc'), 'sweep', str(work / 'grid.json'), '--root', str(work / 'zoo'),
                '--backend', 'vectorised', '--threads', '1', '--quiet']
    return ['jupyter', 'nbconvert', '--to', 'notebook', '--execute', str(ROOT / 'nbs' / '20_ni_q1q2_fashion.ipynb'),
            '--output', str(work / 'out.ipynb'), '--ExecutePreprocessor.timeout=-1']


def finished_files(work: Path) -> dict:
    """What counts as finished work, with a fingerprint that must never change once it is there:
    a zoo run with metrics.json (its metrics and its model); a per-epoch training checkpoint at its epoch (its weights may
    change only when its epoch count grows); a cached result file. Work in progress (a group's models saved before the
    group is marked complete, a run's config.json) is rewritten by design and is not counted."""
    import hashlib
    h = lambda f: hashlib.sha1(f.read_bytes()).hexdigest()
    out = {}
    for m in work.rglob('metrics.json'):
        out[str(m.relative_to(work))] = h(m)
        if (m.parent / 'model' / 'model.safetensors').exists(): out[str(m.parent.relative_to(work)) + '/model'] = h(m.parent / 'model' / 'model.safetensors')
    for c in work.rglob('config.json'):
        try: ep = json.loads(c.read_text()).get('epoch')
        except (ValueError, OSError): continue
        if ep is not None and (c.parent / 'model.safetensors').exists() and 'runs' not in c.parts:
            out[f'{c.parent.relative_to(work)}@epoch{ep}'] = h(c.parent / 'model.safetensors')
    for f in work.rglob('*.json'):                                          # cached_json results: named by what they hold
        if f.name not in ('metrics.json', 'config.json', 'error.json', 'zoo.json', 'grid.json') and 'runs' not in f.parts and '.tmp' not in f.name:
            out[str(f.relative_to(work))] = h(f)
    return out


def results(work: Path, target: str) -> dict:
    "What must be identical to the reference: every model's tensors, every run's metrics (provenance and time aside), the claims table."
    from safetensors.torch import load_file
    out = {}
    for f in sorted(work.rglob('model.safetensors')):
        if any(p in f.parts for p in ('ckpt', 'ckpt.old', 'groups')): continue
        out[str(f.relative_to(work))] = {k: v for k, v in load_file(str(f)).items()}
    for f in sorted(work.rglob('metrics.json')):
        m = json.loads(f.read_text()); [m.pop(k, None) for k in ('trained_by', 'train_seconds')]
        out[str(f.relative_to(work))] = m
    if target == 'notebook':
        nb = json.loads((work / 'out.ipynb').read_text())
        out['claims table'] = [''.join(o['data']['text/markdown']) for c in nb['cells'] if c['cell_type'] == 'code'
                               for o in c.get('outputs', []) if 'text/markdown' in o.get('data', {}) and '| claim |' in ''.join(o['data']['text/markdown'])]
    return out


def same(a, b) -> bool:
    import torch
    if isinstance(a, dict): return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, torch.Tensor): return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return a == b


def run_once(target: str, work: Path) -> float:
    t = time.perf_counter()
    subprocess.run(command(target, work), env=dict(ENV, LMC_DATA=str(work / 'cache')), cwd=ROOT / 'nbs', check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('target', choices=['sweep', 'notebook'])
    ap.add_argument('--kills', type=int, default=10)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--first', type=float, default=3.0, help='earliest kill, seconds after a (re)start')
    ap.add_argument('--spread', type=float, default=6.0, help='kills land uniformly in [first, first + spread] seconds after a (re)start')
    a = ap.parse_args()
    rng, base = random.Random(a.seed), Path(tempfile.mkdtemp(prefix='kill9-'))
    ref, kil = base / 'ref', base / 'kill'
    for w in (ref, kil):
        w.mkdir(); (w / 'grid.json').write_text(json.dumps(GRID))
    t_ref = run_once(a.target, ref)
    print(f"{a.target}: uninterrupted run {t_ref:.1f} s", flush=True)
    kills, landed, t0, seen, rewritten = 0, 0, time.perf_counter(), {}, []
    while True:
        p = subprocess.Popen(command(a.target, kil), env=dict(ENV, LMC_DATA=str(kil / 'cache')), cwd=ROOT / 'nbs',
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        if kills < a.kills:
            at = rng.uniform(a.first, a.first + a.spread)              # a random moment after the (re)start
            try: p.wait(timeout=at); code = p.returncode                          # it finished first
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL); p.wait(); kills += 1; code = None
        else: code = p.wait()
        now = finished_files(kil)
        rewritten += [f for f, v in seen.items() if f in now and now[f] != v]   # finished work written again
        lost = [f for f in seen if f not in now and '@epoch' not in f]          # (an epoch checkpoint moves on to the next epoch)
        if lost: sys.exit(f"finished work disappeared after a kill: {lost[:3]}")
        landed += code is None and len(now) > len(seen)
        seen.update({f: v for f, v in now.items() if f not in seen})
        print(f"  {'killed' if code is None else f'exit {code}'}: {len(now)} finished files", flush=True)
        if code is not None:
            if code != 0: sys.exit(f"the run failed with exit {code}")
            break                                                                   # finished (after `kills` kills, or earlier)
    t_kill = time.perf_counter() - t0
    r_ref, r_kil = results(ref, a.target), results(kil, a.target)
    n_models = sum(isinstance(v, dict) and v and not isinstance(next(iter(v.values())), (int, float, str)) for v in r_ref.values())
    print(f"{a.target}: {kills} kills ({landed} after new work was finished), {t_kill:.1f} s in all vs {t_ref:.1f} s uninterrupted")
    print(f"identical to the uninterrupted run: {same(r_ref, r_kil)} ({len(r_ref)} results compared, {n_models} models bit for bit)")
    print(f"finished work written again by a restart: {len(rewritten)} files {rewritten[:5]}")
    shutil.rmtree(base, ignore_errors=True)
    sys.exit(0 if same(r_ref, r_kil) and not rewritten else 1)


if __name__ == '__main__':
    main()
