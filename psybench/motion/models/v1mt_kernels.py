"""Compiled (Numba) loops of :func:`psybench.motion.models.v1mt.tlapale_v1mt`'s per-frame passes.

Each loop fuses a chain of NumPy element-wise operations of the model (Tlapale, Masson &
Kornprobst 2010; Bayerl & Neumann 2004; equations in :mod:`psybench.motion.models.v1mt`)
into one pass over the data, without the chain's temporaries: the correlation input's
shifted differences and their box pooling (:func:`matching_energy`), V1's modulatory
feedback, its normalisation over velocities and its relaxation (:func:`v1_update`), and
MT's pooling over directions (:func:`ring_mix`) and its relaxation with the
luminance-gated diffusion (:func:`mt_update`). Every value goes
through the same float32 IEEE operations, in the same order, as in the NumPy code each
replaces (which the tests keep as the oracle: ``tests/test_motion_models_v1mt_kernels.py``),
so the model's outputs are the same bits: a reduction over the velocity axis of an
``(h, V, w)`` stack is NumPy's row-by-row sum in velocity order, a Python scalar meets a
float32 array as a float32, and ``exp`` stays NumPy's (its SIMD ``expf`` is not libm's).
Compiled once and cached (:mod:`psybench.motion.models.flow.exact_jit`).
"""

from __future__ import annotations

import numpy as np

from psybench.motion.models.flow.exact_jit import jit, jit_inline

__all__ = ["bilinear_weights", "matching_energy", "likelihood_rescale", "v1_update", "mt_update", "ring_mix"]


def bilinear_weights(shifts: np.ndarray, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """The bilinear samples of ``J(x) = img(x - d)`` for each shift ``d = (dx, dy)``.

    Parameters
    ----------
    shifts : ndarray, shape (V, 2), float32
        Displacements ``(dx, dy)`` (matching-grid cells).
    pad : int
        The edge padding of the previous frame.

    Returns
    -------
    offsets : ndarray, shape (V, 2), int64
        Row and column of the top-left sample in the padded frame.
    weights : ndarray, shape (V, 4), float32
        ``1 - fx, fx, 1 - fy, fy`` with ``f = -d - floor(-d)``, each rounded to float32.
    """
    back = -shifts
    whole = np.floor(back)
    frac = back - whole
    offsets = pad + whole[:, ::-1].astype(np.int64)
    weights = np.stack([1 - frac[:, 0], frac[:, 0], 1 - frac[:, 1], frac[:, 1]], axis=1)
    return offsets, weights


@jit
def matching_energy(cur, prev_padded, offsets, weights, q, out):
    """Box-pooled squared matching differences ``(cur - J_v)^2`` into ``out`` (h, V, w).

    ``J_v`` is the padded previous frame shifted by velocity ``v`` (bilinear,
    ``(1 - fy) ((1 - fx) a + fx b) + fy ((1 - fx) c + fx d)``); the ``q x q`` cells of
    ``cur`` (``(h q, w q)``) are summed from 0 in row-major order and divided by ``q^2``
    (no division when ``q == 1``).
    """
    h, nv, w = out.shape
    wq = w * q
    area = np.float32(q * q)
    sq = np.empty(wq, np.float32)
    acc = np.empty(w, np.float32)
    for k in range(nv):
        ys, xs = offsets[k, 0], offsets[k, 1]
        wx1, wx, wy1, wy = weights[k, 0], weights[k, 1], weights[k, 2], weights[k, 3]
        for y in range(h):
            acc[:] = 0.0
            for i in range(q):
                r = y * q + i
                top = prev_padded[ys + r, xs:xs + wq + 1]
                bottom = prev_padded[ys + r + 1, xs:xs + wq + 1]
                row = cur[r]
                for c in range(wq):
                    shifted = wy1 * (wx1 * top[c] + wx * top[c + 1]) + wy * (wx1 * bottom[c] + wx * bottom[c + 1])
                    diff = row[c] - shifted
                    sq[c] = diff * diff
                for j in range(q):
                    for x in range(w):
                        acc[x] += sq[x * q + j]
            if q > 1:
                for x in range(w):
                    out[y, k, x] = acc[x] / area
            else:
                for x in range(w):
                    out[y, k, x] = acc[x]


@jit
def likelihood_rescale(d, eps, neg_beta, mean_out):
    """``(d / (mean_v d + eps) - min_v) (-beta)`` in place; ``mean_v d`` into ``mean_out``.

    ``d`` is (h, V, w) float32, ``mean_out`` (h, 1, w); the mean is NumPy's (a sum over
    ``v`` in order, divided by ``V``).
    """
    h, nv, w = d.shape
    fnv = np.float32(nv)
    den = np.empty(w, np.float32)
    lo = np.empty(w, np.float32)
    for y in range(h):
        for x in range(w):
            den[x] = d[y, 0, x]
        for v in range(1, nv):
            for x in range(w):
                den[x] += d[y, v, x]
        for x in range(w):
            m = den[x] / fnv
            mean_out[y, 0, x] = m
            den[x] = m + eps
        for v in range(nv):
            for x in range(w):
                r = d[y, v, x] / den[x]
                d[y, v, x] = r
                lo[x] = r if v == 0 or r < lo[x] else lo[x]
        for v in range(nv):
            for x in range(w):
                d[y, v, x] = (d[y, v, x] - lo[x]) * neg_beta


@jit
def v1_update(r1, r2, drive, feedback, sigma_v1, e1, square):
    """V1's step: ``a1 = (S (1 + C r2))^q``, ``t1 = a1 / (mean_v a1 + sigma_1)``, ``r1 = (r1 - t1) e1 + t1`` in place.

    ``q`` is 2 (``square``) or 1; ``r1``, ``r2``, ``drive`` are (h, V, w) float32.
    """
    h, nv, w = r1.shape
    fnv = np.float32(nv)
    a1 = np.empty((nv, w), np.float32)
    den = np.empty(w, np.float32)
    for y in range(h):
        for v in range(nv):
            for x in range(w):
                a = (r2[y, v, x] * feedback + np.float32(1.0)) * drive[y, v, x]
                a1[v, x] = a * a if square else a
        for x in range(w):  # a loop, not den[:] = a1[0]: an array assignment compiles its shape checks too
            den[x] = a1[0, x]
        for v in range(1, nv):
            for x in range(w):
                den[x] += a1[v, x]
        for x in range(w):
            den[x] = den[x] / fnv + sigma_v1
        for v in range(nv):
            for x in range(w):
                t1 = a1[v, x] / den[x]
                r1[y, v, x] = (r1[y, v, x] - t1) * e1 + t1


@jit
def mt_update(r2, pooled, gx, gy, sigma_mt, rate, e2, diffuse):
    """MT's step: ``t2 = pooled / sigma_2 + D sum_y w (r2(y) - r2(x))``, ``r2 = max((r2 - t2) e2 + t2, 0)`` in place.

    The diffusion term is summed as the NumPy code built it: from 0, the flux to the
    right neighbour added, from the left subtracted, then down and up (no flux through
    the border), ``D`` being ``rate``. ``r2``, ``pooled`` (h, V, w); ``gx`` (h, w - 1),
    ``gy`` (h - 1, w).
    """
    h, nv, w = r2.shape
    prev = np.empty((nv, w), np.float32)  # row y - 1 of r2 before this step
    cur = np.empty((nv, w), np.float32)
    t2 = np.empty(w, np.float32)
    for y in range(h):
        for v in range(nv):
            for x in range(w):
                cur[v, x] = r2[y, v, x]
        for v in range(nv):
            for x in range(w):
                t2[x] = pooled[y, v, x] / sigma_mt
            if diffuse:
                diffusion_row(r2, gx, gy, cur, prev, y, v, rate, t2)
            for x in range(w):
                r = (cur[v, x] - t2[x]) * e2 + t2[x]
                r2[y, v, x] = r if (r > 0 or r != r) else np.float32(0.0)
        prev, cur = cur, prev


@jit_inline
def diffusion_row(r2, gx, gy, cur, prev, y, v, rate, t2):
    """Add ``rate`` times the gated diffusion of row ``y``, velocity ``v`` to ``t2`` (w,): see :func:`mt_update`."""
    h, w = r2.shape[0], r2.shape[2]
    for x in range(w):
        rc = cur[v, x]
        o = np.float32(0.0)
        if x < w - 1:
            o += gx[y, x] * (cur[v, x + 1] - rc)
        if x > 0:
            o -= gx[y, x - 1] * (rc - cur[v, x - 1])
        if y < h - 1:
            o += gy[y, x] * (r2[y + 1, v, x] - rc)
        if y > 0:
            o -= gy[y - 1, x] * (rc - prev[v, x])
        t2[x] = t2[x] + rate * o


@jit
def ring_mix(ring, x, out):
    """:func:`psybench.motion.models.filters.ring_mix` into ``out`` (h, 1 + S D, w), without moving the channels.

    Channel 0 is copied; ``out[:, 1 + s D + i] = sum_j ring[i, j] x[:, 1 + s D + j]``, summed
    from 0 in ``j`` order with a separate multiply and add, which is what ``np.einsum``'s
    loop computes there (tested).
    """
    h, nv, w = x.shape
    nd = ring.shape[0]
    for y in range(h):
        for xx in range(w):
            out[y, 0, xx] = x[y, 0, xx]
        for base in range(1, nv, nd):
            for i in range(nd):
                for xx in range(w):
                    out[y, base + i, xx] = np.float32(0.0)
                for j in range(nd):
                    wij = ring[i, j]
                    for xx in range(w):
                        out[y, base + i, xx] = out[y, base + i, xx] + wij * x[y, base + j, xx]
    return out
