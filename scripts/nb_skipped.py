"""Print the notebooks `nbdev_test` runs nothing of: every code cell beyond imports and the export call carries one
of the test flags (settings.ini `tst_flags`, e.g. `#| slow`) or `#| eval: false`. Used by scripts/test.sh."""
import ast, json, re
from nbdev.config import get_config
from nbdev.doclinks import nbglob

flags = get_config().get('tst_flags', '').split()
flag_re = re.compile(r'^\s*#\s*\|\s*(' + '|'.join(map(re.escape, flags + ['eval: false'])) + r')\b', re.M)

def trivial(src:str)->bool:
    "A cell that only imports or exports: running it tests nothing."
    try: body = ast.parse(src).body
    except SyntaxError: return False          # magics and the like: count as real work
    return all(isinstance(s, (ast.Import, ast.ImportFrom)) or
               (isinstance(s, ast.Expr) and 'nbdev_export' in ast.unparse(s)) for s in body)

def code_cells(nb)->list:
    "A notebook's code cells' sources."
    return [''.join(c['source']) for c in json.load(open(nb))['cells'] if c['cell_type'] == 'code']

def notebooks()->list:
    "The notebooks nbdev_test walks (folders and files starting with _ or . left out)."
    return sorted(nbglob(get_config().path('nbs_path'), skip_folder_re='^[_.]', skip_file_re='^[_.]'))

if __name__ == '__main__':
    for nb in notebooks():
        if not any(not flag_re.search(s) and not trivial(s) for s in code_cells(nb)): print(nb)
