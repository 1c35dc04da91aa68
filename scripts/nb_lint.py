"""Notebook rules nbdev does not check itself (run by scripts/test.sh).

Imports live in import cells: `nbdev_proc_nbs` (the docs build) executes every code cell that has an `import` or
`from ... import` line -- hidden test cells included -- with only the other such cells run before it, so a test cell
that imports something and then uses a name an ordinary cell defined breaks the docs build while `nbdev_test` passes.
So a notebook imports in its export cells and in one setup cell (its first importing cell, hidden, which runs before
anything else); any later cell with an import line must hold nothing but imports, directives and comments. The index
(the README's tour, whose imports a reader must see) is exempt: it runs top to bottom in the docs build as written.
That rule fails the run.

The literate form is a mirror, not a gate: each exported cell over 25 lines and each module over 330 lines is printed
as a warning line with its name, and the counts close the output (scripts/test.sh repeats them before its last line).
A cell's lines are its non-blank lines, leaving out `#|` directives and import lines; a module's lines are all of its
lines (`_modidx.py` aside). A long cell whose markdown cell just above says why it "stays whole" is marked so.
"""
import json, re, sys
from pathlib import Path

CELL_MAX, MODULE_MAX = 25, 330

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


_export = re.compile(r'#\|\s*export')
_name = re.compile(r'^(?:def|class)\s+(\w+)|^@patch\s*\n\s*def\s+(\w+)|^(\w+)\s*=', re.M)


def cell_lines(src:str)->int:
    "An exported cell's length: non-blank lines, leaving out `#|` directives and import lines."
    return sum(1 for l in src.splitlines() if l.strip() and not l.startswith('#|') and not _imp.match(l))


def long_cells(path: Path) -> list:
    "(name, lines, kept_whole) of each exported cell over CELL_MAX lines; kept_whole: the markdown above says why."
    out, cells = [], json.loads(path.read_text())['cells']
    for i, c in enumerate(cells):
        src = ''.join(c['source'])
        if c['cell_type'] != 'code' or not any(_export.match(l) for l in src.splitlines() if l.startswith('#|')): continue
        n = cell_lines(src)
        if n <= CELL_MAX: continue
        m = _name.search(src); name = next((g for g in m.groups() if g), '?') if m else '?'
        above = ''.join(cells[i - 1]['source']) if i and cells[i - 1]['cell_type'] == 'markdown' else ''
        out.append((f'{path.name} cell {i} `{name}`', n, 'stays whole' in above.lower()))
    return out


def long_modules(lib: Path) -> list:
    "(module, lines) of each module over MODULE_MAX lines."
    return [(str(p), n) for p in sorted(lib.glob('*.py')) if p.name != '_modidx.py'
            and (n := len(p.read_text().splitlines())) > MODULE_MAX]


if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path('nbs').glob('*.ipynb'))
    errs = [e for p in paths for e in problems(p)]
    print('\n'.join(errs) if errs else f'ok: {len(paths)} notebooks keep imports in import cells')
    cells, mods = [r for p in paths for r in long_cells(p)], long_modules(Path('lmc_nb'))
    for where, n, whole in cells:
        print(f'warning: {where}: {n} lines, over {CELL_MAX}' + (' (kept whole: the markdown above says why)' if whole else ''))
    for where, n in mods: print(f'warning: module {where}: {n} lines, over {MODULE_MAX}')
    print(f'literate form: {len(cells)} exported cells over {CELL_MAX} lines ({sum(w for *_, w in cells)} kept whole '
          f'with a reason), {len(mods)} modules over {MODULE_MAX} lines')
    sys.exit(1 if errs else 0)
