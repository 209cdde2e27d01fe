"""Pareto dominance, Pareto-optimal sets and iterated fronts of error vectors.

This is the evaluation model of Cabezas & Trujillo (2011), A non-linear quantitative
evaluation approach for disparity estimation, VISAPP (Pareto dominance applied to disparity
estimation, contrasted with Middlebury's average rank): every algorithm ``a`` (here:
every model, or every model x parameter set) has an error vector ``v(a)`` over
criteria that are incommensurable and equally important (Sec. 3.1); ``v`` dominates
``v'`` (``v < v'``) when ``v`` is no worse in every criterion and strictly better in
at least one; the Pareto-optimal set is ``PA* = {v' in PA | there is no v in PA with
v < v'}`` (Eq. 9), and the algorithms whose vectors are in ``PA*`` form ``A*``
(Eq. 10-11).  ``|A*| = 1`` means one superior algorithm, ``|A*| > 1`` a set of
comparable algorithms, all superior to ``A \\ A*`` (Sec. 3.2).  Removing ``A*`` and
recomputing until nothing is left gives clusters of similar performance (Sec. 3.3,
"iteratively"); :func:`pareto_fronts` returns those clusters as front indices.

Conventions (fixed and tested)
------------------------------
* Rows are entries (models), columns are criteria: ``F`` has shape ``(n, m)``.
* ``directions`` gives, per criterion, ``"min"`` (lower is better, the default, as
  for the paper's bad-pixel percentages) or ``"max"`` (higher is better);
  ``"lower"``/``"higher"`` are accepted as synonyms (the long score table uses them).
* Tolerance (the paper's future work, Sec. 5: "tolerances in regard to the
  comparison of error value vectors"): with ``epsilon`` (``eps_i >= 0`` per
  criterion) ``a`` dominates ``b`` iff ``a`` is no worse than ``b`` in every
  criterion and better than ``b`` by MORE than ``eps_i`` in at least one.  With
  ``epsilon`` 0 or None this is ordinary Pareto dominance.  The relation stays
  irreflexive and transitive, so the Pareto set is never empty.
* Identical vectors do not dominate each other: all copies stay in the same front.
* Missing values (NaN): a criterion where either of a pair is NaN is not
  comparable.  ``missing="raise"`` (default) raises a ValueError naming the row and
  criterion; ``missing="ignore"`` compares each pair on the criteria both have.
  Pairwise ignoring can make dominance cyclic (a < b < c < a), in which case the
  Pareto set may be empty and :func:`pareto_fronts` raises a ValueError naming the
  rows left over.  NaN is never treated as 0 or as a value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.aggregate.criteria import check_missing, criterion_label, normalize_directions, normalize_epsilon

__all__ = [
    "dominates",
    "dominance_matrix",
    "pareto_set",
    "pareto_fronts",
    "pareto_table",
]

# Number of float64 comparisons per block of the broadcast (n_block, n, m) arrays:
# keeps the temporaries at a few tens of MB for n up to a few thousand.
_BLOCK_ELEMENTS = 1 << 21


def _as_matrix(F: Any, *, names: Sequence[str] | None = None) -> np.ndarray:
    G = np.asarray(F, dtype=float)
    if G.ndim != 2:
        raise ValueError(f"error vectors must form a 2-D array (entries x criteria); got shape {G.shape}")
    if G.shape[1] == 0:
        raise ValueError("there are no criteria to compare (array has 0 columns)")
    if names is not None and len(names) != G.shape[1]:
        raise ValueError(f"{len(names)} criterion names for {G.shape[1]} criteria")
    return G


def _prepare(F, directions, epsilon, missing, names):
    """Validate once; return errors in "lower is better" space and the tolerances."""
    check_missing(missing)
    G = _as_matrix(F, names=names)
    m = G.shape[1]
    is_max = normalize_directions(directions, m, names=names)
    eps = normalize_epsilon(epsilon, m, names=names)
    if missing == "raise":
        nan = np.isnan(G)
        if nan.any():
            i, j = np.argwhere(nan)[0]
            raise ValueError(
                f"{criterion_label(int(j), names)} of row {int(i)} is missing (NaN); missing values are "
                "not comparable: pass missing='ignore' to compare each pair on the criteria both have, "
                "or drop the row/criterion"
            )
    # Negation is exact, so "max" criteria are compared exactly as "min" ones.
    G = np.where(is_max, -G, G)
    return G, eps


def _dominance(G: np.ndarray, eps: np.ndarray, ignore_missing: bool) -> np.ndarray:
    """D[i, j] = row i dominates row j, for G already in "lower is better" space.

    Broadcast comparison in row blocks of shape (b, n, m); internal code trusts G.
    """
    n, m = G.shape
    D = np.zeros((n, n), dtype=bool)
    if n == 0:
        return D
    # "a better than b by more than eps" <=> b - a > eps <=> a < b - eps.
    G_minus_eps = G - eps
    nan = np.isnan(G) if ignore_missing else None
    block = max(1, _BLOCK_ELEMENTS // max(1, n * m))
    for start in range(0, n, block):
        stop = min(n, start + block)
        A = G[start:stop, None, :]  # (b, 1, m): candidate dominators
        no_worse = A <= G[None, :, :]  # (b, n, m)
        better = A < G_minus_eps[None, :, :]  # False wherever a NaN is involved
        if ignore_missing:
            not_comparable = nan[start:stop, None, :] | nan[None, :, :]
            no_worse |= not_comparable
        D[start:stop] = no_worse.all(axis=2) & better.any(axis=2)
    return D


def dominates(
    a: Any,
    b: Any,
    *,
    directions: str | Sequence[str] | None = None,
    epsilon: Any = None,
    missing: str = "raise",
) -> bool:
    """Whether error vector ``a`` (epsilon-)dominates error vector ``b``.

    Pareto dominance ``v < v'`` (Cabezas & Trujillo 2011, sec. 3.1): ``a`` is no worse than
    ``b`` in every criterion and better in at least one.  With tolerances
    (Cabezas & Trujillo 2011, sec. 5 future work), "better" means better by more than
    ``eps_i``.  The answer depends only on ``a`` and ``b``, never on other entries.

    Parameters
    ----------
    a, b : array_like, shape (m,)
        Error vectors of two entries over the same m criteria.
    directions : None, str or sequence of str, length m
        Per criterion ``"min"`` (lower is better; default) or ``"max"``;
        ``"lower"``/``"higher"`` are synonyms.
    epsilon : None, float or array_like, shape (m,)
        Tolerance ``eps_i >= 0`` per criterion (scalar: same for all).  ``a`` must
        beat ``b`` by strictly more than ``eps_i`` in at least one criterion
        ``i``, and be no worse (``a_i <= b_i`` for "min") in all.  None or 0 gives
        ordinary Pareto dominance.
    missing : {"raise", "ignore"}
        NaN in either vector: ``"raise"`` raises ValueError naming the criterion;
        ``"ignore"`` drops criteria that are NaN in either vector.  With no
        comparable criterion left, ``a`` does not dominate ``b``.

    Returns
    -------
    bool

    Examples
    --------
    >>> dominates([1, 2], [1, 3])
    True
    >>> dominates([1, 2], [1, 2])  # identical vectors do not dominate each other
    False
    >>> dominates([1, 2.5], [1, 3], epsilon=0.5)  # better by exactly eps: not enough
    False
    """
    av = np.asarray(a, dtype=float)
    bv = np.asarray(b, dtype=float)
    if av.ndim != 1 or av.shape != bv.shape:
        raise ValueError(f"a and b must be 1-D vectors of equal length; got shapes {av.shape} and {bv.shape}")
    check_missing(missing)
    if missing == "raise":
        for name, v in (("a", av), ("b", bv)):
            nan = np.flatnonzero(np.isnan(v))
            if nan.size:
                raise ValueError(
                    f"criterion {int(nan[0])} of {name} is missing (NaN) and not comparable; "
                    "pass missing='ignore' to drop criteria missing in either vector"
                )
    G, eps = _prepare(np.stack([av, bv]), directions, epsilon, missing, None)
    return bool(_dominance(G, eps, missing == "ignore")[0, 1])


def dominance_matrix(
    F: Any,
    *,
    directions: str | Sequence[str] | None = None,
    epsilon: Any = None,
    missing: str = "raise",
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Pairwise (epsilon-)dominance of the rows of ``F``.

    Parameters
    ----------
    F : array_like, shape (n, m)
        Error vectors, one row per entry, one column per criterion.
    directions, epsilon, missing
        As in :func:`dominates`.
    names : sequence of str, length m, optional
        Criterion names for error messages.

    Returns
    -------
    D : ndarray of bool, shape (n, n)
        ``D[i, j]`` is True iff row ``i`` dominates row ``j``.  ``D[i, j]`` equals
        ``dominates(F[i], F[j], ...)``: it never depends on the other rows.
    """
    G, eps = _prepare(F, directions, epsilon, missing, names)
    return _dominance(G, eps, missing == "ignore")


def pareto_set(
    F: Any,
    *,
    directions: str | Sequence[str] | None = None,
    epsilon: Any = None,
    missing: str = "raise",
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Mask of the Pareto-optimal rows (``PA*``, Cabezas & Trujillo 2011, eq. 9).

    Parameters
    ----------
    F : array_like, shape (n, m)
        Error vectors, one row per entry.
    directions, epsilon, missing, names
        As in :func:`dominance_matrix`.

    Returns
    -------
    mask : ndarray of bool, shape (n,)
        True for rows that no other row dominates.  Duplicated vectors do not
        dominate each other, so all copies of a non-dominated vector are kept.
        Never empty for n > 0 unless ``missing="ignore"`` produced a dominance
        cycle.
    """
    D = dominance_matrix(F, directions=directions, epsilon=epsilon, missing=missing, names=names)
    return ~D.any(axis=0)


def _fronts_from_dominance(D: np.ndarray) -> np.ndarray:
    """Iterated removal of the Pareto set, in O(n^2) overall.

    ``count[j]`` = number of still-present rows that dominate j; removing a front
    subtracts its rows' contributions (the bookkeeping of Deb et al.'s fast
    non-dominated sort), which is exactly "remove A*, recompute A*" of
    Cabezas & Trujillo 2011, sec. 3.3.
    """
    n = D.shape[0]
    front = np.full(n, -1, dtype=np.int64)
    count = D.sum(axis=0).astype(np.int64)
    remaining = np.ones(n, dtype=bool)
    current = count == 0
    k = 0
    while current.any():
        front[current] = k
        remaining &= ~current
        count -= D[current].sum(axis=0)
        current = remaining & (count == 0)
        k += 1
    if remaining.any():
        rows = np.flatnonzero(remaining).tolist()
        raise ValueError(
            f"rows {rows[:20]}{' ...' if len(rows) > 20 else ''} dominate each other in a cycle, "
            "which happens only when missing values are ignored pairwise (missing='ignore'); "
            "restrict the criteria or drop entries with missing values"
        )
    return front


def pareto_fronts(
    F: Any,
    *,
    directions: str | Sequence[str] | None = None,
    epsilon: Any = None,
    missing: str = "raise",
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Front index per row by iterated removal of the Pareto set (Cabezas & Trujillo 2011, sec. 3.3).

    Front 0 is ``A*``; front 1 is the Pareto set of ``A \\ A*``, and so on until
    no row is left.  Rows in one front are mutually non-dominated ("comparable
    performance"); every row of front k > 0 is dominated by some row of front k-1.

    Parameters
    ----------
    F : array_like, shape (n, m)
        Error vectors, one row per entry.
    directions, epsilon, missing, names
        As in :func:`dominance_matrix`.

    Returns
    -------
    front : ndarray of int64, shape (n,)
        0-based front index of each row.

    Raises
    ------
    ValueError
        Invalid arguments, NaN with ``missing="raise"``, or a dominance cycle
        (possible only with ``missing="ignore"``).
    """
    D = dominance_matrix(F, directions=directions, epsilon=epsilon, missing=missing, names=names)
    return _fronts_from_dominance(D)


def _per_criterion(value: Any, criteria: Sequence[str], what: str) -> Any:
    """Expand a mapping {criterion: value} to a list aligned with ``criteria``."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(criteria))
        if unknown:
            raise ValueError(f"{what} names unknown criteria {unknown}; criteria are {list(criteria)}")
        default = "min" if what == "directions" else 0.0
        return [value.get(c, default) for c in criteria]
    return value


def pareto_table(
    df: pd.DataFrame,
    *,
    criteria: Sequence[str] | None = None,
    directions: str | Sequence[str] | Mapping[str, str] | None = None,
    epsilon: Any = None,
    label_col: str | None = None,
    missing: str = "raise",
) -> pd.DataFrame:
    """Pareto optimality, fronts and Middlebury-style average rank of a wide table.

    Parameters
    ----------
    df : pandas.DataFrame, shape (n, ...)
        One row per entry (model, or model x parameter set for an intra-technique
        evaluation, Cabezas & Trujillo 2011, sec. 3.3), one column per criterion.
    criteria : sequence of str, optional
        Criterion columns; default every numeric column except ``label_col``.
    directions : None, str, sequence or mapping {criterion: "min"/"max"}
        As in :func:`dominates`; a mapping defaults unnamed criteria to "min".
    epsilon : None, float, sequence or mapping {criterion: eps}
        Per-criterion tolerance, as in :func:`dominates`.
    label_col : str, optional
        Column naming the entries; default the index (its name, or "entry").
    missing : {"raise", "ignore"}
        Pareto: as in :func:`dominates`.  Average rank: "raise" likewise,
        "ignore" averages each entry's ranks over the criteria it has
        (:func:`psybench.aggregate.ranks.average_ranks` with ``missing="omit"``).

    Returns
    -------
    pandas.DataFrame
        Columns: the label, the criteria, ``pareto_optimal`` (bool, in ``A*``),
        ``front`` (int, **1-based** for people: 1 = Pareto-optimal set),
        ``average_rank`` (float, lower is better), ``n_ranked`` (criteria the
        average is over), ``n_dominators`` (entries dominating this one) and
        ``dominated_by`` (their labels, "; "-separated).  Sorted by front, then
        average rank, then label.
    """
    from psybench.aggregate.ranks import average_ranks

    if label_col is None:
        table = df.reset_index()
        label_col = df.index.name if df.index.name is not None else "index"
        if label_col == "index":
            table = table.rename(columns={"index": "entry"})
            label_col = "entry"
    else:
        if label_col not in df.columns:
            raise ValueError(f"label column {label_col!r} is not in the table (columns: {list(df.columns)})")
        table = df.reset_index(drop=True)
    if criteria is None:
        criteria = [c for c in table.columns if c != label_col and pd.api.types.is_numeric_dtype(table[c])]
    criteria = list(criteria)
    if not criteria:
        raise ValueError("no criteria: pass criteria=[...] naming numeric columns")
    for c in criteria:
        if c not in table.columns:
            raise ValueError(f"criterion column {c!r} is not in the table (columns: {list(table.columns)})")
    dirs = _per_criterion(directions, criteria, "directions")
    eps = _per_criterion(epsilon, criteria, "epsilon")
    names = [str(c) for c in criteria]
    F = table[criteria].to_numpy(dtype=float)
    D = dominance_matrix(F, directions=dirs, epsilon=eps, missing=missing, names=names)
    front = _fronts_from_dominance(D)
    ranks = average_ranks(
        F, directions=dirs, missing="omit" if missing == "ignore" else "raise", names=names
    )
    labels = table[label_col].astype(str).to_numpy()
    out = table[[label_col, *criteria]].copy()
    out["pareto_optimal"] = front == 0
    out["front"] = front + 1
    out["average_rank"] = ranks.average
    out["n_ranked"] = ranks.count
    out["n_dominators"] = D.sum(axis=0).astype(np.int64)
    out["dominated_by"] = ["; ".join(labels[D[:, j]]) for j in range(len(labels))]
    out = out.sort_values(["front", "average_rank", label_col], kind="stable", na_position="last")
    return out.reset_index(drop=True)
