"""The motion page's held-out verdicts of the bio-inspired models: exactly the failing cells, with why and links."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pandas as pd
import pytest
from test_report_leaderboard import LEADERBOARDS, _parse, _touch_sources, synthetic_long

from psybench.aggregate.leaderboard import compute_leaderboards, write_leaderboards
from psybench.io.tables import write_table
from psybench.motion.generalisation import GENERALISATION_COLUMNS
from psybench.motion.held_out import held_out_section, held_out_verdicts
from psybench.motion.models import bio_inspired_models
from psybench.registry import resolve_model
from psybench.report.site import render_site

HEADING = "Held-out verdicts of the bio-inspired models"
EXPS = ["barberpole", "diamonds", "dashed_bars", "grating_size"]


def _table1() -> pd.DataFrame:
    """BAD fails diamonds at 15 deg only and the integration area; GOOD passes everything; hs is not bio."""
    rows = []
    for model in ("BAD", "GOOD", "hs"):
        for exp in EXPS:
            fail15 = model == "BAD" and exp == "diamonds"
            rows.append({"experiment": exp, "model": model, "passed": not fail15 and model != "hs",
                         "error": 25.0 if fail15 else 1.0, "n_directions": 2,
                         "passed_dir000": model != "hs", "error_dir000": 1.0,
                         "passed_dir015": not fail15 and model != "hs", "error_dir015": 25.0 if fail15 else 1.0,
                         "integration_passed": (model == "GOOD") if exp == "grating_size" else math.nan,
                         "integration_error": (0.0 if model == "GOOD" else 0.5) if exp == "grating_size"
                         else math.nan})
    return pd.DataFrame(rows)


def _generalisation() -> pd.DataFrame:
    """BAD: fails the diamonds at contrast 0.1 (tau 5 ms < 20) and the contrast dependence (A falls with it)."""
    rows = []
    for model, a_low, tau_low in (("BAD", 30.0, 5.0), ("GOOD", 50.0, 250.0)):
        for level, a, tau, base in ((0.1, a_low, tau_low, False), (1.0, 40.0, 150.0, True)):
            rows.append({"model": model, "experiment": "diamonds", "nuisance": "contrast", "level": level,
                         "passed": model == "GOOD" or base, "error": 1.0 if (model == "GOOD" or base) else 9.0,
                         "baseline": base, "variant": "" if base else "contrast_000p1", "A_deg": a, "tau_ms": tau,
                         "details": "{}"})
        holds = model == "GOOD"
        details = {"a_min_deg": 10.0, "levels": [0.1, 1.0], "A_deg": [a_low, 40.0], "tau_ms": [tau_low, 150.0],
                   "comparisons": [{"quantity": "A_deg", "from_level": 0.1, "to_level": 1.0, "holds": holds},
                                   {"quantity": "tau_ms", "from_level": 0.1, "to_level": 1.0, "holds": holds}]}
        rows.append({"model": model, "experiment": "diamonds_contrast_dependence", "nuisance": "contrast",
                     "level": math.nan, "passed": holds, "error": 0.0 if holds else 1.0, "baseline": False,
                     "variant": "", "A_deg": math.nan, "tau_ms": math.nan, "details": json.dumps(details)})
    return pd.DataFrame(rows, columns=GENERALISATION_COLUMNS)


MODELS = {"BAD": "tlapale_v1mt", "GOOD": "simoncelli_heeger"}


def test_lists_exactly_the_failing_cells_with_why():
    bad, good = held_out_verdicts(_table1(), _generalisation(), MODELS)
    assert [c["experiment"] for c in bad["table1"]] == ["diamonds", "grating_size (integration area, separately "
                                                        "reported)"]
    diamonds = bad["table1"][0]
    assert [(d["direction_deg"], d["passed"], d["error"]) for d in diamonds["directions"]] == [
        (0.0, True, 1.0), (15.0, False, 25.0)]
    assert diamonds["why"].startswith("fails at 15 deg: error 25, passes at 0 deg: error 1")
    assert "A >= 10 deg" in diamonds["bound"] and "20 <= tau <= 500 ms" in diamonds["bound"]
    assert "0.5 octaves" in bad["table1"][1]["why"]
    assert [(c["experiment"], c["level"]) for c in bad["generalisation"]] == [
        ("diamonds", "0.1"), ("diamonds_contrast_dependence", "all levels")]
    assert "tau = 5 ms outside [20, 500]" in bad["generalisation"][0]["why"]
    assert "at the baseline contrast 1 it passes" in bad["generalisation"][0]["why"]
    dep = bad["generalisation"][1]["why"]
    assert "A at contrast 0.1 = 30 deg < A at 1 = 40 deg" in dep and "Wallace, Stone & Masson 2005" in dep
    assert not bad["passes_all"]
    assert good["passes_all"] and good["table1"] == [] and good["generalisation"] == []
    # the run's criteria overrides are the bounds quoted
    (bad2, _) = held_out_verdicts(_table1(), _generalisation(), MODELS, criteria={"diamonds": {"a_min_deg": 12}})
    assert "A >= 12 deg" in bad2["table1"][0]["bound"]
    # without a generalisation table nobody is said to pass everything
    assert not any(m["passes_all"] for m in held_out_verdicts(_table1(), None, MODELS))
    with pytest.raises(ValueError, match=r"table1 table lacks column\(s\) \['passed'\]"):
        held_out_verdicts(_table1().drop(columns="passed"), None, MODELS)


def test_a_cell_passing_where_the_baseline_fails_is_flagged_too():
    """The section listed failing cells only: a pass at a level whose baseline fails was never flagged."""
    from psybench.motion.criteria import merge_criteria
    from psybench.motion.generalisation_changes import verdict_changes

    gen = _generalisation()
    flip = (gen["model"] == "BAD") & (gen["experiment"] == "diamonds")
    gen.loc[flip, "passed"] = ~gen.loc[flip, "passed"].astype(bool)  # fails at the baseline, passes at 0.1
    gen = verdict_changes(gen[GENERALISATION_COLUMNS[:-2]], merge_criteria(None))
    bad, good = held_out_verdicts(_table1(), gen, MODELS)
    cells = {(c["experiment"], c["level"]): c for c in bad["generalisation"]}
    assert cells[("diamonds", "0.1")]["passed"] and "passes at contrast 0.1, fails at the baseline 1" in (
        cells[("diamonds", "0.1")]["changed"])
    assert not cells[("diamonds", "1 (baseline)")]["changed"]  # the baseline itself fails, unflagged
    assert good["generalisation"] == []


def test_bio_inspired_models_are_the_builtin_stream_algorithms():
    specs = {n: resolve_model({"name": n, "algorithm": a}, track="motion") for n, a in
             (("hs", "horn_schunck"), ("sh", "simoncelli_heeger"), ("v1mt_b", "tlapale_v1mt"))}
    user = SimpleNamespace(kind="stream", algorithm=SimpleNamespace(name="mine", source="user"))
    assert bio_inspired_models({**specs, "mine": user}) == {"sh": "simoncelli_heeger", "v1mt_b": "tlapale_v1mt"}


def test_motion_page_section_lists_failing_cells_with_links(tmp_path):
    results = tmp_path / "results"
    long_df = synthetic_long()
    _touch_sources(results, long_df)
    (results / "motion" / "figures").mkdir(parents=True, exist_ok=True)
    for m in MODELS:
        for kind in ("direction_error", "flow"):
            (results / "motion" / "figures" / f"{m}_{kind}.png").write_bytes(b"\x89PNG placeholder")
    t1, gen = results / "aggregate" / "motion_table1.csv", results / "aggregate" / "motion_generalisation.csv"
    t1.parent.mkdir(parents=True, exist_ok=True)
    write_table(_table1(), t1)
    write_table(_generalisation(), gen)
    boards = compute_leaderboards(long_df, leaderboards=LEADERBOARDS, n_boot=50)
    write_leaderboards(boards, results / "aggregate", results / "aggregate" / "leaderboards.json")
    out = results / "report"
    render_site(results / "aggregate" / "leaderboards.json", out, results_root=results,
                motion_held_out=held_out_section(t1, gen, MODELS))
    html = (out / "motion.html").read_text(encoding="utf-8")
    section = html.split('<section id="held-out">', 1)[1].split("</section>", 1)[0]
    assert HEADING in section
    bad = section.split('id="held-out-BAD"', 1)[1].split('id="held-out-GOOD"', 1)[0]
    good = section.split('id="held-out-GOOD"', 1)[1]
    rows = [r.split("</td>", 1)[0] for r in bad.split("<tr><td>")[1:]]
    assert rows == ["diamonds", "grating_size (integration area, separately reported)", "diamonds",
                    "diamonds_contrast_dependence"]
    assert "15&deg;: FAIL (25)" in bad and "0&deg;: pass (1)" in bad
    assert "Passes everything" in good and "<tr>" not in good and "hs" not in section
    links = re.findall(r'href="([^"]+)"', section)
    assert sum("BAD_direction_error.png" in h for h in links) == 4 and sum("BAD_flow.png" in h for h in links) == 4
    assert {h for h in links if "aggregate" in h} == {"../aggregate/motion_table1.csv",
                                                      "../aggregate/motion_generalisation.csv"}
    assert len(_parse(out / "motion.html").hrefs) > len(links)
    for href in links:
        target = (out / unquote(href)).resolve()
        assert target.is_file() and target.stat().st_size > 0, href
    # only the motion track page carries the section
    for other in ("overall", "intphys", "attention"):
        assert HEADING not in (out / f"{other}.html").read_text(encoding="utf-8")
    assert Path(out / "motion.html").is_file()
