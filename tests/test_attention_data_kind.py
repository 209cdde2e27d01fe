"""The ``data`` column (recorded / synthetic gaze) of the attention tables (psybench.attention.data_kind)."""

from __future__ import annotations

import pandas as pd
import pytest

from psybench.attention.data_kind import movie_data, pair_data, with_data_column
from psybench.attention.score_rows import score_rows


def test_movie_and_pair_kinds():
    data = movie_data({"A": {"popout": {}, "observers": {"seed": 1}}, "R": {"gaze": ["a.coord"]}, "S": {"gaze": "b"}})
    assert data == {"A": "synthetic", "R": "recorded", "S": "recorded"}
    assert [pair_data(data, *p) for p in (("A", "A"), ("R", "S"), ("A", "R"))] == [
        "synthetic", "recorded", "recorded+synthetic"]


def test_data_column_comes_last_and_names_a_missing_movie():
    t = pd.DataFrame({"train": ["A", "A"], "test": ["A", "R"], "median": [1.0, 2.0]})
    out = with_data_column(t, {"A": "synthetic", "R": "recorded"})
    assert list(out.columns) == ["train", "test", "median", "data"]
    assert out["data"].tolist() == ["synthetic", "recorded+synthetic"]
    assert with_data_column(t, None) is t
    with pytest.raises(ValueError, match=r"\['R'\]"):
        with_data_column(t, {"A": "synthetic"})


def test_score_rows_carry_the_data_column(tmp_path):
    table1 = with_data_column(pd.DataFrame({"train": ["A"], "test": ["R"], "features": ["raw"], "L": [1],
                                            "group": ["n ma"], "median": [60.0]}), {"A": "recorded", "R": "recorded"})
    metrics = pd.DataFrame({"model": ["raw L=1 tuned"], "metric": ["NSS"], "value": [1.0], "train": ["A"],
                            "test": ["R"]})
    table1.to_csv(tmp_path / "t.csv", index=False)
    metrics.to_csv(tmp_path / "m.csv", index=False)
    rows = score_rows(table1=tmp_path / "t.csv", metrics=tmp_path / "m.csv")
    assert rows.set_index("metric")["data"].to_dict() == {"NSS": "n/a", "median_rp_n_ma": "recorded"}
