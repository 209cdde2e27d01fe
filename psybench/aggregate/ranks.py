"""Ranks: Middlebury-style average rank, and ranks with statistical ties.

Two rankings sit beside the Pareto fronts of :mod:`psybench.aggregate.pareto`:

* :func:`average_ranks` is the baseline Cabezas & Trujillo (2011), A non-linear
  quantitative evaluation approach for disparity estimation, VISAPP, argue against
  (Middlebury, Scharstein & Szeliski 2002; their sec. 1 and Table 1): rank every entry
  separately in each criterion, average the ranks.  It discards the magnitude of
  differences, and the order of two entries can change when an unrelated entry is
  added or removed (tested in ``tests/test_aggregate_ranks.py``).
* :func:`ranks_with_ties` follows Neilson & Yang (2008) as Cabezas & Trujillo 2011 summarise it
  (Sec. 1): "a statistical significance test combined with a greedy clustering to
  rank stereo algorithms. In this way, algorithms of statistically similar
  performance are assigned to the same rank."  The significance test here is a
  bootstrap of the per-item samples (the underlying samples, not their
  means); see the function's Notes for the exact procedure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from psybench.aggregate.criteria import DIRECTION_ALIASES, normalize_directions

__all__ = ["AverageRanks", "average_ranks", "ranks_with_ties"]

_RANK_MISSING = ("omit", "raise")
# Resampled values held at once by the bootstrap (keeps memory at tens of MB).
_BOOT_ELEMENTS = 1 << 21


class AverageRanks(NamedTuple):
    """Result of :func:`average_ranks`.

    Attributes
    ----------
    average : ndarray of float, shape (n,)
        Mean of the entry's per-criterion ranks (1 = best); NaN if the entry has
        no value in any criterion.
    count : ndarray of int, shape (n,)
        Number of criteria the average is over.
    ranks : ndarray of float, shape (n, m)
        Per-criterion ranks (ties share the average rank); NaN where missing.
    """

    average: np.ndarray
    count: np.ndarray
    ranks: np.ndarray


def average_ranks(
    F: Any,
    *,
    directions: str | Sequence[str] | None = None,
    missing: str = "omit",
    names: Sequence[str] | None = None,
) -> AverageRanks:
    """Middlebury-style average rank of each row of ``F``.

    Each criterion (column) is ranked separately, rank 1 = best, tied values share
    the average of the ranks they span (``scipy.stats.rankdata(method="average")``);
    each entry's ranks are then averaged (Cabezas & Trujillo 2011, Table 1, "Avg. Rank").

    Parameters
    ----------
    F : array_like, shape (n, m)
        Scores, one row per entry, one column per criterion.
    directions : None, str or sequence of str, length m
        ``"min"`` (lower is better, default) or ``"max"`` per criterion
        (``"lower"``/``"higher"`` accepted).
    missing : {"omit", "raise"}
        ``"omit"``: a missing value (NaN) is left out; the column is ranked among
        the entries that have it (ranks 1..n_available) and each entry's average
        is over the criteria it has; ``count`` reports how many.  Note that an
        entry ranked on fewer criteria is not directly comparable to one ranked
        on all of them.  ``"raise"``: any NaN raises ValueError naming it.
    names : sequence of str, optional
        Criterion names for error messages.

    Returns
    -------
    AverageRanks
        ``(average, count, ranks)``, see :class:`AverageRanks`.

    Examples
    --------
    >>> average_ranks([[1, 3], [2, 2], [3, 1]]).average
    array([2., 2., 2.])
    """
    if missing not in _RANK_MISSING:
        raise ValueError(f"missing={missing!r} is not one of {_RANK_MISSING}")
    G = np.asarray(F, dtype=float)
    if G.ndim != 2:
        raise ValueError(f"scores must form a 2-D array (entries x criteria); got shape {G.shape}")
    n, m = G.shape
    if names is not None and len(names) != m:
        raise ValueError(f"{len(names)} criterion names for {m} criteria")
    is_max = normalize_directions(directions, m, names=names)
    nan = np.isnan(G)
    if missing == "raise" and nan.any():
        i, j = np.argwhere(nan)[0]
        what = f"criterion {names[j]!r}" if names is not None else f"criterion {int(j)}"
        raise ValueError(
            f"{what} of row {int(i)} is missing (NaN); pass missing='omit' to rank over available criteria"
        )
    G = np.where(is_max, -G, G)
    ranks = np.full((n, m), np.nan)
    for j in range(m):
        ok = ~nan[:, j]
        if ok.any():
            ranks[ok, j] = _tied_average_ranks(G[ok, j])
    count = (~nan).sum(axis=1).astype(np.int64)
    total = np.where(nan, 0.0, ranks).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        average = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return AverageRanks(average=average, count=count, ranks=ranks)


def _tied_average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``a`` (no NaN), ties sharing the average of the ranks they span.

    ``scipy.stats.rankdata(a, method="average")``'s algorithm, the same float64 values (a half-integer is
    exact); in NumPy because importing ``scipy.stats`` would lengthen a leaderboard or Table 1 job's start-up
    (benchmarks/README.md).
    """
    order = np.argsort(a, kind="mergesort")
    inverse = np.empty(order.size, dtype=np.intp)
    inverse[order] = np.arange(order.size)
    ordered = a[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    dense = first.cumsum()[inverse]
    bounds = np.r_[np.nonzero(first)[0], first.size]
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)


def _bootstrap_means(
    x: dict[str, np.ndarray], *, paired: bool, n_boot: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Bootstrap distribution (n_boot,) of each model's mean.

    Paired: one set of item indices per replicate, shared by every model, so
    ``boot[a] - boot[b]`` is the bootstrap distribution of the mean paired
    difference.  Unpaired: independent indices per model (models in name order,
    so the result does not depend on the mapping's order).
    """
    names = sorted(x)
    out = {k: np.empty(n_boot) for k in names}
    if paired:
        n_items = len(x[names[0]])
        block = max(1, _BOOT_ELEMENTS // n_items)
        for start in range(0, n_boot, block):
            stop = min(n_boot, start + block)
            idx = rng.integers(0, n_items, size=(stop - start, n_items))
            for k in names:
                out[k][start:stop] = x[k][idx].mean(axis=1)
    else:
        for k in names:
            n_items = len(x[k])
            block = max(1, _BOOT_ELEMENTS // n_items)
            for start in range(0, n_boot, block):
                stop = min(n_boot, start + block)
                idx = rng.integers(0, n_items, size=(stop - start, n_items))
                out[k][start:stop] = x[k][idx].mean(axis=1)
    return out


def ranks_with_ties(
    samples: Mapping[str, Any],
    *,
    direction: str = "min",
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
    paired: bool | None = None,
) -> pd.DataFrame:
    """Rank models so that statistically indistinguishable ones share a rank.

    Neilson & Yang (2008), as summarised in Cabezas & Trujillo 2011, sec. 1: a significance test
    combined with greedy clustering, "algorithms of statistically similar
    performance are assigned to the same rank".

    Parameters
    ----------
    samples : mapping {model: array_like, shape (n_items,)}
        Per-item scores of one criterion for each model (e.g. per-stimulus
        errors).  NaN is not allowed (remove missing items first; the error names
        the model).
    direction : {"min", "max"}
        ``"min"``: lower is better (errors); ``"max"``: higher is better.
        ``"lower"``/``"higher"`` are accepted.  One criterion, hence one direction.
    n_boot : int
        Bootstrap replicates (>= 100 recommended: 1000 default).
    alpha : float
        Two-sided level of the percentile confidence interval of the difference
        in means (0.05: 95 % interval).
    seed : int
        Seed of ``numpy.random.default_rng``; the result is deterministic.
    paired : bool, optional
        Whether item k of every model is the same item (paired design).  Default:
        paired iff all sample arrays have the same length.

    Returns
    -------
    pandas.DataFrame
        One row per model, sorted best first, with columns ``model``, ``mean``,
        ``n_items``, ``rank`` (1 = best; dense: clusters get 1, 2, 3 ...),
        ``leader`` (model leading its cluster), ``tested_against`` (the leader it
        was compared with in the greedy step; "" for the best model), ``diff``
        (its mean minus that leader's mean, in the input's units), ``ci_low``/
        ``ci_high`` (the ``1 - alpha`` percentile bootstrap interval of that
        difference) and ``distinguishable`` (True where the interval excludes 0,
        i.e. the model leads a new cluster; True for the best model).  NaN in
        ``diff``/``ci_*`` for the best model, which is compared with nobody.

    Notes
    -----
    1. Models are sorted by mean (best first; ties by name).
    2. Bootstrap: resample items with replacement ``n_boot`` times (paired: the
       same item indices for every model; unpaired: independently per model) and
       take each model's mean, giving the distribution of the difference of
       means between any two models (paired: of the mean paired difference).
    3. Greedy clustering: the best model leads cluster 1.  Walking down the sorted
       list, a model whose ``1 - alpha`` interval of the difference to the current
       leader contains 0 joins the leader's cluster (shares its rank); the first
       model whose interval excludes 0 leads the next cluster with the next rank.

    Comparisons are only against cluster leaders, and no multiple-comparison
    correction is applied, as in a greedy clustering.  Neilson & Yang's own test
    statistic may differ from this bootstrap; the clustering is theirs.

    References
    ----------
    .. [1] Neilson, D. & Yang, Y.-H. (2008). Evaluation of constructable match cost
       measures for stereo correspondence using cluster ranking. CVPR.
    .. [2] Cabezas & Trujillo (2011). A non-linear quantitative evaluation approach
       for disparity estimation. VISAPP, sec. 1.
    """
    if not isinstance(samples, Mapping) or len(samples) == 0:
        raise ValueError("samples must be a non-empty mapping {model: per-item scores}")
    key = direction.lower() if isinstance(direction, str) else direction
    if key not in DIRECTION_ALIASES:
        raise ValueError(f"direction {direction!r} is not one of {sorted(DIRECTION_ALIASES)}")
    sign = -1.0 if DIRECTION_ALIASES[key] == "max" else 1.0
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer; got {n_boot!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    x: dict[str, np.ndarray] = {}
    for name, v in samples.items():
        arr = np.asarray(v, dtype=float)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"samples of model {name!r} must be a non-empty 1-D array; got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"samples of model {name!r} contain NaN or infinite values; remove missing items first")
        x[str(name)] = sign * arr  # "lower is better" space
    if len(x) != len(samples):
        raise ValueError("model names must be distinct as strings")
    lengths = {len(v) for v in x.values()}
    if paired is None:
        paired = len(lengths) == 1
    elif paired and len(lengths) != 1:
        sizes = {k: len(v) for k, v in x.items()}
        raise ValueError(f"paired=True needs the same number of items for every model; got {sizes}")
    rng = np.random.default_rng(seed)
    boot = _bootstrap_means(x, paired=bool(paired), n_boot=int(n_boot), rng=rng)
    means = {k: float(v.mean()) for k, v in x.items()}
    order = sorted(x, key=lambda k: (means[k], k))
    q = [alpha / 2.0, 1.0 - alpha / 2.0]
    rows = []
    rank, leader = 1, order[0]
    for k in order:
        if k == order[0]:
            tested, lo, hi, diff, distinct = "", np.nan, np.nan, np.nan, True
        else:
            tested = leader
            d = boot[k] - boot[leader]
            lo, hi = (float(v) for v in np.quantile(d, q))
            diff = means[k] - means[leader]
            distinct = bool(lo > 0.0 or hi < 0.0)
            if distinct:
                rank += 1
                leader = k
        if sign < 0:  # back to the input's units: the sign flips and the bounds swap
            lo, hi, diff = -hi, -lo, -diff
        rows.append(
            {
                "model": k,
                "mean": sign * means[k],
                "n_items": len(x[k]),
                "rank": rank,
                "leader": leader,
                "tested_against": tested,
                "diff": diff,
                "ci_low": lo,
                "ci_high": hi,
                "distinguishable": distinct,
            }
        )
    return pd.DataFrame(rows)
