"""Print the notebooks whose tested cells (no test flag such as `#| slow`, no `#| eval: false`) train or probe in the
channels-last memory layout: scripts/test.sh runs them again with oneDNN capped to AVX2, so the kernels an AVX2-only CPU
runs are exercised on any CI machine (nbs/02d_layout.ipynb). Derived, not hand-kept: a notebook that starts training
channels-last joins the capped run by itself."""
import re, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from nb_skipped import flag_re, code_cells, notebooks     # the test flags as nbdev_test reads them

uses = re.compile(r'channels_last\s*=\s*(True|cl\b)|safe_layout\(|probe_convs\(|memory_format\s*=\s*torch\.channels_last')

for nb in notebooks():
    if any(not flag_re.search(s) and uses.search(s) for s in code_cells(nb)): print(nb)
