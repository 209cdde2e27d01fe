import numpy as np
import pandas as pd
import pytest

from psybench.motion.table1 import motion_pareto, table1, table1_markdown, write_table1


def _scores(model, passed, errors):
    exps = ["grating_size", "barberpole", "dashed_bars", "diamonds"]  # deliberately out of order
    return pd.DataFrame({"experiment": exps, "model": model, "passed": passed, "error": errors, "details": "{}"})


def test_table1_order_markdown_and_pareto(tmp_path):
    a = _scores("hs", [False, True, False, False], [1.0, 0.1, 2.0, 3.0])
    b = _scores("tlapale", [False, True, True, True], [1.0, 0.1, 0.5, 0.2])
    c = _scores("worse", [False, False, False, False], [2.0, 0.9, 2.5, 3.5])
    paths = []
    for df in (a, b, c):
        p = tmp_path / f"{df['model'][0]}.csv"
        df.to_csv(p, index=False)
        paths.append(p)
    t1 = write_table1(
        paths, table_csv=tmp_path / "t.csv", markdown=tmp_path / "t.md", pareto_csv=tmp_path / "p.csv"
    )
    assert list(t1.columns) == ["experiment", "model", "passed", "error"]
    assert list(t1["experiment"][:3]) == ["barberpole"] * 3
    assert list(t1["model"][:3]) == ["hs", "tlapale", "worse"]
    md = (tmp_path / "t.md").read_text()
    assert "| Translating diamonds | ✘ (3) | ✔ (0.2) | ✘ (3.5) |" in md
    pareto = pd.read_csv(tmp_path / "p.csv").set_index("model")
    # tlapale dominates hs (ties on two, better on two) and hs dominates worse
    assert pareto.loc["tlapale", "front"] == 1 and bool(pareto.loc["tlapale", "pareto_optimal"])
    assert pareto.loc["hs", "front"] == 2
    assert pareto.loc["worse", "front"] == 3
    assert pareto.loc["tlapale", "average_rank"] < pareto.loc["hs", "average_rank"]


def test_missing_error_stays_missing():
    a = _scores("a", [True] * 4, [1.0, 1.0, 1.0, np.nan])
    b = _scores("b", [True] * 4, [2.0, 2.0, 2.0, 0.0])
    out = motion_pareto(table1([a, b])).set_index("model")
    assert np.isnan(out.loc["a", "error_diamonds"])
    assert out.loc["a", "n_ranked"] == 3
    assert out.loc["b", "n_ranked"] == 4


def test_bad_score_table_named():
    with pytest.raises(ValueError, match="passed"):
        table1([pd.DataFrame({"experiment": ["barberpole"], "model": ["m"], "error": [1.0]})])
    with pytest.raises(ValueError, match="unknown experiment"):
        table1([pd.DataFrame({"experiment": ["plaid"], "model": ["m"], "passed": [True], "error": [1.0]})])
    partial = _scores("b", [True] * 4, [1.0] * 4).iloc[1:]  # b lacks grating_size
    assert "| Grating size | ✔ (1) | n/a |" in table1_markdown(table1([_scores("a", [True] * 4, [1.0] * 4), partial]))


def test_experiment_list_is_defined_once():
    from psybench.benchmarks import benchmarks
    from psybench.motion import EXPERIMENTS
    from psybench.motion.criteria import SCORERS

    motion = next(b for b in benchmarks() if b.track == "motion")
    assert motion.experiments is EXPERIMENTS
    assert tuple(SCORERS) == EXPERIMENTS
