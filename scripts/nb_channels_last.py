"""Print the notebooks whose tested cells (no test flag such as `#| slow`, no `#| eval: false`) train or probe in the
channels-last memory layout: scripts/test.sh runs them again with oneDNN capped to AVX2, so the kernels an AVX2-only CPU
runs are exercised on any CI machine (nbs/02d_layout.ipynb). Derived, not hand-kept: a notebook that starts training
channels-last joins the capped run by itself."""
import json, re
from nbdev.config import get_config
from nbdev.doclinks import nbglob

flags = get_config().get('tst_flags', '').split()
flag_re = re.compile(r'^\s*#\s*\|\s*(' + '|'.join(map(re.escape, flags + ['eval: false'])) + r')\b', re.M)
uses = re.compile(r'channels_last\s*=\s*(True|cl\b)|safe_layout\(|probe_convs\(|memory_format\s*=\s*torch\.channels_last')

for nb in sorted(nbglob(get_config().path('nbs_path'), skip_folder_re='^[_.]', skip_file_re='^[_.]')):
    cells = [''.join(c['source']) for c in json.load(open(nb))['cells'] if c['cell_type'] == 'code']
    if any(not flag_re.search(s) and uses.search(s) for s in cells): print(nb)
