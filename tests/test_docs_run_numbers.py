"""The numbers the README and docs/models.md state about the default run, checked against a finished run.

Set PSYBENCH_RUN_RESULTS to the results folder of a default run (``snakemake --cores 2 all`` on
config/config.yaml) to check them; without it these tests skip, saying so (the default run takes
minutes, too long for every test session).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = os.environ.get("PSYBENCH_RUN_RESULTS")
pytestmark = pytest.mark.skipif(not RESULTS, reason="PSYBENCH_RUN_RESULTS (a default run's results folder) not set")


def _text(name: str) -> str:
    return " ".join((ROOT / name).read_text().split())


def _range(values) -> str:
    return f"{min(values):.1f}-{max(values):.1f} %"


def test_readme_attention_ranges_are_the_runs():
    t = pd.read_csv(Path(RESULTS) / "attention" / "table1.csv")
    readme = _text("README.md")
    own = t[(t["group"] == "n ma") & (t["train"] == t["test"])]
    by_movie = {m: _range(own.loc[own["train"] == m, "median"]) for m in ("A", "B")}
    both = _range(own.loc[own["train"].isin(["A", "B"]), "median"])
    assert (f"score {both} on the held-out frames of the training movie ({by_movie['A']} on A, "
            f"{by_movie['B']} on B)") in readme
    controls = t[t["group"].isin(["rf/n", "rs/n", "rp/n"]) & t["test"].isin(["A", "B"])]
    assert f"at chance, {_range(controls['median'])} in all {len(controls)} cells" in readme


def test_models_doc_counts_the_runs_stimuli():
    motion = Path(RESULTS) / "motion"
    main = len(list((motion / "stimuli").glob("*.zarr")))
    held_out = len(list((motion / "generalisation").glob("*/stimuli/*.zarr")))
    doc = _text("docs/models.md")
    assert f"default run's {main + held_out} stimuli ({main} + {held_out} held out)" in doc
    assert (f"the default run now has {main}, every experiment also at a second direction, "
            f"plus {held_out} held out") in doc
    numbers = {int(n) for n in re.findall(r"all (\d+) stimuli of the default run", doc)}
    assert numbers <= {main + held_out}, numbers
