"""Compiled (Numba) loops of Lucas-Kanade's warp step (:mod:`psybench.motion.models.flow.lucaskanade`).

Each Gauss-Newton step of Lucas & Kanade (1981) in four passes over the image: the cubic
B-spline warp of the second frame (:func:`warp`, SciPy's ``map_coordinates``); the temporal
difference, the gradients (``np.gradient``'s central differences, one-sided at the borders),
their average over both frames and the five products the window sums (:func:`products`); the
Gaussian window (:func:`window`, OpenCV's ``sepFilter2D``); and the per-pixel 2 x 2 solve with
the eigenvalue test of Barron, Fleet & Beauchemin (1994) added to the flow (:func:`solve_add`,
:func:`lucaskanade._lk_solve`'s formulas, kept as the readable reference and the tests' oracle).
Each value goes through the same IEEE operations, in the same order, as in the library code
each replaces, so the flows are the same bits. Compiled once and cached
(:mod:`psybench.motion.models.flow.exact_jit`).
"""

from __future__ import annotations

import math

import numpy as np

from psybench.motion.models.flow.exact_jit import fma, jit, jit_inline

# the columns' vector width of OpenCV's float64 row filter, whose multiply-adds it fuses
F64_ROW_FMA_LANES = 4


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
def _products_at(i1w_up, i1w_mid, i1w_down, row_step, i0, gx0, gy0, out, i, jm, j, jp, col_step):
    """The five products at (i, j); returns ``it``. ``np.gradient(i1w)`` from the rows above and below
    (``row_step``: 2 inside, 1 at an edge, one-sided there) and the columns ``jm``, ``jp`` (``col_step`` likewise).
    """
    it = i1w_mid[j] - i0[i, j]
    gy1 = (i1w_down[j] - i1w_up[j]) / row_step
    gx1 = (i1w_mid[jp] - i1w_mid[jm]) / col_step
    gx = 0.5 * (gx0[i, j] + gx1)
    gy = 0.5 * (gy0[i, j] + gy1)
    out[0, i, j] = gx * gx
    out[1, i, j] = gx * gy
    out[2, i, j] = gy * gy
    out[3, i, j] = gx * it
    out[4, i, j] = gy * it
    return it


@jit
def products(i1w, i0, gx0, gy0, out):
    """``out`` (5, H, W) = gx^2, gx gy, gy^2, gx it, gy it; returns whether ``it = i1w - i0`` has a non-zero.

    ``gx = 0.5 (gx0 + gx1)``, ``gy = 0.5 (gy0 + gy1)`` with ``gy1, gx1 = np.gradient(i1w)``: central
    differences ``(f[k + 1] - f[k - 1]) / 2`` inside, ``(f[1] - f[0]) / 1`` and ``(f[-1] - f[-2]) / 1`` at the
    edges (H, W >= 2).
    """
    h, w = i0.shape
    moved = False
    for i in range(h):
        up, down = (0, 1) if i == 0 else ((h - 2, h - 1) if i == h - 1 else (i - 1, i + 1))
        row_step = 2.0 if 0 < i < h - 1 else 1.0
        i1w_up, i1w_mid, i1w_down = i1w[up], i1w[i], i1w[down]
        it = _products_at(i1w_up, i1w_mid, i1w_down, row_step, i0, gx0, gy0, out, i, 0, 0, 1, 1.0)
        moved = moved or it != 0.0
        it = _products_at(i1w_up, i1w_mid, i1w_down, row_step, i0, gx0, gy0, out, i, w - 2, w - 1, w - 1, 1.0)
        moved = moved or it != 0.0
        for j in range(1, w - 1):
            it = _products_at(i1w_up, i1w_mid, i1w_down, row_step, i0, gx0, gy0, out, i, j - 1, j, j + 1, 2.0)
            moved = moved or it != 0.0
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


@jit
def window(stack, kernel, out):
    """``cv2.sepFilter2D(m, -1, kernel, kernel, borderType=cv2.BORDER_REPLICATE)`` of each float64 map of ``stack``.

    ``stack`` and ``out`` (K, H, W), ``kernel`` (2 r + 1,) symmetric. The same sums as OpenCV 5 on a CPU
    with AVX2 (found by comparing candidate orders with it): along each row ``s = k[0] x[j - r]``, then
    ``s = k[t] x[j - r + t] + s`` for t = 1 .. 2 r, fused (one rounding) in the first
    ``4 * (W // 4)`` columns (its vector loop), separate in the rest; then along each column the
    symmetric form ``s = k[r] y[i] + 0``, ``s = s + k[r + t] (y[i + t] + y[i - t])`` for t = 1 .. r;
    borders replicated.
    """
    n_maps, h, w = stack.shape
    r = kernel.shape[0] // 2
    vec = (w // F64_ROW_FMA_LANES) * F64_ROW_FMA_LANES
    padded = np.empty(w + 2 * r)
    rows = np.empty((h, w))
    for m in range(n_maps):
        for i in range(h):
            src, acc = stack[m, i], rows[i]
            for j in range(w + 2 * r):
                padded[j] = src[min(max(j - r, 0), w - 1)]
            for j in range(w):
                acc[j] = kernel[0] * padded[j]
            for t in range(1, 2 * r + 1):
                kt, shifted = kernel[t], padded[t:]
                for j in range(vec):
                    acc[j] = fma(kt, shifted[j], acc[j])
                for j in range(vec, w):
                    acc[j] = acc[j] + kt * shifted[j]
        for i in range(h):
            acc, centre = out[m, i], rows[i]
            for j in range(w):
                acc[j] = kernel[r] * centre[j] + 0.0
            for t in range(1, r + 1):
                kt, below, above = kernel[r + t], rows[min(i + t, h - 1)], rows[max(i - t, 0)]
                for j in range(w):
                    acc[j] = acc[j] + kt * (below[j] + above[j])
