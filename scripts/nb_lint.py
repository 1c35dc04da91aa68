"""Notebook rules nbdev does not check itself (run by scripts/test.sh).

Imports live in import cells: `nbdev_proc_nbs` (the docs build) executes every code cell that has an `import` or
`from ... import` line -- hidden test cells included -- with only the other such cells run before it, so a test cell
that imports something and then uses a name an ordinary cell defined breaks the docs build while `nbdev_test` passes.
So a notebook imports in its export cells and in one setup cell (its first importing cell, hidden, which runs before
anything else); any later cell with an import line must hold nothing but imports, directives and comments. The index
(the README's tour, whose imports a reader must see) is exempt: it runs top to bottom in the docs build as written.
"""
import json, re, sys
from pathlib import Path

_imp = re.compile(r'^\s*(from\s+\S+\s+)?import\s')


def problems(path: Path) -> list:
    out, setup = [], False
    if path.name == 'index.ipynb': return out
    for i, c in enumerate(json.loads(path.read_text())['cells']):
        if c['cell_type'] != 'code': continue
        lines = ''.join(c['source']).splitlines()
        if not any(_imp.match(l) for l in lines): continue
        if any(re.match(r'#\|\s*export', l) for l in lines): continue
        if not setup: setup = True; continue                                  # the notebook's setup cell
        other = [l for l in lines if l.strip() and not l.lstrip().startswith('#') and not _imp.match(l)
                 and not l.startswith((' ', '\t', ')'))]                      # continuation lines of a wrapped import
        if other: out.append(f'{path}: cell {i} mixes imports with code (first: {other[0][:60]!r}); move the import '
                             'to the notebook\'s import cell -- nbdev_proc_nbs runs every cell that imports')
    return out


if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path('nbs').glob('*.ipynb'))
    errs = [e for p in paths for e in problems(p)]
    print('\n'.join(errs) if errs else f'ok: {len(paths)} notebooks keep imports in import cells')
    sys.exit(1 if errs else 0)
