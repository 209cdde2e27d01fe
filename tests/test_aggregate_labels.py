"""One consistent leaderboard: the CLI ranks as the report, sweeps keep their settings, per-track fronts, labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psybench.aggregate.labels import annotate, criterion_label, criterion_unit, headline_criteria, setting_names
from psybench.aggregate.leaderboard import compute_leaderboards, write_leaderboards
from psybench.aggregate.table import SCORE_COLUMNS, write_scores
from psybench.cli import main
from psybench.provenance import params_hash

EXPERIMENTS = ("barberpole", "diamonds", "dashed_bars", "grating_size")
# Motion errors (deg, deg, deg, a.u.) of four models; passed = error below a threshold, as in Table 1.
ERRORS = {
    "farneback": (16.0, 1.2, 0.05, 0.0),
    "dis": (16.5, 1.0, 0.30, 0.5),
    "tlapale_v1mt": (15.0, 1.1, 0.04, 0.0),
    "tlapale_v1mt_nofeedback": (17.0, 0.9, 0.20, 0.6),
}
PASS_BELOW = (15.5, 2.0, 0.1, 0.1)


def _row(model, track, experiment, metric, value, direction, params_hash=""):
    return {"model": model, "params_hash": params_hash, "track": track, "experiment": experiment, "metric": metric,
            "value": value, "direction": direction, "ci_low": np.nan, "ci_high": np.nan, "source": ""}


def motion_rows():
    rows = []
    for m, errs in ERRORS.items():
        for e, err, thr in zip(EXPERIMENTS, errs, PASS_BELOW):
            rows.append(_row(m, "motion", e, "error", err, "lower"))
            rows.append(_row(m, "motion", e, "passed", float(err < thr), "higher"))
    return rows


MOTION_SPEC = {"name": "motion", "track": "motion", "criteria": [f"motion/{e}/error" for e in EXPERIMENTS]}


def test_headline_criteria_drop_the_verdicts():
    assert headline_criteria(["motion/a/error", "motion/a/passed", "motion/b/gaussian_score"]) == [
        "motion/a/error", "motion/b/gaussian_score"]
    assert headline_criteria(["motion/a/passed"]) == ["motion/a/passed"]  # nothing else: kept


@pytest.mark.parametrize("spec", [MOTION_SPEC, {"name": "motion", "track": "motion"}])
def test_cli_ranks_equal_the_report_ranks(tmp_path, capsys, spec):
    """The report's leaderboard and `psybench leaderboard --track motion` give the same ranks (the issue's
    farneback 4.38 vs 3.25: the CLI ranked the 0/1 pass columns too)."""
    results = tmp_path / "results"
    long_df = write_scores(pd.DataFrame(motion_rows(), columns=SCORE_COLUMNS),
                           results / "aggregate" / "scores_long.csv")
    board = compute_leaderboards(long_df, leaderboards=[spec])[0]
    write_leaderboards([board], results / "aggregate", results / "aggregate" / "leaderboards.json")
    assert sorted(board.criteria) == sorted(MOTION_SPEC["criteria"])
    out = tmp_path / "cli.csv"
    assert main(["leaderboard", "--results", str(results), "--track", "motion", "--out", str(out)]) == 0
    assert "4 criteria" in capsys.readouterr().out
    cli = pd.read_csv(out).set_index("entry")
    report = board.table.set_index("entry")
    assert list(cli.index) == list(report.index)
    np.testing.assert_array_equal(cli["average_rank"], report["average_rank"])
    np.testing.assert_array_equal(cli["front"], report["front"])
    # farneback: ranks 2, 4, 2, 1.5 on the four errors -> 2.375, whatever the pass marks
    assert report.loc["farneback", "average_rank"] == pytest.approx((2 + 4 + 2 + 1.5) / 4)


def test_sweep_keeps_one_row_per_setting():
    """tlapale_v1mt and its configured variant are one algorithm: the intra-technique board has both."""
    long_df = annotate(pd.DataFrame(motion_rows(), columns=SCORE_COLUMNS),
                       algorithms={"tlapale_v1mt_nofeedback": "tlapale_v1mt"})
    spec = dict(MOTION_SPEC, name="tlapale_sweep", model="tlapale_v1mt")
    board = compute_leaderboards(long_df, leaderboards=[spec])[0]
    assert sorted(board.table["entry"]) == ["tlapale_v1mt", "tlapale_v1mt_nofeedback"]
    assert board.table.set_index("entry").loc["tlapale_v1mt", "front"] == 1


def test_readable_entries_name_the_setting():
    rows = [_row(m, "attention", "A_on_A", "NSS", v, "higher", params_hash({"L": L}))
            for m, L, v in (("pyramid", 1, 1.0), ("pyramid", 3, 2.0), ("itti", 1, 0.5))]
    long_df = annotate(pd.DataFrame(rows, columns=SCORE_COLUMNS), settings=setting_names([{"L": 1}, {"L": 3}]))
    board = compute_leaderboards(long_df, leaderboards=[{"name": "a", "track": "attention"}])[0]
    assert list(board.table["entry"]) == ["pyramid L=3", "pyramid L=1", "itti"]
    raw = compute_leaderboards(pd.DataFrame(rows, columns=SCORE_COLUMNS),
                               leaderboards=[{"name": "a", "track": "attention"}])[0]
    assert raw.table["entry"].iloc[0] == f"pyramid@{params_hash({'L': 3})}"  # without names: the hash


def test_overall_is_one_front_per_track():
    """A control that is worst in its track is not Pareto-optimal overall just because it has no motion score."""
    rows = motion_rows() + [_row("random", "intphys", "all/all/all/all", "L_R", 0.5, "lower"),
                            _row("tracking", "intphys", "all/all/all/all", "L_R", 0.1, "lower")]
    board = compute_leaderboards(pd.DataFrame(rows, columns=SCORE_COLUMNS),
                                 leaderboards=[{"name": "overall", "track": None}, MOTION_SPEC])[0]
    t = board.table.set_index("entry")
    assert t.loc["random", "front"] == 2 and t.loc["tracking", "front"] == 1
    assert t.loc["random", "track"] == "intphys"
    assert set(board.criteria) == set(MOTION_SPEC["criteria"]) | {"intphys/all/all/all/all/L_R"}
    motion = compute_leaderboards(pd.DataFrame(rows, columns=SCORE_COLUMNS), leaderboards=[MOTION_SPEC])[0]
    m = motion.table.set_index("entry")
    np.testing.assert_array_equal(t.loc[m.index, "average_rank"], m["average_rank"])  # same as the track's page


def test_labels_carry_units():
    assert criterion_label("motion/barberpole/error") == "Motion barber pole: error (deg)"
    assert criterion_unit("motion/dashed_bars/error") == "deg"
    assert criterion_label("intphys/O1/occluded/all/2/L_A") == (
        "IntPhys block O1, occluded, 2 objects: absolute error rate L_A = 1 - AUC (fraction)")
    assert criterion_label("attention/A_on_B/NSS") == "Attention trained on A, tested on B: NSS (SD)"
    assert criterion_unit("attention/S_on_S/median_rp_rs_n") == "%"


def attention_rows():
    """Rows as the attention track writes them: per model and L the Table 1 groups (tuned filter) and the
    map metrics of its tuned and untuned maps, each under its own model name (three entries per model
    and L). Model "weak" is worse than "strong" on every group but has the better chance controls."""
    rows = []
    medians = {"strong": {"n_ma": 95.0, "n_un": 90.0}, "weak": {"n_ma": 93.0, "n_un": 85.0},
               "weaker": {"n_ma": 90.0, "n_un": 80.0}}
    for k, (m, med) in enumerate(medians.items()):
        for pair in ("A_on_A", "A_on_B"):
            for g, v in med.items():
                rows.append(_row(m, "attention", pair, f"median_rp_{g}", v, "higher", "h1"))
            rows.append(_row(m, "attention", pair, "median_rp_rf_n", 50.0 + k, "higher", "h1"))
            for tuning, auc in (("tuned", 0.9 - 0.1 * k), ("untuned", 0.7 + 0.1 * k)):
                rows.append(_row(f"{m} L=1 {tuning}", "attention", pair, "AUC-Judd", auc, "higher"))
                rows.append(_row(f"{m} L=1 {tuning}", "attention", pair, "KL", 1.0 - 0.1 * k, "lower"))
    rows.append(_row("deepgaze untuned map", "attention", "A_on_B", "rank_percentile", 88.0, "higher"))
    rows.append(_row("deepgaze untuned map", "attention", "A_on_B", "AUC-Judd", 0.8, "higher"))
    return rows


def test_attention_leaderboard_has_one_entry_per_model_and_separates_them():
    """Ranked by default on Table 1's n un group (Shic & Scassellati 2007, sec. 5.2): one entry per model
    and setting, and a model worse on every pair is on a later front. On every criterion (the old default)
    each model appeared three times with disjoint criteria and every entry was on front 1."""
    long_df = pd.DataFrame(attention_rows(), columns=SCORE_COLUMNS)
    board = compute_leaderboards(long_df, leaderboards=[{"name": "attention", "track": "attention"}])[0]
    assert board.criteria == ["attention/A_on_A/median_rp_n_un", "attention/A_on_B/median_rp_n_un",
                              "attention/A_on_B/rank_percentile"]
    fronts = dict(zip(board.table["entry"], board.table["front"]))
    assert fronts == {"strong": 1, "weak": 2, "weaker": 3, "deepgaze untuned map": 1}
    assert (board.table["front"] == 1).sum() < len(board.table)
    # a track that declares no headline metrics keeps every criterion but the verdicts
    assert headline_criteria(["motion/a/error", "attention/A_on_A/KL"]) == ["motion/a/error", "attention/A_on_A/KL"]
