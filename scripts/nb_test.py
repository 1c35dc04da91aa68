"""`nbdev_test` for every notebook, with the per-notebook timings printed (slowest first) even when some fail.

    python scripts/nb_test.py [--flags "slow"] [PATH]   # PATH: one notebook, or a folder (default: nbs/)

nbdev 2.4's `nbdev_test --timing` exits on the first report of a failure before it prints its timings; this runs the
same `test_nb` on the same notebooks (same skip flags, same working folder, in parallel), prints the timings, then the
failures in nbdev's words (`nbdev Tests Failed On The Following Notebooks:`) and exits 1 when any failed.
"""
import argparse, os, sys
from fastcore.foundation import working_directory
from fastcore.parallel import parallel
from fastcore.basics import num_cpus
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.test import test_nb, _keep_file

def main(path=None, flags=''):
    cfg = get_config()
    files = [f.absolute() for f in sorted(nbglob(path, as_path=True)) if _keep_file(f, '.notest')]
    if not files: print('No files were eligible for testing'); return 0
    with working_directory(cfg.nbs_path):
        results = parallel(test_nb, files, skip_flags=cfg.tst_flags.split(), force_flags=flags.split(),
                           n_workers=0 if len(files) == 1 else min(num_cpus(), 8), basepath=cfg.config_path, pause=0.01)
    passed, times = zip(*results)
    print('Per-notebook time (s), slowest first:')
    for f, t in sorted(zip(files, times), key=lambda o: -o[1]): print(f'  {f.name}: {t:.0f} secs')
    if all(passed): print('Success.'); return 0
    failed = '\n\t'.join(f.name for ok, f in zip(passed, files) if not ok)
    sys.stderr.write(f"\nnbdev Tests Failed On The Following Notebooks:\n{'=' * 50}\n\t{failed}\n"); return 1

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('path', nargs='?'); ap.add_argument('--flags', default='')
    a = ap.parse_args(); sys.exit(main(a.path, a.flags))
