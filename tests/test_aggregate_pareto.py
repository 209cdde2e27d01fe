"""Pareto dominance, sets and fronts (Cabezas & Trujillo 2011) against an independent brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import paretoset  # independent oracle, pinned in the test extra so it never skips
import pytest
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting  # the second oracle, likewise

from psybench.aggregate.pareto import dominance_matrix, dominates, pareto_fronts, pareto_set, pareto_table


# ----------------------------------------------------------------------------- oracle
# Written from the definition in Cabezas & Trujillo 2011, sec. 3.1, with plain Python loops and
# subtraction (the library uses broadcast comparisons a < b - eps on negated columns).
def brute_dominates(a, b, dirs, eps):
    no_worse, better = True, False
    for k in range(len(a)):
        gain = (b[k] - a[k]) if dirs[k] == "min" else (a[k] - b[k])  # > 0: a better
        if gain < 0:
            no_worse = False
        if gain > eps[k]:
            better = True
    return no_worse and better


def brute_set(rows, F, dirs, eps):
    return [i for i in rows if not any(brute_dominates(F[j], F[i], dirs, eps) for j in rows if j != i)]


def brute_fronts(F, dirs, eps):
    remaining = list(range(len(F)))
    front = np.full(len(F), -1)
    k = 0
    while remaining:
        best = brute_set(remaining, F, dirs, eps)
        front[best] = k
        remaining = [i for i in remaining if i not in best]
        k += 1
    return front


def random_vectors(seed, n=36, m=3):
    """Small integer vectors (many ties) with duplicated rows injected."""
    rng = np.random.default_rng(seed)
    F = rng.integers(0, 5, size=(n, m)).astype(float)
    F[rng.choice(n, 6, replace=False)] = F[rng.choice(n, 6, replace=False)]  # duplicates
    F[0] = F[1]
    dirs = list(rng.choice(["min", "max"], size=m))
    return F, dirs


EPSILONS = {
    "none": lambda m: None,
    "zero": lambda m: 0.0,
    "scalar": lambda m: 1.0,
    "per_criterion": lambda m: np.array([0.5, 0.0, 2.0][:m]),
}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("eps_kind", sorted(EPSILONS))
def test_sets_and_fronts_equal_brute_force(seed, eps_kind):
    F, dirs = random_vectors(seed)
    eps = EPSILONS[eps_kind](F.shape[1])
    eps_vec = np.broadcast_to(np.asarray(0.0 if eps is None else eps, float), (F.shape[1],))
    want_fronts = brute_fronts(F, dirs, eps_vec)
    got_fronts = pareto_fronts(F, directions=dirs, epsilon=eps)
    np.testing.assert_array_equal(got_fronts, want_fronts)
    want_set = np.zeros(len(F), bool)
    want_set[brute_set(range(len(F)), F, dirs, eps_vec)] = True
    np.testing.assert_array_equal(pareto_set(F, directions=dirs, epsilon=eps), want_set)
    assert want_set.any()  # PA* is never empty (Cabezas & Trujillo 2011, sec. 3.2)


@pytest.mark.parametrize("seed", range(3))
def test_dominance_matrix_equals_pairwise_dominates(seed):
    F, dirs = random_vectors(seed, n=15)
    D = dominance_matrix(F, directions=dirs, epsilon=0.5)
    for i in range(len(F)):
        for j in range(len(F)):
            assert D[i, j] == dominates(F[i], F[j], directions=dirs, epsilon=0.5)
            assert D[i, j] == brute_dominates(F[i], F[j], dirs, [0.5] * 3)


@pytest.mark.parametrize("seed", range(4))
def test_front_structure(seed):
    """Fronts are antichains; each later front is dominated by the one before; a dominated
    entry is never in the first front; identical vectors share a front."""
    F, dirs = random_vectors(seed, n=60, m=4)
    front = pareto_fronts(F, directions=dirs)
    D = dominance_matrix(F, directions=dirs)
    for k in range(front.max() + 1):
        members = np.flatnonzero(front == k)
        assert not D[np.ix_(members, members)].any()
        if k > 0:
            prev = np.flatnonzero(front == k - 1)
            assert D[np.ix_(prev, members)].any(axis=0).all()
    first = np.flatnonzero(front == 0)
    assert not D[:, first].any()
    for i in range(len(F)):
        for j in range(len(F)):
            if np.array_equal(F[i], F[j]):
                assert front[i] == front[j]


def test_duplicates_all_stay_in_the_set():
    F = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [3.0, 3.0], [3.0, 3.0]])
    np.testing.assert_array_equal(pareto_set(F), [True, True, True, False, False])
    np.testing.assert_array_equal(pareto_fronts(F), [0, 0, 0, 1, 1])
    assert not dominates(F[0], F[1])


def test_single_superior_entry():
    """|A*| = 1: one entry minimises every criterion (Cabezas & Trujillo 2011, sec. 3.2)."""
    F = np.array([[0.1, 0.2, 0.3], [0.2, 0.2, 0.3], [0.5, 0.1, 0.9]])
    F = np.vstack([F, [0.05, 0.05, 0.05]])
    np.testing.assert_array_equal(pareto_set(F), [False, False, False, True])


def test_dominance_does_not_depend_on_other_entries():
    """D restricted to any subset equals the dominance computed on that subset alone."""
    rng = np.random.default_rng(7)
    F = rng.integers(0, 4, size=(30, 3)).astype(float)
    D = dominance_matrix(F, directions=["min", "max", "min"], epsilon=[0, 1, 0.5])
    for _ in range(10):
        S = np.sort(rng.choice(30, size=rng.integers(2, 30), replace=False))
        D_sub = dominance_matrix(F[S], directions=["min", "max", "min"], epsilon=[0, 1, 0.5])
        np.testing.assert_array_equal(D_sub, D[np.ix_(S, S)])


def test_epsilon_dominance_hand_computed():
    a, b = [1.0, 2.0], [1.5, 2.0]
    assert dominates(a, b)  # ordinary Pareto: better by 0.5 in criterion 0
    assert not dominates(a, b, epsilon=[0.5, 0.0])  # better by exactly eps: not more
    assert dominates(a, b, epsilon=[0.4, 0.0])
    assert dominates([1.0, 1.9], b, epsilon=[0.5, 0.05])  # 0.1 > 0.05 in criterion 1
    # a is slightly worse in criterion 1 (within eps): "no worse in every criterion" fails
    assert not dominates([0.0, 1.01], [1.0, 1.0], epsilon=0.1)
    # "max" criterion: higher is better; gain 3 - 2 = 1
    assert dominates([3.0, 1.0], [2.0, 1.0], directions=["max", "min"], epsilon=0.5)
    assert not dominates([3.0, 1.0], [2.0, 1.0], directions=["max", "min"], epsilon=1.0)
    assert not dominates([2.0, 1.0], [3.0, 1.0], directions=["max", "min"])
    # Table: epsilon widens the first front: B beats A only by 0.3 in criterion 0
    F = np.array([[1.3, 5.0], [1.0, 5.0], [4.0, 1.0]])
    np.testing.assert_array_equal(pareto_fronts(F), [1, 0, 0])
    np.testing.assert_array_equal(pareto_fronts(F, epsilon=[0.5, 0.5]), [0, 0, 0])


def test_missing_values():
    with pytest.raises(ValueError, match="criterion 1 of a is missing"):
        dominates([1.0, np.nan], [2.0, 3.0])
    assert dominates([1.0, np.nan], [2.0, 3.0], missing="ignore")
    assert not dominates([np.nan, np.nan], [2.0, 3.0], missing="ignore")
    F = np.array([[1.0, 2.0], [1.0, np.nan]])
    with pytest.raises(ValueError, match="criterion 'b' of row 1"):
        pareto_set(F, names=["a", "b"])
    # pairwise ignoring can make dominance cyclic: a < c, b < a, c < b
    cyc = np.array([[0.0, 1.0, np.nan], [np.nan, 0.0, 1.0], [1.0, np.nan, 0.0]])
    assert not pareto_set(cyc, missing="ignore").any()
    with pytest.raises(ValueError, match="cycle"):
        pareto_fronts(cyc, missing="ignore")


def test_infinite_values_compare_as_numbers():
    F = np.array([[np.inf, 1.0], [2.0, 1.0], [np.inf, 1.0]])
    np.testing.assert_array_equal(pareto_fronts(F), [1, 0, 1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"directions": ["min", "up"]}, "direction 'up' of criterion 1"),
        ({"directions": ["min"]}, "1 entries but there are 2 criteria"),
        ({"epsilon": [0.1, -1.0]}, "epsilon of criterion 1"),
        ({"epsilon": [0.1, 0.2, 0.3]}, "epsilon has shape"),
        ({"missing": "zero"}, "missing='zero'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pareto_fronts(np.ones((3, 2)), **kwargs)


def test_larger_input_is_blockwise_consistent():
    """n large enough to need several broadcast blocks; compare with a per-row loop."""
    rng = np.random.default_rng(3)
    F = rng.integers(0, 20, size=(1200, 4)).astype(float)
    D = dominance_matrix(F)
    for i in rng.choice(1200, 25, replace=False):
        want = np.all(F[i] <= F, axis=1) & np.any(F[i] < F, axis=1)
        np.testing.assert_array_equal(D[i], want)
    assert (pareto_fronts(F) >= 0).all()


def test_pareto_table_columns_and_order():
    df = pd.DataFrame(
        {
            "model": ["A", "B", "C", "D"],
            "err": [1.0, 2.0, 3.0, 1.0],
            "acc": [0.5, 0.9, 0.4, 0.5],
        }
    )
    t = pareto_table(df, criteria=["err", "acc"], directions={"acc": "max"}, label_col="model")
    assert list(t.columns) == [
        "model",
        "err",
        "acc",
        "pareto_optimal",
        "front",
        "average_rank",
        "n_ranked",
        "n_dominators",
        "dominated_by",
    ]
    by = t.set_index("model")
    assert by.loc[["A", "B", "D"], "front"].tolist() == [1, 1, 1]  # 1-based
    assert by.loc["C", "front"] == 2 and not by.loc["C", "pareto_optimal"]
    assert by.loc["C", "dominated_by"] == "A; B; D"
    assert by.loc["A", "average_rank"] == pytest.approx((1.5 + 2.5) / 2)
    assert t["front"].is_monotonic_increasing


@pytest.mark.parametrize("seed", range(3))
def test_paretoset_oracle(seed):
    F, dirs = random_vectors(seed)
    want = paretoset.paretoset(F, sense=dirs, distinct=False)
    np.testing.assert_array_equal(pareto_set(F, directions=dirs), want)


@pytest.mark.parametrize("seed", range(3))
def test_pymoo_oracle(seed):
    F, dirs = random_vectors(seed)
    G = np.where(np.array(dirs) == "max", -F, F)
    fronts = NonDominatedSorting().do(G)
    want = np.full(len(F), -1)
    for k, idx in enumerate(fronts):
        want[idx] = k
    np.testing.assert_array_equal(pareto_fronts(F, directions=dirs), want)
