"""Counts behind the rank percentile: how many cells of a map lie below, and level with, a gazed cell.

Shic & Scassellati (2007), sec. 5.2: the score of a gaze location is its rank
percentile on the saliency map, here with mid-rank ties
(:func:`psybench.attention.evaluate.rank_percentiles`). Table 1 ranks the gazed cells
of every observer on the maps of ~1500 filters per frame, so the counts are the
bulk of the evaluation. :func:`rank_counts` computes them exactly (integer counts of
float comparisons, so any order of work gives the same numbers) and fast:

* observers gazing at the same cell of a frame are counted once (people often
  look at the same object);
* the comparisons run on blocks of at most 255 cells, small enough that the
  boolean block stays in the CPU cache, summed as bytes (a block count fits in
  uint8) and accumulated in uint16 / int64;
* with more gazed cells per map than ~log2(K) (the i.i.d. control's uniform draws),
  each map is sorted once and the cells bisected instead.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BLOCK_BYTES", "rank_counts", "percentiles_from_counts"]

#: Size of the boolean comparison block (bytes): near the size of a core's L2 cache.
BLOCK_BYTES = 1_000_000


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
    # distinct cells per frame, padded with each frame's last one (counted again, then dropped)
    rows = [np.unique(row, return_inverse=True) for row in c]
    q = max((len(u) for u, _ in rows), default=0)
    uniq = np.array([np.pad(u, (0, q - len(u)), mode="edge") for u, _ in rows], np.int64).reshape(n, q)
    slot = np.array([inv for _, inv in rows], np.int64).reshape(c.shape)  # c[f, j] == uniq[f, slot[f, j]]
    values = S[np.arange(n)[:, None], uniq]  # (n, q, U)
    lower = np.zeros((n, q, U), np.int64)
    equal = np.zeros((n, q, U), np.int64)
    if n and q and U and q > np.log2(K) + 1:  # many gazed cells per map: sort each map once, then bisect
        for f in range(n):
            for u in range(U):
                column = np.sort(S[f, :, u])
                lower[f, :, u] = np.searchsorted(column, values[f, :, u], side="left")
                equal[f, :, u] = np.searchsorted(column, values[f, :, u], side="right") - lower[f, :, u]
    elif n and q and U:
        frames = max(1, min(n, int(BLOCK_BYTES // (q * U * 16))))
        step = int(max(1, min(255, BLOCK_BYTES // (frames * q * U))))  # a block's count fits in uint8
        buf = np.empty((frames, step, q, U), bool)
        lo = np.zeros((frames, q, U), np.uint16)
        eq = np.zeros((frames, q, U), np.uint16)
        for a in range(0, n, frames):
            b = min(n, a + frames)
            v = values[a:b, None]
            summed = 0  # cells in the uint16 accumulators
            for k in range(0, K, step):
                block = S[a:b, k : k + step, None]
                mask = buf[: b - a, : block.shape[1]]
                np.less(block, v, out=mask)
                lo[: b - a] += mask.view(np.uint8).sum(1, dtype=np.uint8)
                np.equal(block, v, out=mask)
                eq[: b - a] += mask.view(np.uint8).sum(1, dtype=np.uint8)
                summed += block.shape[1]
                if summed + step > np.iinfo(np.uint16).max or k + step >= K:
                    lower[a:b] += lo[: b - a]
                    equal[a:b] += eq[: b - a]
                    lo[:] = 0
                    eq[:] = 0
                    summed = 0
    idx = np.arange(n)[:, None]
    return lower[idx, slot], equal[idx, slot]


def percentiles_from_counts(lower: np.ndarray, equal: np.ndarray, K: int, *, ties: str) -> np.ndarray:
    """Rank percentile (0..1) from :func:`rank_counts`: 'mid' ``(lower + (equal - 1) / 2) / (K - 1)``,
    'paper' ``lower / K`` (the formulas of :func:`psybench.attention.evaluate.rank_percentiles`)."""
    if ties == "paper":
        return lower / K
    return (lower + 0.5 * (equal - 1)) / (K - 1)
