"""Compiled (Numba) loops of Lucas-Kanade's warp step (:mod:`psybench.motion.models.flow.lucaskanade`).

The element-wise work of one Gauss-Newton step of Lucas & Kanade (1981) fused into two
passes over the image: the temporal difference, the gradients (``np.gradient``'s central
differences, one-sided at the borders), their average over both frames and the five
products the window sums (:func:`products`); and the per-pixel 2 x 2 solve with the
eigenvalue test of Barron, Fleet & Beauchemin (1994) added to the flow (:func:`solve_add`).
Each value goes through the same IEEE operations, in the same order, as in the array code
they replace (:func:`lucaskanade._lk_solve`, kept as the documented formula and the tests'
oracle), so the flows are the same bits. Compiled once and cached
(:mod:`psybench.motion.models.flow.exact_jit`).
"""

from __future__ import annotations

import math

import numpy as np

from psybench.motion.models.flow.exact_jit import jit, jit_inline


@jit_inline
def _cubic_weights(cc):
    """SciPy's cubic B-spline weights at ``cc`` (``get_spline_interpolation_weights``, order 3, scipy 1.17)."""
    x = cc - np.floor(cc)
    z = 1.0 - x
    w1 = (x * x * (x - 2.0) * 3.0 + 4.0) / 6.0
    w2 = (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0
    w0 = z * z * z / 6.0
    w3 = 1.0
    w3 -= w0
    w3 -= w1
    w3 -= w2
    return w0, w1, w2, w3


@jit
def warp(coefficients, flow, pad, out):
    """``out[i, j]``: the cubic spline of ``coefficients`` at ``(i + flow[i, j, 1] + pad, j + flow[i, j, 0] + pad)``.

    What ``scipy.ndimage.map_coordinates(coefficients, coords, order=3, mode="nearest", prefilter=False)``
    computes (``NI_GeometricTransform``, scipy 1.17): the support starts at ``floor(c) - 1`` on each axis,
    indices clamped to the array (mode "nearest"), and the 16 terms ``(c[a, b] w_row[a]) w_col[b]`` are
    summed from 0, rows outer, columns inner.
    """
    n_rows, n_cols = coefficients.shape
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            cr = (float(i) + flow[i, j, 1]) + pad
            cc = (float(j) + flow[i, j, 0]) + pad
            wr, wc = _cubic_weights(cr), _cubic_weights(cc)
            r0, c0 = int(np.floor(cr)) - 1, int(np.floor(cc)) - 1
            t = 0.0
            for a in range(4):
                ra = min(max(r0 + a, 0), n_rows - 1)
                for b in range(4):
                    t += (coefficients[ra, min(max(c0 + b, 0), n_cols - 1)] * wr[a]) * wc[b]
            out[i, j] = t


@jit_inline
def _gradient(f, i, j, h, w):
    """``np.gradient(f)`` (H, W) at (i, j): (d/drow, d/dcol), central differences / 2, one-sided at the edges."""
    if i == 0:
        gy = (f[1, j] - f[0, j]) / 1.0
    elif i == h - 1:
        gy = (f[h - 1, j] - f[h - 2, j]) / 1.0
    else:
        gy = (f[i + 1, j] - f[i - 1, j]) / 2.0
    if j == 0:
        gx = (f[i, 1] - f[i, 0]) / 1.0
    elif j == w - 1:
        gx = (f[i, w - 1] - f[i, w - 2]) / 1.0
    else:
        gx = (f[i, j + 1] - f[i, j - 1]) / 2.0
    return gy, gx


@jit
def products(i1w, i0, gx0, gy0, out):
    """``out`` (5, H, W) = gx^2, gx gy, gy^2, gx it, gy it; returns whether ``it = i1w - i0`` has a non-zero.

    ``gx = 0.5 (gx0 + gx1)``, ``gy = 0.5 (gy0 + gy1)`` with ``gy1, gx1 = np.gradient(i1w)``.
    """
    h, w = i0.shape
    moved = False
    for i in range(h):
        for j in range(w):
            it = i1w[i, j] - i0[i, j]
            moved = moved or it != 0.0
            gy1, gx1 = _gradient(i1w, i, j, h, w)
            gx = 0.5 * (gx0[i, j] + gx1)
            gy = 0.5 * (gy0[i, j] + gy1)
            out[0, i, j] = gx * gx
            out[1, i, j] = gx * gy
            out[2, i, j] = gy * gy
            out[3, i, j] = gx * it
            out[4, i, j] = gy * it
    return moved


@jit
def solve_add(sums, min_eigenvalue, min_eigen_ratio, flow):
    """``flow[..., 0] += du``, ``flow[..., 1] += dv`` with ``(du, dv) = _lk_solve(*sums, ...)`` per pixel."""
    a11s, a12s, a22s, b1s, b2s = sums[0], sums[1], sums[2], sums[3], sums[4]
    for i in range(a11s.shape[0]):
        for j in range(a11s.shape[1]):
            a11, a12, a22, b1, b2 = a11s[i, j], a12s[i, j], a22s[i, j], b1s[i, j], b2s[i, j]
            half_trace = (a11 + a22) * 0.5
            disc = math.hypot((a11 - a22) * 0.5, a12)
            lam1 = half_trace + disc
            lam2 = half_trace - disc
            floor = lam1 * min_eigen_ratio
            if not (floor != floor or floor >= min_eigenvalue):  # np.maximum: NaN wins
                floor = min_eigenvalue
            full = lam2 >= floor
            normal = (lam1 >= min_eigenvalue) and not full
            inv_det = 1.0 / (a11 * a22 - a12 * a12) if full else 0.0
            inv_proj = 1.0 / ((lam1 * 2.0) * disc) if normal else 0.0
            m11 = a22 * inv_det + (a11 - lam2) * inv_proj
            m22 = a11 * inv_det + (a22 - lam2) * inv_proj
            m12 = (inv_proj - inv_det) * a12
            flow[i, j, 0] = flow[i, j, 0] + -(m11 * b1 + m12 * b2)
            flow[i, j, 1] = flow[i, j, 1] + -(m12 * b1 + m22 * b2)
