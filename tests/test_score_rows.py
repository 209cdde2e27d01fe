"""Each track's score rows (``psybench.<track>.score_rows``) -> the one long score table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psybench.aggregate.table import SCORE_COLUMNS, ScoreTableError, concat_scores, leaderboard, write_scores
from psybench.attention.score_rows import score_rows as attention_scores
from psybench.intphys.score_rows import sample_rows as intphys_samples
from psybench.intphys.score_rows import score_rows as intphys_scores
from psybench.motion.score_rows import score_rows as motion_scores
from psybench.provenance import params_hash


def _csv(path, rows, columns):
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


@pytest.fixture()
def results(tmp_path):
    """A small results folder with every track's files (values chosen by hand)."""
    r = tmp_path / "results"
    (r / "aggregate").mkdir(parents=True)
    (r / "fits" / "motion").mkdir(parents=True)
    (r / "intphys" / "nextframe").mkdir(parents=True)
    (r / "intphys" / "constant").mkdir(parents=True)
    (r / "attention").mkdir(parents=True)
    _csv(r / "aggregate" / "motion_table1.csv",
         [("barberpole", "HS", True, 0.1), ("barberpole", "LK", False, 0.9),
          ("diamonds", "HS", False, 2.0), ("diamonds", "LK", True, None)],  # LK's diamonds error is missing
         ["experiment", "model", "passed", "error"])
    _csv(r / "fits" / "motion" / "HS.csv",
         [("diamonds", "HS", "half_differential", 1.0, 80.0, 0.0, 0.7),
          ("dashed_bars", "HS", "bar", 1.0, 60.0, 0.0, np.nan)],  # NaN score: no row
         ["experiment", "model", "curve", "A", "tau_ms", "B", "gaussian_score"])
    cols = ["model", "block", "visibility", "motion", "n_objects", "metric", "value", "ci_low", "ci_high",
            "n_quadruplets"]
    _csv(r / "intphys" / "nextframe" / "scores.csv",
         [("nextframe", "O1", "visible", "static", "1", "L_R", 0.25, 0.2, 0.3, 10),
          ("nextframe", "all", "all", "all", "all", "L_R", 0.3, 0.25, 0.35, 40),
          ("nextframe", "all", "all", "all", "all", "L_A", 0.4, np.nan, np.nan, 40)], cols)
    _csv(r / "intphys" / "constant" / "scores.csv",
         [("constant", "all", "all", "all", "all", "L_R", 0.5, 0.5, 0.5, 40),
          ("constant", "all", "all", "all", "all", "L_A", 0.5, 0.5, 0.5, 40)], cols)
    _csv(r / "attention" / "metrics.csv",
         [("itti", "NSS", 1.2, "higher"), ("itti", "KL", 0.8, "lower"), ("raw", "NSS", 0.4, "")],
         ["model", "metric", "value", "direction"])
    _csv(r / "attention" / "table1.csv",
         [("A", "B", "raw", 1, 6, "n ma", 71.0, 5.0), ("A", "B", "raw", 1, 6, "rf/n", 52.0, 8.0),
          ("A", "B", "raw", 3, 54, "n ma", 75.0, 4.0)],
         ["train", "test", "features", "L", "ND", "group", "median", "sd"])
    return r


def test_motion_rows_keep_missing_and_link_figures(results):
    df = motion_scores(results / "aggregate" / "motion_table1.csv",
                       fits=[results / "fits" / "motion" / "HS.csv", results / "fits" / "motion" / "absent.csv"],
                       figure="figures/motion/{model}_direction_error.png", results_root=results)
    assert list(df.columns) == SCORE_COLUMNS
    err = df[df["metric"] == "error"].set_index(["model", "experiment"])
    assert err.loc[("HS", "barberpole"), "value"] == 0.1
    assert np.isnan(err.loc[("LK", "diamonds"), "value"])  # missing stays missing, never 0
    assert set(err["direction"]) == {"lower"}
    passed = df[df["metric"] == "passed"].set_index(["model", "experiment"])["value"]
    assert passed.to_dict() == {("HS", "barberpole"): 1.0, ("LK", "barberpole"): 0.0,
                                ("HS", "diamonds"): 0.0, ("LK", "diamonds"): 1.0}
    assert set(df.loc[df["model"] == "LK", "source"]) == {"figures/motion/LK_direction_error.png"}
    gs = df[df["metric"] == "gaussian_score"]
    assert gs[["experiment", "value", "direction", "source"]].values.tolist() == [
        ["diamonds/half_differential", 0.7, "higher", "fits/motion/HS.csv"]]


def test_intphys_experiment_is_condition_path(results):
    paths = sorted((results / "intphys").glob("*/scores.csv"))
    df = intphys_scores(paths, results_root=results)
    nf = df[df["model"] == "nextframe"].set_index(["experiment", "metric"])
    assert nf.loc[("O1/visible/static/1", "L_R"), ["value", "ci_low", "ci_high"]].tolist() == [0.25, 0.2, 0.3]
    assert np.isnan(nf.loc[("all/all/all/all", "L_A"), "ci_low"])
    assert set(df["direction"]) == {"lower"}
    assert set(df.loc[df["model"] == "constant", "source"]) == {"intphys/constant/scores.csv"}


def test_intphys_optional_columns_absent(tmp_path):
    p = _csv(tmp_path / "s.csv", [("m", "O1", "visible", "static", "1", "L_R", 0.2)],
             ["model", "block", "visibility", "motion", "n_objects", "metric", "value"])
    df = intphys_scores(p, results_root=tmp_path)
    assert np.isnan(df["ci_low"].iloc[0]) and np.isnan(df["ci_high"].iloc[0])


def test_attention_metrics_and_table1(results):
    df = attention_scores(metrics=results / "attention" / "metrics.csv", table1=results / "attention" / "table1.csv",
                          table1_figure="figures/attention/curves.png", results_root=results)
    m = df[df["experiment"] == "all"].set_index(["model", "metric"])
    assert m.loc[("raw", "NSS"), "direction"] == "higher"  # empty direction: NSS's known sense
    assert m.loc[("itti", "KL"), "direction"] == "lower"
    t = df[df["experiment"] == "A_on_B"]
    assert sorted(t["metric"]) == ["median_rp_n_ma", "median_rp_n_ma", "median_rp_rf_n"]
    l3 = t[t["params_hash"] == params_hash({"L": 3})]
    assert l3[["model", "metric", "value"]].values.tolist() == [["raw", "median_rp_n_ma", 75.0]]
    assert set(t["direction"]) == {"higher"} and set(t["source"]) == {"figures/attention/curves.png"}
    assert t["ci_low"].isna().all()  # sd over pairs is not an interval


def test_attention_unknown_metric_without_direction_names_file_and_metric(tmp_path):
    p = _csv(tmp_path / "metrics.csv", [("itti", "my_score", 1.0)], ["model", "metric", "value"])
    with pytest.raises(ScoreTableError, match=r"metrics\.csv.*'my_score'.*direction"):
        attention_scores(metrics=p)


@pytest.mark.parametrize(
    "kind, columns, missing",
    [
        ("motion", ["experiment", "model", "error"], "passed"),
        ("intphys", ["model", "block", "visibility", "motion", "metric", "value"], "n_objects"),
        ("attention_table1", ["train", "test", "features", "group", "median"], "L"),
        ("attention_metrics", ["model", "value"], "metric"),
    ],
)
def test_missing_required_column_names_file_and_column(tmp_path, kind, columns, missing):
    p = _csv(tmp_path / f"{kind}.csv", [tuple("1" for _ in columns)], columns)
    call = {
        "motion": lambda: motion_scores(p),
        "intphys": lambda: intphys_scores(p),
        "attention_table1": lambda: attention_scores(table1=p),
        "attention_metrics": lambda: attention_scores(metrics=p),
    }[kind]
    with pytest.raises(ScoreTableError, match=rf"{kind}\.csv: missing column '{missing}'"):
        call()


def test_non_numeric_score_names_file_column_and_row(tmp_path):
    p = _csv(tmp_path / "t1.csv", [("barberpole", "HS", True, "0.1"), ("diamonds", "HS", True, "oops")],
             ["experiment", "model", "passed", "error"])
    with pytest.raises(ScoreTableError, match=r"t1\.csv: column 'error' has non-numeric value 'oops' in row 1"):
        motion_scores(p)


def test_collect_all_tracks_then_leaderboard(results, tmp_path):
    r = results
    per_track = {
        "motion": motion_scores(r / "aggregate" / "motion_table1.csv", fits=[r / "fits" / "motion" / "HS.csv"],
                                results_root=r),
        "intphys": intphys_scores(sorted((r / "intphys").glob("*/scores.csv")), results_root=r),
        "attention": attention_scores(metrics=r / "attention" / "metrics.csv", table1=r / "attention" / "table1.csv",
                                      results_root=r),
    }
    # each track writes its rows; aggregation only concatenates the files
    for track, rows in per_track.items():
        write_scores(rows, tmp_path / f"scores_{track}.csv")
    paths = [tmp_path / f"scores_{track}.parquet" for track in per_track]
    long_df = write_scores(paths, tmp_path / "scores_long.csv")
    assert list(long_df.columns) == [*SCORE_COLUMNS, "data"]  # the attention rows' recorded / synthetic gaze
    assert set(long_df["track"]) == {"motion", "intphys", "attention"}
    data = long_df.groupby("track")["data"].agg(lambda d: set(d.fillna("")))
    assert data["motion"] == data["intphys"] == {""} and "" not in data["attention"]
    # 8 motion Table 1 rows + 1 fit + 5 intphys + 3 metrics + 3 table1
    assert len(long_df) == 20
    assert int(long_df["value"].isna().sum()) == 1  # LK's missing diamonds error, kept as NaN
    lb = leaderboard(long_df, track="motion", criteria=["motion/barberpole/error", "motion/diamonds/error"])
    # HS beats LK on barberpole; LK's diamonds is missing -> compared on barberpole only -> HS dominates LK
    assert lb.set_index("entry").loc["LK", "dominated_by"] == "HS"
    lb = leaderboard(long_df, track="intphys", criteria=["intphys/all/all/all/all/L_R", "intphys/all/all/all/all/L_A"])
    assert lb["entry"].tolist() == ["nextframe", "constant"] and lb["front"].tolist() == [1, 2]


def test_collect_errors(results, tmp_path):
    with pytest.raises(ScoreTableError, match=r"nope\.csv: no such file"):
        intphys_scores([tmp_path / "nope.csv"])
    # the same score from two places is an error naming both
    p = results / "intphys" / "nextframe" / "scores.csv"
    with pytest.raises(ScoreTableError, match="more than once"):
        concat_scores({"track intphys": intphys_scores([p], results_root=results), "external": _long_copy(p, tmp_path)})


def _long_copy(intphys_csv, tmp_path):
    df = intphys_scores(intphys_csv)
    out = tmp_path / "external.csv"
    df.to_csv(out, index=False)
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def test_attention_metrics_keyed_by_train_test_pair(tmp_path):
    p = tmp_path / "metrics.csv"
    pd.DataFrame(
        {
            "model": ["raw L=1 untuned"] * 2,
            "metric": ["NSS"] * 2,
            "value": [1.0, 0.5],
            "direction": ["higher"] * 2,
            "train": ["A", "A"],
            "test": ["A", "B"],
        }
    ).to_csv(p, index=False)
    out = attention_scores(metrics=p, results_root=tmp_path)
    assert sorted(out["experiment"]) == ["A_on_A", "A_on_B"]


def test_intphys_samples_average_to_the_overall_L_R(tmp_path):
    from psybench.intphys.metrics import score_table, write_answer

    rows = []
    for q in range(6):
        for run in range(1, 5):
            rows.append({"movie": f"O1/{q + 1:04d}/{run}", "quadruplet": f"O1/{q + 1:04d}", "possible": run <= 2,
                         "block": "O1", "visibility": "visible", "motion": "static", "n_objects": 1})
    meta = pd.DataFrame(rows)
    meta.to_csv(tmp_path / "meta.csv", index=False)
    rng = np.random.default_rng(0)
    scores = pd.Series(rng.random(len(meta)), index=meta["movie"])
    write_answer(scores, tmp_path / "answer.txt")
    samples = intphys_samples({"m": tmp_path / "answer.txt"}, tmp_path / "meta.csv")
    assert len(samples) == 6 and set(samples["experiment"]) == {"all/all/all/all"}
    table = score_table(scores, meta, model="m", n_boot=10, seed=0)
    overall = table[(table["block"] == "all") & (table["visibility"] == "all") & (table["motion"] == "all")
                    & (table["n_objects"].astype(str) == "all") & (table["metric"] == "L_R")]["value"].iloc[0]
    assert samples["value"].mean() == pytest.approx(overall)


def test_per_track_files_concatenate_to_the_same_bytes_as_one_table(results, tmp_path):
    """Writing each track's rows, then concatenating the files, gives the one-shot table byte for byte."""
    r = results
    per_track = {
        "motion": motion_scores(r / "aggregate" / "motion_table1.csv", fits=[r / "fits" / "motion" / "HS.csv"],
                                figure="figures/motion/{model}_direction_error.png", results_root=r),
        "intphys": intphys_scores(sorted((r / "intphys").glob("*/scores.csv")), results_root=r),
        "attention": attention_scores(metrics=r / "attention" / "metrics.csv", table1=r / "attention" / "table1.csv",
                                      results_root=r),
    }
    write_scores({f"track {t}": rows for t, rows in per_track.items()}, tmp_path / "direct.csv")
    for t, rows in per_track.items():
        write_scores({f"track {t}": rows}, tmp_path / f"scores_{t}.csv")
    write_scores([tmp_path / f"scores_{t}.parquet" for t in ("intphys", "attention", "motion")],
                 tmp_path / "scores_long.csv")
    assert (tmp_path / "scores_long.csv").read_bytes() == (tmp_path / "direct.csv").read_bytes()


def test_attention_metric_sense_ignores_spelling(tmp_path):
    p = _csv(tmp_path / "metrics.csv", [("itti", "auc_judd", 0.8), ("itti", "kl", 1.5)], ["model", "metric", "value"])
    df = attention_scores(metrics=p).set_index("metric")
    assert df.loc["auc_judd", "direction"] == "higher" and df.loc["kl", "direction"] == "lower"


def test_aggregation_imports_no_track_code():
    """The aggregate and report packages read score rows; each track writes its own."""
    import ast
    from pathlib import Path

    import psybench

    root = Path(psybench.__file__).parent
    for pkg in ("aggregate", "report"):
        for f in sorted((root / pkg).glob("*.py")):
            tree = ast.parse(f.read_text())
            names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
            names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
            tracks = [m for m in names if m.split(".")[:2] in (["psybench", t] for t in ("motion", "attention",
                                                                                          "intphys"))]
            assert not tracks, (f, tracks)
            assert "results/" not in f.read_text(), f
