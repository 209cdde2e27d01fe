"""docs/models.md's Table 1 of the bio-inspired models is generated from a run's motion_table1.csv.

The docs once showed tlapale_v1mt passing every row while the run wrote that it failed
three: the table is now written by psybench.motion.table1_docs from a run and checked
against the run recorded in tests/data (the default config's bio-inspired models).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from psybench.motion.table1_docs import BEGIN, END, PAPER_TABLE1, docs_block, main, replace_block

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "data" / "motion_table1_bio_default.csv"
ALGORITHMS = {"simoncelli_heeger": "simoncelli_heeger", "simoncelli_heeger_published": "simoncelli_heeger",
              "tlapale_v1mt": "tlapale_v1mt", "tlapale_v1mt_published": "tlapale_v1mt"}


def _table(rows):
    return pd.DataFrame(rows, columns=["experiment", "model", "passed", "error"])


def test_block_marks_every_cell_that_differs_from_the_paper():
    rows = [(e, "v1", e == "grating_size", 2.0) for e in ("barberpole", "diamonds", "dashed_bars", "grating_size")]
    rows += [(e, "hs", False, 1.5) for e in ("barberpole", "diamonds", "dashed_bars", "grating_size")]
    block = docs_block(_table(rows), {"v1": "tlapale_v1mt", "hs": "horn_schunck"})
    lines = block.splitlines()
    assert lines[0] == "| experiment | paper: Tlapale et al. | `v1` |"  # horn_schunck is not bio-inspired
    # the paper: passes the first three, fails grating size; this model is the reverse on all four
    assert lines[2] == "| Barberpole | pass | **fail (2)** (paper: pass) |"
    assert sum("(paper:" in line for line in lines) == 4
    assert lines[-1].endswith("| fail | **pass (2)** (paper: fail) |")


def test_paper_table_is_rr7317_table1():
    """RR-7317 Table 1: every model passes the barber-pole, only Tlapale et al. the diamonds and the bars, nobody
    the grating size."""
    assert all(v["barberpole"] for v in PAPER_TABLE1.values())
    assert [a for a, v in PAPER_TABLE1.items() if v["diamonds"] and v["dashed_bars"]] == ["tlapale_v1mt"]
    assert not any(v["grating_size"] for v in PAPER_TABLE1.values())


def test_replace_block_keeps_the_rest_and_refuses_missing_markers():
    text = f"intro\n{BEGIN}\nold\n{END}\noutro\n"
    assert replace_block(text, "new\n") == f"intro\n{BEGIN}\nnew\n{END}\noutro\n"
    with pytest.raises(ValueError, match="expected one"):
        replace_block("no markers\n", "new\n")


def test_docs_table_agrees_with_the_recorded_run(tmp_path):
    """The block in docs/models.md is exactly what the recorded run's Table 1 generates."""
    docs = ROOT / "docs" / "models.md"
    table = pd.read_csv(RUN)
    text = docs.read_text()
    assert replace_block(text, docs_block(table, ALGORITHMS)) == text
    # and --check fails on a docs table that claims what the run does not write
    stale = tmp_path / "models.md"
    stale.write_text(text.replace("**fail (24.9)** (paper: pass)", "pass (24.9)", 1))  # tlapale on the diamonds
    assert stale.read_text() != text
    config = tmp_path / "config.yaml"
    config.write_text("motion:\n  models:\n" + "".join(f"    - {{name: {m}, algorithm: {a}}}\n"
                                                      for m, a in ALGORITHMS.items()))
    assert main([str(RUN), "--docs", str(docs), "--config", str(config), "--check"]) == 0
    assert main([str(RUN), "--docs", str(stale), "--config", str(config), "--check"]) == 1
