"""Compiled loops of :mod:`psybench.attention.rank_counts` (Numba, imported at its first call).

Integer counts of IEEE comparisons: the numbers do not depend on the order of the work.
``cache=True`` keeps the machine code beside this module (``__pycache__``), so a job
loads it instead of compiling; without a writable cache directory Numba refuses it and
the loops compile in each process.
"""

from __future__ import annotations

import numpy as np

from psybench._numba import cached_njit

__all__ = ["MAP_BLOCK", "count_direct", "count_sorted"]

#: Maps counted side by side in one pass (their counters: 2 x 16-bit x MAP_BLOCK per distinct gazed cell).
MAP_BLOCK = 256
#: Cells counted in the 16-bit counters before they are added to the 64-bit totals.
_RUN = 32767


_jit = cached_njit(nogil=True)


@_jit
def _distinct(cells, f, uniq, slot):
    """The distinct cells of frame f into ``uniq`` (returns their number q), ``uniq[slot[j]] == cells[f, j]``."""
    q = 0
    for j in range(cells.shape[1]):
        c = cells[f, j]
        k = 0
        while k < q and uniq[k] != c:
            k += 1
        if k == q:
            uniq[q] = c
            q += 1
        slot[j] = k
    return q


@_jit
def count_direct(S, cells, lower, equal):
    """``lower[f, j, u] = #{i : S[f, i, u] < S[f, cells[f, j], u]}``, ``equal`` likewise with ``==``,
    by comparing every cell with every distinct gazed value, :data:`MAP_BLOCK` maps side by side.

    S : (n, K, U); cells : (n, d) int64 in 0 .. K - 1; lower, equal : (n, d, U) int64 zeros, added to.
    """
    n, K, U = S.shape
    d = cells.shape[1]
    uniq = np.empty(d, np.int64)
    slot = np.empty(d, np.int64)
    v = np.empty((d, MAP_BLOCK), S.dtype)
    lo = np.empty((d, MAP_BLOCK), np.int16)
    eq = np.empty((d, MAP_BLOCK), np.int16)
    for f in range(n):
        q = _distinct(cells, f, uniq, slot)
        for u0 in range(0, U, MAP_BLOCK):
            w = min(MAP_BLOCK, U - u0)
            for k in range(q):
                for u in range(w):
                    v[k, u] = S[f, uniq[k], u0 + u]
            for i0 in range(0, K, _RUN):  # 16-bit counters for at most _RUN cells
                lo[:q, :w] = 0
                eq[:q, :w] = 0
                for i in range(i0, min(K, i0 + _RUN)):
                    row = S[f, i, u0 : u0 + w]
                    for k in range(q):
                        vk, lk, ek = v[k, :w], lo[k, :w], eq[k, :w]
                        for u in range(w):
                            s, x = row[u], vk[u]
                            lk[u] += np.int16(1) if s < x else np.int16(0)
                            ek[u] += np.int16(1) if s == x else np.int16(0)
                for j in range(d):
                    k = slot[j]
                    for u in range(w):
                        lower[f, j, u0 + u] += lo[k, u]
                        equal[f, j, u0 + u] += eq[k, u]


@_jit
def count_sorted(ordered, S, cells, lower, equal):
    """The counts of :func:`count_direct` by bisecting each map sorted ascending, NaN last
    (``ordered``: shape (n, U, K)); ``s < x`` and ``s <= x`` stay monotone along it, so the
    first positions where they fail are the counts.
    """
    n, U, K = ordered.shape
    d = cells.shape[1]
    uniq = np.empty(d, np.int64)
    slot = np.empty(d, np.int64)
    below = np.empty(d, np.int64)
    level = np.empty(d, np.int64)
    for f in range(n):
        q = _distinct(cells, f, uniq, slot)
        for u in range(U):
            column = ordered[f, u]
            for k in range(q):
                x = S[f, uniq[k], u]
                a, b = 0, K
                while a < b:
                    m = (a + b) // 2
                    if column[m] < x:
                        a = m + 1
                    else:
                        b = m
                below[k] = a
                b = K
                while a < b:
                    m = (a + b) // 2
                    if column[m] <= x:
                        a = m + 1
                    else:
                        b = m
                level[k] = a - below[k]
            for j in range(d):
                lower[f, j, u] = below[slot[j]]
                equal[f, j, u] = level[slot[j]]
