"""Job start-up: the workflow scripts' modules import no heavy library their jobs do not use.

Snakemake starts one Python process per job, so whatever a script's modules import at
module level is paid by every job of its rule, before any work
(``benchmarks/job_startup.py`` measures it: scipy.stats about 1 s of CPU, Dask 0.6 s on
top of pandas and Zarr, Zarr 0.2-0.4 s). Checked by structure, not by timing: the
module-level imports of a group of scripts run in one fresh interpreter, which records
the psybench module that first imported each forbidden library.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from job_startup import script_imports  # noqa: E402

# which psybench line first imported a forbidden library (a meta path finder that only watches)
SPY = """
import json, sys, traceback
FORBIDDEN = {forbidden!r}
first = {{}}
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name in FORBIDDEN and name not in first:
            frames = [f for f in traceback.extract_stack() if "psybench" in f.filename]
            first[name] = f"{{frames[-1].filename}}:{{frames[-1].lineno}}" if frames else "?"
sys.meta_path.insert(0, Spy())
{imports}
print(json.dumps(first))
"""

FIGURES = ["motion_figures_barberpole", "motion_figures_model", "motion_figures_stimuli"]
# the jobs that build Dask arrays (attention_responses) are left out; every other script is in one group
CASES = {
    "every other script: no Dask, SciPy, Zarr or matplotlib before its work": (
        sorted({p.stem for p in (ROOT / "scripts").glob("*.py")} - {"attention_responses", "report_leaderboard",
                                                                     *FIGURES}),
        ["dask", "scipy", "zarr", "matplotlib"],
    ),
    "the motion figures: no pandas (the frame figures read no table), Dask, SciPy or Zarr": (
        FIGURES, ["pandas", "dask", "scipy", "zarr"],
    ),
    "the report: no Dask, SciPy (scipy.stats for the ranks) or Zarr": (
        ["report_leaderboard"], ["dask", "scipy", "zarr"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_script_modules_import_no_unused_heavy_library(case):
    scripts, forbidden = CASES[case]
    imports = "\n".join(script_imports(ROOT / "scripts" / f"{name}.py") for name in scripts)
    code = SPY.format(forbidden=set(forbidden), imports=imports)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout) == {}, f"{case}: imported by {out.stdout}"
