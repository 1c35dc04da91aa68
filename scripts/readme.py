"""README.md from nbs/index.ipynb (what `nbdev_readme` does with Quarto, which cannot be installed here).

    python scripts/readme.py           # write README.md
    python scripts/readme.py --check   # exit 1 (with a diff) when README.md is not what index.ipynb says

Markdown cells are copied; a visible code cell becomes a ```python block and its printed output a plain block; `#| hide`
cells, asserts-only cells and figure cells (GitHub would show the code without its picture) are left out; links to notebooks point at the documentation site's pages.
"""
import difflib, json, re, sys
from configparser import ConfigParser
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def _site() -> str:
    c = ConfigParser(); c.read(root / 'settings.ini'); d = c['DEFAULT']
    return d['doc_host'].rstrip('/') + '/' + d['doc_baseurl'].strip('/') + '/'

def _directives(src: str) -> set:
    return {l[3:].strip().split()[0] for l in src.splitlines() if l.startswith('#|') and l[3:].strip()}

def _code(src: str) -> str:
    return '\n'.join(l for l in src.splitlines() if not l.startswith('#|')).strip()

def _output(cell) -> str:
    out = []
    for o in cell.get('outputs', []):
        if o.get('output_type') == 'stream' and o.get('name') == 'stdout': out.append(''.join(o['text']))
        elif 'text/markdown' in o.get('data', {}): out.append(''.join(o['data']['text/markdown']))
    return ''.join(out).rstrip()

def readme(nb_path=root / 'nbs' / 'index.ipynb') -> str:
    site, parts = _site(), []
    for c in json.loads(Path(nb_path).read_text())['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            parts.append(re.sub(r'\]\((\w+)\.ipynb\)', lambda m: f']({site}{m.group(1)}.html)', src.strip()))
        elif c['cell_type'] == 'code' and not (_directives(src) & {'hide', 'export', 'exporti', 'default_exp'}):
            code = _code(src)
            if not code or all(l.startswith('assert') for l in code.splitlines()): continue
            if any('image/png' in o.get('data', {}) for o in c.get('outputs', [])) and not _output(c): continue   # a figure
            parts.append(f'```python\n{code}\n```')
            if out := _output(c): parts.append(f'```\n{out}\n```')
    return '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    want, path = readme(), root / 'README.md'
    if '--check' not in sys.argv: path.write_text(want); sys.exit(0)
    have = path.read_text() if path.exists() else ''
    if have == want: print('ok: README.md is what nbs/index.ipynb says'); sys.exit(0)
    sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), 'README.md', 'from index.ipynb'))
    print('FAIL: README.md differs from nbs/index.ipynb; run python scripts/readme.py'); sys.exit(1)
