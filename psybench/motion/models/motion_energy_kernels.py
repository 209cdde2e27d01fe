"""Compiled (Numba) loops of :func:`psybench.motion.models.motion_energy.simoncelli_heeger`'s normalisations.

Each loop fuses NumPy passes over the model's channel-first stacks ``(C, h, n, w)``
(Simoncelli & Heeger 1998, eqs. 3 and 6-7; see :mod:`psybench.motion.models.motion_energy`)
into one, without their temporaries: V1's divisive normalisation with MT's ``q x q``
input pooling (:func:`v1_normalise_pool`), and MT's half-squaring and normalisation
written straight into the ``(n, h, w, V)`` layout of the readout (:func:`mt_normalise`).
Every value goes through the same float32 IEEE operations, in the same order, as the
NumPy code each replaces (kept as the tests' oracle,
``tests/test_motion_models_v1mt_kernels.py``): a sum over the channel axis is NumPy's, the
first channel plus each next one in order. Compiled once and cached
(:mod:`psybench.motion.models.flow.exact_jit`).
"""

from __future__ import annotations

import numpy as np

from psybench.motion.models.flow.exact_jit import jit

__all__ = ["v1_normalise_pool", "mt_normalise"]


@jit
def v1_normalise_pool(e, sigma, q, out):
    """``C = E / (sum_c E + sigma)`` averaged over ``q x q`` cells into ``out`` (C, h / q, n, w / q).

    ``e`` is (C, h, n, w) with ``h`` and ``w`` multiples of ``q``; each cell's mean is
    its values summed from the top-left one in row-major order, times ``float32(1 / q^2)``.
    """
    nc, h, nt, w = e.shape
    den = np.empty((h, nt, w), np.float32)
    for y in range(h):
        for t in range(nt):
            for x in range(w):
                den[y, t, x] = e[0, y, t, x]
    for c in range(1, nc):
        for y in range(h):
            for t in range(nt):
                for x in range(w):
                    den[y, t, x] += e[c, y, t, x]
    for y in range(h):
        for t in range(nt):
            for x in range(w):
                den[y, t, x] += sigma
    scale = np.float32(1.0 / (q * q))
    ratio = np.empty(w, np.float32)
    acc = np.empty(w // q, np.float32)
    for c in range(nc):
        for yo in range(h // q):
            for t in range(nt):
                for i in range(q):
                    y = yo * q + i
                    for x in range(w):
                        ratio[x] = e[c, y, t, x] / den[y, t, x]
                    for xo in range(w // q):  # the cell's values from its top-left one, in row-major order
                        a = ratio[xo * q] if i == 0 else acc[xo] + ratio[xo * q]
                        for j in range(1, q):
                            a += ratio[xo * q + j]
                        acc[xo] = a
                for xo in range(w // q):
                    out[c, yo, t, xo] = acc[xo] * scale
    return out


@jit
def mt_normalise(lin, offset, sigma, out):
    """``M = max(L + offset, 0)^2``, ``P = M / (sum_v M + sigma)`` from ``lin`` (V, h, n, w) into ``out`` (n, h, w, V).

    ``offset`` is added only when non-zero (as the NumPy code did).
    """
    nv, h, nt, w = lin.shape
    m = np.empty((nv, w), np.float32)
    den = np.empty(w, np.float32)
    for y in range(h):
        for t in range(nt):
            for v in range(nv):
                for x in range(w):
                    a = lin[v, y, t, x]
                    if offset != 0:
                        a = a + offset
                    a = a if (a > 0 or a != a) else np.float32(0.0)
                    m[v, x] = a * a
            for x in range(w):
                den[x] = m[0, x]
            for v in range(1, nv):
                for x in range(w):
                    den[x] += m[v, x]
            for x in range(w):
                den[x] += sigma
            for x in range(w):
                for v in range(nv):
                    out[t, y, x, v] = m[v, x] / den[x]
    return out
