"""Counts behind the rank percentile: how many cells of a map lie below, and level with, a gazed cell.

Shic & Scassellati (2007), sec. 5.2: the score of a gaze location is its rank
percentile on the saliency map, here with mid-rank ties
(:func:`psybench.attention.evaluate.rank_percentiles`). Table 1 ranks the gazed cells
of every observer on the maps of ~1500 filters per frame, so the counts are the
bulk of the evaluation. :func:`rank_counts` computes them exactly (integer counts of
float comparisons, so any order of work gives the same numbers) in compiled loops
(Numba, :mod:`psybench.attention.rank_kernels`), with no boolean temporaries:

* observers gazing at the same cell of a frame are counted once (people often
  look at the same object);
* with few distinct gazed cells per frame (the humans), each map cell is compared
  with every distinct gazed cell's value in one pass, maps side by side in blocks
  (the comparisons vectorise across maps, the 16-bit counters stay in the CPU cache);
* with many (more than :data:`SORT_ABOVE`; more than :data:`SORT_ABOVE_SMALL_U` when a
  frame has fewer than :data:`SMALL_U` maps, e.g. the i.i.d. control's uniform draws
  on the humans' filters), each map is sorted once (NumPy) and every distinct gazed
  value bisected.

Both paths count ``s < v`` and ``s == v`` by their IEEE comparisons (a NaN is below,
above and level with nothing), so they return the same numbers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SORT_ABOVE", "SMALL_U", "SORT_ABOVE_SMALL_U", "rank_counts", "percentiles_from_counts"]

#: Distinct gazed cells per frame above which each map is sorted and bisected instead of compared cell by cell.
SORT_ABOVE = 64
#: ... and the same with fewer than SMALL_U maps per frame (too few to compare side by side).
SMALL_U, SORT_ABOVE_SMALL_U = 16, 8


def rank_counts(saliency: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cells below and level with each gazed cell, per frame and map.

    Parameters
    ----------
    saliency : ndarray, shape (n, K, U)
        U maps over the K cells of each of n frames.
    cells : ndarray of int, shape (n, d)
        d gazed cells (flat indices in 0 .. K - 1) per frame; repeats are counted once.

    Returns
    -------
    lower, equal : ndarray of int64, shape (n, d, U)
        ``#{i : S[f, i, u] < S[f, c, u]}`` and ``#{i : S[f, i, u] = S[f, c, u]}`` (the
        gazed cell included) for each frame f, gazed cell c and map u.
    """
    S = np.asarray(saliency)
    c = np.asarray(cells, np.int64)
    if S.ndim != 3 or c.ndim != 2 or c.shape[0] != S.shape[0]:
        raise ValueError(f"rank_counts: need saliency (n, K, U) and cells (n, d), got {S.shape}, {c.shape}")
    n, K, U = S.shape
    if c.size and (c.min() < 0 or c.max() >= K):
        raise ValueError(f"rank_counts: gazed cells must lie in 0 .. {K - 1}")
    if S.dtype == bool:
        S = S.view(np.uint8)  # False < True as 0 < 1
    lower = np.zeros((n, c.shape[1], U), np.int64)
    equal = np.zeros((n, c.shape[1], U), np.int64)
    if lower.size and K:
        from psybench.attention import rank_kernels

        S, c = np.ascontiguousarray(S), np.ascontiguousarray(c)
        q = 1 + int((np.diff(np.sort(c, axis=1), axis=1) != 0).sum(1).max())  # distinct cells of the busiest frame
        if q > SORT_ABOVE or (U < SMALL_U and q > SORT_ABOVE_SMALL_U):
            # NumPy's sort of each map (NaN last), then every distinct value bisected
            rank_kernels.count_sorted(np.sort(S.transpose(0, 2, 1), axis=2), S, c, lower, equal)
        else:
            rank_kernels.count_direct(S, c, lower, equal)
    return lower, equal


def percentiles_from_counts(lower: np.ndarray, equal: np.ndarray, K: int, *, ties: str) -> np.ndarray:
    """Rank percentile (0..1) from :func:`rank_counts`: 'mid' ``(lower + (equal - 1) / 2) / (K - 1)``,
    'paper' ``lower / K`` (the formulas of :func:`psybench.attention.evaluate.rank_percentiles`)."""
    if ties == "paper":
        return lower / K
    return (lower + 0.5 * (equal - 1)) / (K - 1)
