"""L_R / L_A against hand-computed cases and sklearn; answer.txt validation."""
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from psybench.intphys.metrics import (
    AnswerFormatError,
    absolute_error,
    read_answer,
    score_table,
    write_answer,
)


def _meta(n_quads=6):
    rows = []
    for q in range(1, n_quads + 1):
        for r in range(1, 5):
            rows.append({"movie": f"O{1 + q % 2}/{q:04d}/{r}", "quadruplet": f"O{1 + q % 2}/{q:04d}",
                         "possible": r <= 2, "block": f"O{1 + q % 2}",
                         "visibility": ["visible", "occluded"][q % 3 == 0], "motion": "static", "n_objects": 1})
    return pd.DataFrame(rows)


def _get(table, metric, **factors):
    sel = table["metric"] == metric
    for f in ("block", "visibility", "motion", "n_objects"):
        sel &= table[f] == str(factors.get(f, "all"))
    assert sel.sum() == 1
    return table[sel].iloc[0]


def test_constant_model_ties():
    meta = _meta()
    t = score_table(pd.Series(0.5, index=meta["movie"]), meta, model="c", n_boot=50)
    assert _get(t, "L_R")["value"] == 0.5
    assert _get(t, "L_R_strict")["value"] == 0.0  # the official scorer's bug
    assert _get(t, "L_A")["value"] == 0.5
    assert _get(t, "L_R")["n_quadruplets"] == 6


def test_hand_computed_relative_error():
    meta = _meta(4)
    # sums (pos, imp): q1 (1.8, 0.2) correct; q2 (0.2, 1.8) wrong; q3 (1, 1) tie; q4 (1.2, 0.4) correct
    p = {1: [0.9, 0.9, 0.1, 0.1], 2: [0.1, 0.1, 0.9, 0.9], 3: [0.5, 0.5, 0.7, 0.3], 4: [0.6, 0.6, 0.2, 0.2]}
    scores = pd.Series({m: p[int(m.split("/")[1])][int(m.split("/")[2]) - 1] for m in meta["movie"]})
    t = score_table(scores, meta, model="m", n_boot=0)
    assert _get(t, "L_R")["value"] == pytest.approx((0 + 1 + 0.5 + 0) / 4)
    assert _get(t, "L_R_strict")["value"] == pytest.approx(1 / 4)
    assert np.isnan(_get(t, "L_R")["ci_low"])
    # block O1 = quadruplets 2 and 4 (q % 2 == 0 -> O1)
    assert _get(t, "L_R", block="O1")["value"] == pytest.approx(0.5)


def test_absolute_error_matches_sklearn_with_ties():
    rng = np.random.default_rng(1)
    p = rng.integers(0, 5, size=80) / 4.0  # many ties
    y = rng.random(80) < 0.5
    assert absolute_error(p, y) == pytest.approx(1 - roc_auc_score(y, p))


def test_bootstrap_interval_contains_value_and_is_seeded():
    meta = _meta(12)
    rng = np.random.default_rng(0)
    scores = pd.Series(rng.random(len(meta)), index=meta["movie"])
    a = score_table(scores, meta, model="r", n_boot=300, seed=5)
    b = score_table(scores, meta, model="r", n_boot=300, seed=5)
    pd.testing.assert_frame_equal(a, b)
    wide = a["n_quadruplets"] >= 8  # psybench.intphys.metrics.MIN_QUADRUPLETS_CI
    assert wide.any() and (~wide).any()
    assert (a.loc[wide, "ci_low"] <= a.loc[wide, "value"] + 1e-12).all()
    assert (a.loc[wide, "value"] <= a.loc[wide, "ci_high"] + 1e-12).all()
    # too few quadruplets: no interval at all, never a zero-width one
    assert a.loc[~wide, ["ci_low", "ci_high"]].isna().all().all()
    # every grouping from finest to overall: (2 blocks+1) x (2 vis+1) x (1+1) x (1+1) groups at most
    assert set(a["motion"]) == {"static", "all"} and (a["block"] == "all").any()


def test_answer_roundtrip(tmp_path):
    meta = _meta(2)
    s = pd.Series(np.linspace(0, 1, 8), index=meta["movie"])
    write_answer(s, tmp_path / "answer.txt")
    first = (tmp_path / "answer.txt").read_text().splitlines()[0]
    assert first.split()[0] == "O1/0002/1"
    back = read_answer(tmp_path / "answer.txt", meta)
    pd.testing.assert_series_equal(back, s.sort_index(), check_names=False, check_index_type=False)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda L: L[:3] + ["O9/0001/1 0.5"] + L[4:], r"line 4 \('O9/0001/1 0.5'\): unknown movie"),
        (lambda L: L[:2] + [L[2].split()[0] + " 1.5"] + L[3:], r"line 3 .* outside \[0, 1\]"),
        (lambda L: L[:2] + [L[2].split()[0] + " nan"] + L[3:], r"line 3 .* outside \[0, 1\]"),
        (lambda L: L[:2] + [L[2].split()[0] + " high"] + L[3:], r"line 3 .*'high' is not a number"),
        (lambda L: L + [L[0]], r"line 9 .*duplicate movie .* already on line 1"),
        (lambda L: L[:3] + L[4:], r"line 1 .*incomplete quadruplet O1/0002"),
        (lambda L: L[:2] + ["O1/0002/3"] + L[3:], r"line 3 .*expected"),
    ],
)
def test_answer_validation_errors(tmp_path, edit, message):
    meta = _meta(2)
    write_answer(pd.Series(0.5, index=meta["movie"]), tmp_path / "a.txt")
    lines = (tmp_path / "a.txt").read_text().splitlines()
    (tmp_path / "b.txt").write_text("\n".join(edit(lines)) + "\n")
    with pytest.raises(AnswerFormatError, match=message):
        read_answer(tmp_path / "b.txt", meta)


def test_unknown_conditions_count_only_in_coarse_groups():
    """Quadruplets without conditions (NA) are in the per-block and overall rows, in no per-condition row,
    and no "unknown" condition appears."""
    meta = _meta(12)
    unknown = meta["quadruplet"].isin(["O1/0002", "O1/0004"])
    meta.loc[unknown, ["visibility", "motion", "n_objects"]] = None
    scores = pd.Series(np.where(meta["possible"], 0.9, 0.1), index=meta["movie"])
    scores[meta.loc[unknown, "movie"].to_numpy()] = np.where(meta.loc[unknown, "possible"], 0.1, 0.9)  # both wrong
    t = score_table(scores, meta, model="m", n_boot=0)
    assert not t[["visibility", "motion", "n_objects"]].isin(["unknown", "None", "nan", "<NA>"]).any().any()
    assert _get(t, "L_R")["n_quadruplets"] == 12 and _get(t, "L_R")["value"] == pytest.approx(2 / 12)
    assert _get(t, "L_R", block="O1")["value"] == pytest.approx(2 / 6)
    per_cond = t[(t["visibility"] != "all") & (t["metric"] == "L_R")]
    assert per_cond.groupby(["visibility"])["n_quadruplets"].max().sum() <= 10
    assert (per_cond.loc[per_cond["block"] == "O1", "value"] == 0).all()


def test_answer_ids_follow_the_official_scorer_and_both_spellings_read_back(tmp_path):
    """The official scorer selects scenes by the words O1 / visible / occluded in the id: a descriptive folder is
    kept as distributed, a digits-only one is spelled from its conditions, unknown conditions keep the short id;
    read_answer maps every spelling back to the movie, and one movie under two spellings is a duplicate."""
    from psybench.intphys.answer import answer_ids

    meta = _meta(3)
    meta["folder"] = ["0001_O2_test_occluded_dynamic_2_nobj3"] * 4 + ["0002"] * 4 + ["0003"] * 4
    meta.loc[meta["quadruplet"] == "O2/0003", ["visibility", "motion", "n_objects"]] = None
    ids = answer_ids(meta)
    assert ids["O2/0001/1"] == "O2/0001_O2_test_occluded_dynamic_2_nobj3/1"  # as on disk (not the metadata)
    assert ids["O1/0002/4"] == "O1/0002_O1_test_visible_static_nobj1/4"
    assert ids["O2/0003/2"] == "O2/0003/2"
    s = pd.Series(np.linspace(0, 1, 12), index=meta["movie"])
    write_answer(s, tmp_path / "a.txt", metadata=meta)
    lines = (tmp_path / "a.txt").read_text().splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(ids) and len(lines) == 12
    back = read_answer(tmp_path / "a.txt", meta)
    pd.testing.assert_series_equal(back, s.sort_index(), check_names=False, check_index_type=False)
    mixed = [line.replace("0002_O1_test_visible_static_nobj1", "0002") for line in lines]  # old short spelling
    (tmp_path / "b.txt").write_text("\n".join(mixed) + "\n")
    pd.testing.assert_series_equal(read_answer(tmp_path / "b.txt", meta), back)
    (tmp_path / "c.txt").write_text("\n".join(lines + ["O1/0002/1 0.5"]) + "\n")
    with pytest.raises(AnswerFormatError, match=r"line 13 .*duplicate movie 'O1/0002/1'"):
        read_answer(tmp_path / "c.txt", meta)
