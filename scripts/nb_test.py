"""`nbdev_test` for every notebook, each in its own process, with the per-notebook timings printed (slowest first).

    python scripts/nb_test.py [--flags "slow"] [--timeout S] [PATH ...]   # PATH: notebooks or folders (default: nbs/)

nbdev 2.4's `nbdev_test` runs notebooks in a shared process pool: a native crash in one (a segfault in a C library, an
abort on a corrupted heap) breaks the pool, and every notebook then counts as failed. Here each notebook runs nbdev's own
`test_nb` (same skip flags, same working folder) in a child process of its own, two at a time: a crash is that notebook
failing, with its signal, and the rest go on; a notebook that runs past `--timeout` is stopped and counts as failed.
Prints the timings, then the failures in nbdev's words (`nbdev Tests Failed On The Following Notebooks:`, one per line,
as `scripts/test.sh` counts them) and exits 1 when any failed.
"""
import argparse, signal, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from fastcore.basics import num_cpus
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.test import _keep_file

CHILD = """import sys
from pathlib import Path
from nbdev.test import test_nb
ok, _ = test_nb(Path(sys.argv[1]), skip_flags=sys.argv[2].split(), force_flags=sys.argv[3].split(), basepath=sys.argv[4])
sys.exit(0 if ok else 1)"""

def how(rc:int)->str:
    "A child's exit in words: '' for a pass, the signal for a native crash."
    if rc == 0: return ''
    if rc < 0:
        try: return f'crashed ({signal.Signals(-rc).name})'
        except ValueError: return f'crashed (signal {-rc})'
    return 'failed'

def run_one(f, cfg, flags:str, timeout:float)->tuple:
    "Test notebook `f` in a child process: (what went wrong or '', seconds, its output)."
    t0 = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, '-c', CHILD, str(f), cfg.tst_flags, flags, str(cfg.config_path)], cwd=cfg.nbs_path,
                           capture_output=True, text=True, timeout=timeout)
        return how(r.returncode), time.perf_counter() - t0, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b'') + (e.stderr or b'')
        return f'timed out after {timeout:.0f} s', time.perf_counter() - t0, out.decode(errors='replace') if isinstance(out, bytes) else out

def main(paths=(), flags:str='', timeout:float=3600, workers:int=None)->int:
    cfg = get_config()
    files = [f.absolute() for p in (paths or [None]) for f in sorted(nbglob(p, as_path=True)) if _keep_file(f, '.notest')]
    if not files: print('No files were eligible for testing'); return 0
    n = workers or min(num_cpus(), 8)
    def one(f):
        bad, t, out = run_one(f, cfg, flags, timeout)
        if bad:                                                  # a failure's output, as nbdev prints it, once the notebook is done
            sys.stderr.write(out + (f"\n{f.name}: {bad}\n" if bad != 'failed' else '')); sys.stderr.flush()
        return bad, t
    with ThreadPoolExecutor(n) as ex: results = list(ex.map(one, files))
    print('Per-notebook time (s), slowest first:')
    for f, (bad, t) in sorted(zip(files, results), key=lambda o: -o[1][1]): print(f'  {f.name}: {t:.0f} secs' + (f'  ({bad})' if bad else ''))
    failed = [(f, bad) for f, (bad, _) in zip(files, results) if bad]
    if not failed: print('Success.'); return 0
    lines = '\n\t'.join(f.name + ('' if bad == 'failed' else f'  [{bad}]') for f, bad in failed)
    sys.stderr.write(f"\nnbdev Tests Failed On The Following Notebooks:\n{'=' * 50}\n\t{lines}\n"); return 1

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('paths', nargs='*'); ap.add_argument('--flags', default='')
    ap.add_argument('--timeout', type=float, default=3600, help='seconds one notebook may run (default 3600)')
    ap.add_argument('--workers', type=int, default=None, help='notebooks at once (default: the CPU count, at most 8)')
    a = ap.parse_args(); sys.exit(main(a.paths, a.flags, a.timeout, a.workers))
