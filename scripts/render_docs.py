"""Render the processed notebooks (`_proc/`, from `nbdev_proc_nbs`) to HTML as a reader sees them, and check every page.

    python scripts/render_docs.py PROC_DIR OUT_DIR [--screenshots NAME,NAME]

Quarto cannot be installed here, so this is the local stand-in for the hosted site: nbconvert writes one HTML page per
notebook with MathJax from Debian's `libjs-mathjax` (offline), headless Chromium loads each page, lets MathJax typeset
it and dumps the resulting DOM, and the check asks of every page:

- it rendered (nbconvert and Chromium both succeeded);
- **math**: every display equation (`$$ … $$`) and inline formula of the markdown became typeset MathJax, none an error
  (MathJax marks a TeX error with `merror`, an undefined macro in red);
- **figures**: every image a cell outputs is on the page as an `<img>`.

Prints one line per page (equations, formulas, figures) and exits 1 if any page fails. `--screenshots` also writes
PNG screenshots of the named pages (a visual check; CI keeps them as artifacts when asked).
"""
import json, re, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
import yaml
from pathlib import Path

MATHJAX = Path('/usr/share/javascript/mathjax/MathJax.js')

def _chromium() -> str:
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        if path := shutil.which(name): return path
    raise SystemExit('FAIL: headless Chromium is needed (Debian: apt-get install chromium)')

def expected(nb: dict) -> dict:
    "What a page must show: display equations and inline formulas in markdown cells, images in outputs."
    md = '\n'.join(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'markdown')
    md = re.sub(r'```.*?```', '', md, flags=re.S)                              # code blocks are not math
    md = re.sub(r'`[^`\n]*`', '', md)
    display = len(re.findall(r'\$\$.+?\$\$', md, flags=re.S))
    inline = len(re.findall(r'(?<![\\$])\$(?!\$)[^$\n]+?(?<![\\$])\$(?!\$)', re.sub(r'\$\$.+?\$\$', '', md, flags=re.S)))
    imgs = sum(1 for c in nb['cells'] if c['cell_type'] == 'code' for o in c.get('outputs', [])
               if {'image/png', 'image/svg+xml', 'image/jpeg'} & set(o.get('data', {})))
    return dict(display=display, inline=inline, images=imgs)

def _as_quarto(nb):
    "What Quarto does with nbdev's directives, for nbconvert: front matter as the title, `echo: false` hides code."
    import nbformat
    cells = []
    for c in nb.cells:
        src = c.source
        if c.cell_type == 'raw' and src.startswith('---'):                         # the front matter
            meta = yaml.safe_load(src.strip().strip('-')) or {}
            title, desc = meta.get('title', ''), meta.get('description', '')
            cells.append(nbformat.v4.new_markdown_cell(f'# {title}\n\n> {desc}' if desc else f'# {title}')); continue
        if c.cell_type == 'code':
            opts = {l[3:].split(':')[0].strip() for l in src.splitlines() if l.startswith('#|')}
            c.source = '\n'.join(l for l in src.splitlines() if not l.startswith('#|'))
            if 'echo' in opts and re.search(r'^#\|\s*echo:\s*false', src, flags=re.M):
                c.metadata.setdefault('tags', []).append('remove_input')
            for o in c.get('outputs', []):                                         # show_doc's Quarto link attributes
                if 'text/markdown' in o.get('data', {}):
                    o['data']['text/markdown'] = re.sub(r'\{target="_blank"[^}]*\}', '', o['data']['text/markdown'])
        cells.append(c)
    nb.cells = cells
    return nb

def to_html(nb_path: Path, out: Path) -> Path:
    "nbconvert's HTML page with MathJax loaded from the local file, code prompts off, `echo: false` inputs hidden."
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor
    import nbformat
    ex = HTMLExporter(mathjax_url=MATHJAX.as_uri() + '?config=TeX-AMS_CHTML', exclude_input_prompt=True,
                      exclude_output_prompt=True)
    ex.register_preprocessor(TagRemovePreprocessor(remove_input_tags={'remove_input'}), enabled=True)
    body, _ = ex.from_notebook_node(_as_quarto(nbformat.read(nb_path, as_version=4)))
    page = out / (nb_path.stem + '.html'); page.write_text(body); return page

def dom(page: Path, chromium: str, budget_ms: int = 20000) -> str:
    "The page's DOM after its scripts (MathJax) ran."
    r = subprocess.run([chromium, '--headless', '--no-sandbox', '--disable-gpu', '--allow-file-access-from-files',
                        f'--virtual-time-budget={budget_ms}', '--dump-dom', page.as_uri()],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0: raise RuntimeError(f'chromium failed on {page.name}: {r.stderr[-500:]}')
    return r.stdout

def rendered(html: str) -> dict:
    "What MathJax typeset on the page, and the images on it."
    return dict(display=len(re.findall(r'<script type="math/tex; mode=display"', html)),
                inline=len(re.findall(r'<script type="math/tex"', html)),
                typeset=len(re.findall(r'class="MJX_Assistive_MathML|class="mjx-chtml', html)),
                errors=len(re.findall(r'<merror|mathcolor="red"', html)),   # a TeX error; an undefined macro (in the MathML copy)
                images=len(re.findall(r'<img[^>]+src="data:image/', html)))

def check(nb_path: Path, out: Path, chromium: str) -> tuple:
    "One line about the page, and its problems (empty when it is fine)."
    want = expected(json.loads(nb_path.read_text()))
    got = rendered(dom(to_html(nb_path, out), chromium))
    bad = []
    if got['display'] < want['display']: bad.append(f"{want['display']} display equations, {got['display']} typeset")
    if got['inline'] < want['inline']: bad.append(f"{want['inline']} inline formulas, {got['inline']} typeset")
    if (want['display'] + want['inline']) and not got['typeset']: bad.append('MathJax did not run')
    if got['errors']: bad.append(f"{got['errors']} TeX errors")
    if got['images'] < want['images']: bad.append(f"{want['images']} figures, {got['images']} on the page")
    return (f"{'ok  ' if not bad else 'FAIL'} {nb_path.name:32s} {got['display']:3d} equations {got['inline']:4d} formulas "
            f"{got['images']:3d} figures" + (': ' + '; '.join(bad) if bad else '')), bad

def screenshot(page: Path, chromium: str, png: Path):
    subprocess.run([chromium, '--headless', '--no-sandbox', '--disable-gpu', '--allow-file-access-from-files',
                    '--virtual-time-budget=20000', '--window-size=1200,2400', f'--screenshot={png}', page.as_uri()],
                   capture_output=True, timeout=300, check=True)

def main(proc: str, out: str, shots: str = '', workers: int = 3):
    if not MATHJAX.exists(): raise SystemExit('FAIL: MathJax is needed offline (Debian: apt-get install libjs-mathjax)')
    proc, out, chromium = Path(proc).resolve(), Path(out).resolve(), _chromium()
    out.mkdir(parents=True, exist_ok=True)
    nbs = sorted(p for p in proc.glob('*.ipynb') if not p.name.startswith(('_', '.')))
    if not nbs: raise SystemExit(f'FAIL: no notebooks in {proc} (run nbdev_proc_nbs first)')
    failed = []
    with ThreadPoolExecutor(workers) as ex:                      # Chromium waits on MathJax more than it computes
        for p, (line, bad) in zip(nbs, ex.map(lambda p: check(p, out, chromium), nbs)):
            print(line, flush=True)
            if bad: failed.append(p.name)
    for name in filter(None, shots.split(',')): screenshot(out / f'{name}.html', chromium, out / f'{name}.png')
    print(f'{len(nbs) - len(failed)} of {len(nbs)} pages render with their math and figures')
    if failed: print('FAIL:', ', '.join(failed)); sys.exit(1)

if __name__ == '__main__':
    import argparse
    ap = argparse.ArgumentParser(description='Render and check the documentation pages.')
    ap.add_argument('proc'); ap.add_argument('out'); ap.add_argument('--screenshots', default='')
    a = ap.parse_args(); main(a.proc, a.out, a.screenshots)
