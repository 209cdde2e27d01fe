"""Average rank (Middlebury baseline) and ranks with statistical ties (Neilson & Yang 2008)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from psybench.aggregate.pareto import dominance_matrix, dominates, pareto_fronts
from psybench.aggregate.ranks import average_ranks, ranks_with_ties


# --------------------------------------------------------------------------- average rank
def test_average_ranks_hand_computed_with_ties_and_directions():
    F = np.array([[1.0, 0.9], [2.0, 0.9], [2.0, 0.5]])
    r = average_ranks(F, directions=["min", "max"])
    # column 0: 1, 2.5, 2.5; column 1 (higher better): 1.5, 1.5, 3
    np.testing.assert_allclose(r.ranks, [[1, 1.5], [2.5, 1.5], [2.5, 3]])
    np.testing.assert_allclose(r.average, [1.25, 2.0, 2.75])
    np.testing.assert_array_equal(r.count, [2, 2, 2])


def test_average_ranks_are_scipys_rankdata_to_the_bit():
    """The NumPy tie averaging gives scipy.stats.rankdata(method="average")'s values (ties, infinities, -0.0)."""
    rng = np.random.default_rng(3)
    special = rng.choice([-np.inf, 0.0, -0.0, 1.0, np.inf], 40)
    F = np.column_stack([rng.integers(0, 4, 40), rng.normal(size=40), special])
    r = average_ranks(F, directions=["min", "max", "min"])
    want = np.column_stack([stats.rankdata(F[:, 0]), stats.rankdata(-F[:, 1]), stats.rankdata(F[:, 2])])
    assert r.ranks.dtype == want.dtype and r.ranks.tobytes() == want.tobytes()


def test_average_ranks_missing_policies():
    F = np.array([[1.0, np.nan], [2.0, 5.0], [3.0, 4.0], [np.nan, np.nan]])
    r = average_ranks(F)
    np.testing.assert_array_equal(r.count, [1, 2, 2, 0])
    # column 1 is ranked among the two entries that have it
    np.testing.assert_allclose(r.ranks[:, 1], [np.nan, 2, 1, np.nan])
    np.testing.assert_allclose(r.average, [1.0, 2.0, 2.0, np.nan])
    with pytest.raises(ValueError, match="criterion 1 of row 0"):
        average_ranks(F, missing="raise")
    with pytest.raises(ValueError, match="missing='drop'"):
        average_ranks(F, missing="drop")


def test_average_rank_order_flips_while_dominance_does_not():
    """Cabezas & Trujillo's (2011) argument against the average rank, made concrete.

    A wins 3 of 5 criteria against B, so A ranks above B.  C is dominated by B and
    lies between B and A exactly in the two criteria B wins: adding C pushes A down
    in those columns only, and B overtakes A.  Whether one model dominates another
    is a property of the pair and cannot change.
    """
    A = [1.0, 1.0, 1.0, 3.0, 3.0]
    B = [2.0, 2.0, 2.0, 1.0, 1.0]
    C = [5.0, 5.0, 5.0, 2.0, 2.0]
    two = average_ranks(np.array([A, B])).average
    three = average_ranks(np.array([A, B, C])).average
    np.testing.assert_allclose(two, [7 / 5, 8 / 5])
    np.testing.assert_allclose(three, [9 / 5, 8 / 5, 13 / 5])
    assert two[0] < two[1]  # A before B ...
    assert three[0] > three[1]  # ... B before A once C is present
    # Pareto: A and B are incomparable with or without C, B dominates C.
    D2 = dominance_matrix(np.array([A, B]))
    D3 = dominance_matrix(np.array([A, B, C]))
    np.testing.assert_array_equal(D3[:2, :2], D2)
    assert not D2.any()
    assert dominates(B, C) and not dominates(A, C)
    np.testing.assert_array_equal(pareto_fronts(np.array([A, B])), [0, 0])
    np.testing.assert_array_equal(pareto_fronts(np.array([A, B, C])), [0, 0, 1])


def test_random_pairs_dominance_is_invariant_but_rank_order_is_not():
    """Over random tables: adding a third entry never changes a pair's dominance, and it
    does flip some pairs' average-rank order (the flip is not a contrived corner case)."""
    rng = np.random.default_rng(11)
    flips = 0
    for _ in range(200):
        F = rng.integers(0, 10, size=(3, 5)).astype(float)
        D2 = dominance_matrix(F[:2])
        D3 = dominance_matrix(F)
        np.testing.assert_array_equal(D3[:2, :2], D2)
        a2 = average_ranks(F[:2]).average
        a3 = average_ranks(F).average
        if np.sign(a2[0] - a2[1]) * np.sign(a3[0] - a3[1]) < 0:
            flips += 1
    assert flips > 0


# --------------------------------------------------------------------- ranks with ties
def paired_samples(seed, shift_c=1.0, n=150):
    rng = np.random.default_rng(seed)
    difficulty = rng.gamma(2.0, 1.0, size=n)  # items differ; models share them (paired)
    return {
        "a": difficulty + rng.normal(0, 0.5, n),
        "b": difficulty + rng.normal(0, 0.5, n),  # same distribution as a
        "c": difficulty + shift_c + rng.normal(0, 0.5, n),  # clearly worse (higher error)
        "best": difficulty - 1.0 + rng.normal(0, 0.5, n),  # clearly better
    }


def test_same_distribution_shares_rank_and_clear_winner_is_alone():
    t = ranks_with_ties(paired_samples(0), n_boot=1000, seed=0).set_index("model")
    assert t.loc["best", "rank"] == 1
    assert (t["rank"] == 1).sum() == 1
    assert t.loc["a", "rank"] == t.loc["b", "rank"] == 2
    assert t.loc["c", "rank"] == 3
    assert t.loc["c", "leader"] == "c" and t.loc["b", "leader"] == t.loc["a", "leader"]


def test_ranks_with_ties_is_deterministic_and_order_free():
    s = paired_samples(1)
    t1 = ranks_with_ties(s, seed=3)
    t2 = ranks_with_ties(dict(reversed(list(s.items()))), seed=3)
    assert t1.equals(t2)


def test_higher_is_better_mirrors_lower_is_better():
    s = paired_samples(2)
    lo = ranks_with_ties(s, direction="min", seed=5).set_index("model")
    hi = ranks_with_ties({k: -v for k, v in s.items()}, direction="max", seed=5).set_index("model")
    np.testing.assert_array_equal(lo["rank"], hi.loc[lo.index, "rank"])
    np.testing.assert_allclose(lo["ci_low"], -hi.loc[lo.index, "ci_high"])


def test_paired_interval_matches_scipy_bootstrap():
    """Oracle: scipy.stats.bootstrap (percentile) of the mean paired difference."""
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1, 120)
    y = x + 0.3 + rng.normal(0, 0.8, 120)
    t = ranks_with_ties({"x": x, "y": y}, n_boot=4000, seed=1).set_index("model")
    ref = stats.bootstrap(
        (y - x,), np.mean, n_resamples=4000, method="percentile", confidence_level=0.95, rng=np.random.default_rng(2)
    ).confidence_interval
    se = np.std(y - x, ddof=1) / np.sqrt(120)
    # two Monte Carlo estimates of the same quantiles: agree to a small fraction of a SE
    assert t.loc["y", "ci_low"] == pytest.approx(ref.low, abs=0.15 * se)
    assert t.loc["y", "ci_high"] == pytest.approx(ref.high, abs=0.15 * se)
    assert t.loc["y", "diff"] == pytest.approx(np.mean(y - x))


def test_false_split_rate_is_near_alpha():
    """Two models from one distribution are split (declared different) in about alpha
    of the repetitions; a shift of one item-SD is split nearly always."""
    splits = power = 0
    reps = 60
    for seed in range(reps):
        rng = np.random.default_rng(100 + seed)
        a, b = rng.normal(0, 1, 60), rng.normal(0, 1, 60)
        t = ranks_with_ties({"a": a, "b": b}, n_boot=400, seed=seed, paired=False)
        splits += t["rank"].nunique() > 1
        t = ranks_with_ties({"a": a, "b": b + 1.0}, n_boot=400, seed=seed, paired=False)
        power += t["rank"].nunique() > 1
    assert splits / reps <= 0.15
    assert power / reps >= 0.9


def test_unpaired_lengths_and_errors():
    rng = np.random.default_rng(0)
    t = ranks_with_ties({"short": rng.normal(0, 1, 30), "long": rng.normal(5, 1, 80)})
    assert t["model"].tolist() == ["short", "long"] and t["rank"].tolist() == [1, 2]
    assert t["n_items"].tolist() == [30, 80]
    with pytest.raises(ValueError, match="paired=True"):
        ranks_with_ties({"a": [1.0, 2.0], "b": [1.0]}, paired=True)
    with pytest.raises(ValueError, match="model 'b'"):
        ranks_with_ties({"a": [1.0, 2.0], "b": [1.0, np.nan]})
    with pytest.raises(ValueError, match="direction"):
        ranks_with_ties({"a": [1.0]}, direction="up")
