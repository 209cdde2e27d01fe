"""The long score table: validation, concatenation, pivot into error vectors, leaderboard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psybench.aggregate.table import (
    SCORE_COLUMNS,
    ScoreTableError,
    concat_scores,
    error_matrix,
    leaderboard,
    read_scores,
)


def score_rows(rows):
    """rows: (model, params_hash, track, experiment, metric, value, direction)."""
    out = []
    for model, ph, track, exp, metric, value, direction in rows:
        out.append(
            {
                "model": model,
                "params_hash": ph,
                "track": track,
                "experiment": exp,
                "metric": metric,
                "value": value,
                "direction": direction,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "source": f"figures/{track}/{exp}_{metric}.png",
            }
        )
    return pd.DataFrame(out, columns=SCORE_COLUMNS)


MOTION = score_rows(
    [
        ("hs", "", "motion", "diamond", "rmse", 1.0, "lower"),
        ("hs", "", "motion", "barberpole", "score", 0.2, "higher"),
        ("lk", "", "motion", "diamond", "rmse", 2.0, "lower"),
        ("lk", "", "motion", "barberpole", "score", 0.9, "higher"),
        ("dis", "", "motion", "diamond", "rmse", 3.0, "lower"),
        ("dis", "", "motion", "barberpole", "score", 0.1, "higher"),
    ]
)
ATTENTION = score_rows(
    [
        ("itti", "", "attention", "movies", "auc", 0.7, "higher"),
        ("hs", "", "attention", "movies", "auc", np.nan, "higher"),
    ]
)


def test_concat_and_pivot_keep_missing_missing():
    long = concat_scores({"motion.csv": MOTION, "attention.csv": ATTENTION})
    assert list(long.columns) == SCORE_COLUMNS
    assert len(long) == 8
    M, dirs = error_matrix(long)
    assert list(M.columns) == ["attention/movies/auc", "motion/barberpole/score", "motion/diamond/rmse"]
    assert dirs == ["max", "max", "min"]
    assert list(M.index) == ["dis", "hs", "itti", "lk"]
    assert np.isnan(M.loc["hs", "attention/movies/auc"])  # empty value stays NaN
    assert np.isnan(M.loc["lk", "attention/movies/auc"])  # absent score is NaN
    assert M.loc["lk", "motion/diamond/rmse"] == 2.0
    S, _ = error_matrix(long, track="motion", values="source")
    assert S.loc["hs", "motion/diamond/rmse"] == "figures/motion/diamond_rmse.png"


def test_missing_column_names_column_and_file():
    with pytest.raises(ScoreTableError, match=r"motion\.csv: missing column 'ci_low'"):
        concat_scores({"motion.csv": MOTION.drop(columns="ci_low")})


def test_bad_cells_are_named():
    bad = MOTION.copy()
    bad.loc[2, "direction"] = "smaller"
    with pytest.raises(ScoreTableError, match=r"m\.csv: column 'direction' is 'smaller' in row 2 \(model 'lk'"):
        concat_scores({"m.csv": bad})
    bad = MOTION.astype({"value": object})
    bad.loc[1, "value"] = "high"
    with pytest.raises(ScoreTableError, match=r"column 'value' has non-numeric value 'high' in row 1"):
        concat_scores({"m.csv": bad})
    bad = MOTION.copy()
    bad.loc[0, "model"] = ""
    with pytest.raises(ScoreTableError, match="column 'model' is empty in row 0"):
        concat_scores([bad])


def test_duplicate_score_names_both_files():
    with pytest.raises(ScoreTableError, match=r"more than once \(in a\.csv, b\.csv\)"):
        concat_scores({"a.csv": MOTION, "b.csv": MOTION.iloc[:1]})


def test_read_scores_csv_keeps_hash_text_and_empty_cells(tmp_path):
    df = MOTION.copy()
    df["params_hash"] = "0012"
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    text = path.read_text().replace(",1.0,lower", ",,lower")  # hs diamond rmse -> empty
    path.write_text(text)
    long = read_scores(path)
    assert set(long["params_hash"]) == {"0012"}
    assert long["value"].isna().sum() == 1
    with pytest.raises(ScoreTableError, match="no such file"):
        read_scores(tmp_path / "absent.csv")


def test_filters_and_intra_technique_entries():
    long = concat_scores(
        [
            MOTION,
            score_rows(
                [
                    ("hs", "p2", "motion", "diamond", "rmse", 0.5, "lower"),
                    ("hs", "p2", "motion", "barberpole", "score", 0.1, "higher"),
                ]
            ),
        ]
    )
    M, _ = error_matrix(long, track="motion")
    assert list(M.index) == ["dis", "hs", "hs@p2", "lk"]  # several parameter sets: labelled
    intra, _ = error_matrix(long, model="hs")
    assert list(intra.index) == ["default", "p2"]
    with pytest.raises(ScoreTableError, match=r"track 'physics' has no scores \(tracks present"):
        error_matrix(long, track="physics")
    with pytest.raises(ScoreTableError, match="criterion 'motion/x/y' has no scores"):
        error_matrix(long, criteria=["motion/x/y"])
    conflict = MOTION.copy()
    conflict.loc[0, "direction"] = "higher"
    with pytest.raises(ScoreTableError, match="criterion 'motion/diamond/rmse' is declared with directions"):
        error_matrix(conflict)


def test_leaderboard_fronts_and_ranks():
    long = concat_scores([MOTION])
    t = leaderboard(long)
    by = t.set_index("entry")
    # hs: best rmse; lk: best barber-pole score; dis: worse than both in both criteria
    assert by.loc["hs", "front"] == by.loc["lk", "front"] == 1
    assert by.loc["dis", "front"] == 2 and by.loc["dis", "dominated_by"] == "hs; lk"
    assert t.attrs["directions"] == ["max", "min"]
    # tolerances not exceeded by any gain over dis: rmse gains 1.0 (lk) and 2.0 (hs,
    # not MORE than 2.0), score gains 0.8 (lk) and 0.1 (hs)
    t = leaderboard(long, epsilon={"motion/diamond/rmse": 2.0, "motion/barberpole/score": 0.85})
    assert t.set_index("entry").loc["dis", "front"] == 1
    # cross-track with missing values: compared on shared criteria only
    t = leaderboard(concat_scores([MOTION, ATTENTION])).set_index("entry")
    assert t.loc["itti", "n_ranked"] == 1 and t.loc["itti", "front"] == 1
    with pytest.raises(ValueError, match="missing"):
        leaderboard(concat_scores([MOTION, ATTENTION]), missing="raise")


def test_write_scores_validates_and_writes_csv_and_parquet(tmp_path):
    from psybench.aggregate.table import write_scores

    out = write_scores({"track motion": MOTION}, tmp_path / "scores_motion.csv")
    assert (tmp_path / "scores_motion.parquet").is_file()
    again = write_scores([tmp_path / "scores_motion.parquet"], tmp_path / "scores_long.csv")
    pd.testing.assert_frame_equal(out, again)
    assert (tmp_path / "scores_long.csv").read_bytes() == (tmp_path / "scores_motion.csv").read_bytes()
    bad = MOTION.assign(direction="up")
    with pytest.raises(ScoreTableError, match=r"track motion: column 'direction' is 'up'"):
        write_scores({"track motion": bad}, tmp_path / "bad.csv")
    assert not (tmp_path / "bad.csv").exists()


def test_score_frame_fills_missing_columns():
    from psybench.aggregate.table import score_frame

    df = score_frame({"model": ["hs"], "track": ["motion"], "metric": ["error"], "value": [0.5]}, 1)
    assert list(df.columns) == SCORE_COLUMNS
    assert df.loc[0, "params_hash"] == "" and np.isnan(df.loc[0, "ci_low"])


def test_write_samples_without_tracks_writes_the_header(tmp_path):
    from psybench.aggregate.table import SAMPLE_COLUMNS, write_samples

    write_samples([], tmp_path / "samples_long.csv")
    assert (tmp_path / "samples_long.csv").read_text() == ",".join(SAMPLE_COLUMNS) + "\n"
