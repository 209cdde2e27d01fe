"""Compiled (Numba) loops of Horn-Schunck's solver (:mod:`psybench.motion.models.flow.hs_multigrid`).

Each loop fuses the element-wise NumPy steps of one operation of a multigrid level
(Horn & Schunck 1981, sec. 11 equations; block-Jacobi smoothing and bilinear transfer
between grids, Braess 1986) into one pass, with the same IEEE operations in the same
order on every value: no ``fastmath``, and no multiply-add contracted into a fused
one except where the NumPy/OpenCV code itself fuses it. So the results are the same
bits as the array code they replace (tests/test_motion_models_hs_kernels.py compares
them), at a fraction of its memory passes and calls.

The 3 x 3 average (``cv2.filter2D``, replicated borders) is computed here as OpenCV 5
computes it on a CPU with AVX2: the kernel's non-zero taps in row-major order, summed
from 0; in float32 by fused multiply-adds in its 8-lane vector loop (the first
``8 * (W // 8)`` columns of each row) and by separate multiplies and adds in its scalar
tail, in float64 by separate multiplies and adds everywhere.

Compiled once and cached (:mod:`psybench.motion.models.flow.exact_jit`); the module is
imported only when a Horn-Schunck level is built (not at planning).
"""

from __future__ import annotations

import numpy as np

from psybench.motion.models.flow.exact_jit import fma as _fma
from psybench.motion.models.flow.exact_jit import jit as _jit
from psybench.motion.models.flow.exact_jit import jit_inline as _inline

# the lanes of OpenCV's float32 filter loop that fuse their multiply-adds; float64: none
F32_FMA_LANES, F64_FMA_LANES = 8, 0


@_jit
def _filtered(up, mid, down, jm, j, jp, taps, fused):
    """The 3 x 3 average at column j of the rows ``up``, ``mid``, ``down`` (W,) (indices clamped at the borders)."""
    zero = taps[0] - taps[0]  # +0 in the dtype of the grid
    if fused:
        acc = _fma(up[jm], taps[0], zero)
        acc = _fma(up[j], taps[1], acc)
        acc = _fma(up[jp], taps[2], acc)
        acc = _fma(mid[jm], taps[3], acc)
        acc = _fma(mid[jp], taps[4], acc)
        acc = _fma(down[jm], taps[5], acc)
        acc = _fma(down[j], taps[6], acc)
        return _fma(down[jp], taps[7], acc)
    acc = zero + up[jm] * taps[0]
    acc = acc + up[j] * taps[1]
    acc = acc + up[jp] * taps[2]
    acc = acc + mid[jm] * taps[3]
    acc = acc + mid[jp] * taps[4]
    acc = acc + down[jm] * taps[5]
    acc = acc + down[j] * taps[6]
    return acc + down[jp] * taps[7]


@_inline
def _runtime(flag):
    """``flag`` as a run-time bool, not a literal one: :func:`_filtered` is then compiled once per dtype,
    not once more for each literal ``True`` and ``False`` (4 fewer compilations in the
    first Horn-Schunck job), with the same machine code in its loops once inlined."""
    return bool(flag)


@_inline
def _span(w, out, jxx, jxy, jyy, s, taps, im, i, ip, j0, j1, fused):
    """Row i of ``A w`` at columns j0 <= j < j1 (interior: 1 <= j <= W - 2), as :meth:`_HSLevel.apply` orders it.

    ``(j_u[c] w0 + j_v[c] w1) + (w[c] - K * w[c]) s`` for both components c. Inlined into
    :func:`_span_fused` and :func:`_span_plain`, whose ``fused`` is the same in every column: LLVM
    takes the test out of the loop (unswitches it), so each loop has no branch and is vectorised.
    """
    # the rows from column j0 - 1 on: their indices k - 1, k, k + 1 are never negative, so the compiled loop
    # has no wrap-around test on them and is vectorised
    a = j0 - 1
    u_up, u_mid, u_down = w[0, im, a:], w[0, i, a:], w[0, ip, a:]
    v_up, v_mid, v_down = w[1, im, a:], w[1, i, a:], w[1, ip, a:]
    cxx, cxy, cyy, out0, out1 = jxx[i, a:], jxy[i, a:], jyy[i, a:], out[0, i, a:], out[1, i, a:]
    for j in range(j1 - j0):
        k = j + 1
        w0, w1 = u_mid[k], v_mid[k]
        out0[k] = (cxx[k] * w0 + cxy[k] * w1) + (w0 - _filtered(u_up, u_mid, u_down, j, k, k + 1, taps, fused)) * s
        out1[k] = (cxy[k] * w0 + cyy[k] * w1) + (w1 - _filtered(v_up, v_mid, v_down, j, k, k + 1, taps, fused)) * s


@_inline
def _span_fused(w, out, jxx, jxy, jyy, s, taps, im, i, ip, j0, j1):
    """:func:`_span` with OpenCV's fused multiply-adds (its vector loop)."""
    _span(w, out, jxx, jxy, jyy, s, taps, im, i, ip, j0, j1, _runtime(True))


@_inline
def _span_plain(w, out, jxx, jxy, jyy, s, taps, im, i, ip, j0, j1):
    """:func:`_span` with separate multiplies and adds (OpenCV's scalar tail; float64)."""
    _span(w, out, jxx, jxy, jyy, s, taps, im, i, ip, j0, j1, _runtime(False))


@_inline
def _edge(w, out, jxx, jxy, jyy, s, taps, im, i, ip, jm, j, jp, fused):
    """Row i of ``A w`` at a border column j (its neighbours ``jm``, ``jp`` clamped): :func:`_span`'s formula."""
    w0, w1 = w[0, i, j], w[1, i, j]
    f0 = _filtered(w[0, im], w[0, i], w[0, ip], jm, j, jp, taps, fused)
    f1 = _filtered(w[1, im], w[1, i], w[1, ip], jm, j, jp, taps, fused)
    out[0, i, j] = (jxx[i, j] * w0 + jxy[i, j] * w1) + (w0 - f0) * s
    out[1, i, j] = (jxy[i, j] * w0 + jyy[i, j] * w1) + (w1 - f1) * s


@_jit
def _operator(w, b, out, jxx, jxy, jyy, q, p, det, s, taps, lanes, omega, mode):
    """Row by row: ``A w`` (mode 0), ``b - A w`` (1) or ``omega * block_solve(b - A w)`` (2) into ``out``.

    Mode 2 is one damped block-Jacobi step: it also adds ``out`` to ``w`` (in place), a row behind.

    Columns below ``lanes * (W // lanes)`` fused as OpenCV's vector loop, the rest (its tail) not.
    """
    h, wd = w.shape[1], w.shape[2]
    vec = (wd // lanes) * lanes if lanes else 0
    for i in range(h):
        im, ip = max(i - 1, 0), min(i + 1, h - 1)
        first = min(0, wd)  # 0, typed int64 (a literal 0 would compile _edge once more)
        _edge(w, out, jxx, jxy, jyy, s, taps, im, i, ip, first, first, min(1, wd - 1), vec > 0)
        if wd > 1:
            _edge(w, out, jxx, jxy, jyy, s, taps, im, i, ip, wd - 2, wd - 1, wd - 1, vec >= wd)
        _span_fused(w, out, jxx, jxy, jyy, s, taps, im, i, ip, 1, min(vec, wd - 1))
        _span_plain(w, out, jxx, jxy, jyy, s, taps, im, i, ip, max(vec, 1), wd - 1)
        if mode == 0:
            continue
        if mode == 1:
            for c in range(2):  # the row, still in cache: b - A w
                bc, oc = b[c, i], out[c, i]
                for j in range(wd):
                    oc[j] = bc[j] - oc[j]
            continue
        _block_residual_row(b[0, i], b[1, i], jxy[i], q[i], p[i], det[i], omega, out[0, i], out[1, i])
        if i > 0:  # row i - 1 of w is no longer read (rows i - 1 .. i + 1 made row i): w += out there
            _add_row(w, out, i - 1)
    if mode == 2:
        _add_row(w, out, h - 1)


@_inline
def _add_row(w, out, i):
    """``w[:, i] += out[:, i]``."""
    for c in range(2):
        wc, oc = w[c, i], out[c, i]
        for j in range(wc.shape[0]):
            wc[j] = wc[j] + oc[j]


@_inline
def _block_residual_row(b0, b1, jxy, q, p, det, omega, out0, out1):
    """One row of ``block_solve(b - out) * omega`` into ``out``, in place (``r = b - out`` for :func:`_block_row`).

    Separate from :func:`_block_row` so that its output is not an input of another name: the compiled
    loop's overlap test then passes and the row is vectorised (the same operations on each value).
    """
    for j in range(out0.shape[0]):
        a, c = b0[j] - out0[j], b1[j] - out1[j]
        out0[j] = ((q[j] * a - jxy[j] * c) / det[j]) * omega
        out1[j] = ((p[j] * c - jxy[j] * a) / det[j]) * omega


@_inline
def _block_row(r0, r1, jxy, q, p, det, omega, out0, out1):
    """One row of ``block_solve(r) * omega``: ``((q r0 - jxy r1) / det) omega`` and ``((p r1 - jxy r0) / det) omega``.

    ``out`` may be ``r``.
    """
    for j in range(r0.shape[0]):
        a, b = r0[j], r1[j]
        out0[j] = ((q[j] * a - jxy[j] * b) / det[j]) * omega
        out1[j] = ((p[j] * b - jxy[j] * a) / det[j]) * omega


@_jit
def operator(w, b, out, jxx, jxy, jyy, q, p, det, s, taps, lanes, omega, mode, n):
    """:func:`_operator` ``n`` times: the one compiled entry of :func:`apply`, :func:`residual` and :func:`smooth`.

    One entry, with ``mode`` a run-time value, so that the operator is compiled once per dtype (and not
    once per mode and caller: the first Horn-Schunck job compiles the loops).
    """
    for _ in range(n):
        _operator(w, b, out, jxx, jxy, jyy, q, p, det, s, taps, lanes, omega, mode)


def apply(w, jxx, jxy, jyy, s, taps, lanes, out):
    """``out = A w`` for ``w`` (2, H, W); ``lanes``: the columns' vector width whose multiply-adds OpenCV fuses."""
    operator(w, w, out, jxx, jxy, jyy, jxx, jxx, jxx, s, taps, lanes, s, 0, 1)


def residual(x, b, jxx, jxy, jyy, s, taps, lanes, out):
    """``out = b - A x``."""
    operator(x, b, out, jxx, jxy, jyy, jxx, jxx, jxx, s, taps, lanes, s, 1, 1)


@_jit
def block_step(r, jxy, q, p, det, omega, out):
    """``out = block_solve(r) * omega``: the per-pixel 2 x 2 blocks' inverse, as :meth:`_HSLevel.block_solve`."""
    for i in range(r.shape[1]):
        _block_row(r[0, i], r[1, i], jxy[i], q[i], p[i], det[i], omega, out[0, i], out[1, i])


def smooth(x, b, jxx, jxy, jyy, q, p, det, s, taps, lanes, omega, n, res):
    """``n`` damped block-Jacobi steps ``x += omega * block_solve(b - A x)`` in place (``res``: work array).

    Each step adds a row of ``res`` to ``x`` as soon as the next row of ``res`` is made (Jacobi: the
    step reads only the former ``x``, whose row i - 1 the rows from i + 1 on do not read).
    """
    operator(x, b, res, jxx, jxy, jyy, q, p, det, s, taps, lanes, omega, 2, n)


@_jit
def restrict(r, weights, tmp, out):
    """``out = P^T r`` (2, ceil(H/2), ceil(W/2)): :func:`hs_multigrid._restrict1` on columns, then on rows.

    ``weights``: (0.75, 0.25, 0) in the dtype of ``r``; ``tmp`` is (2, H, ceil(W/2)). A missing odd cell
    (odd size) is a zero, added as the array code adds it. Cell j of a line of ``m`` cells from its fine
    cells ``e = r[2j]``, ``o = r[2j + 1]``::

        (e + o) 0.75 [+ 0.25 e_{j+1} if j < m - 1] [+ 0.25 o_{j-1} if j > 0]
                     [+ 0.25 e_0 if j = 0] [+ 0.25 o_{m-1} if j = m - 1]   (left to right)
    """
    centre, quarter, zero = weights[0], weights[1], weights[2]
    n_rows, n_cols = r.shape[1], r.shape[2]
    m_rows, m_cols = out.shape[1], out.shape[2]
    for c in range(2):
        for i in range(n_rows):  # along the columns: one value at a time
            row, dst = r[c, i], tmp[c, i]
            for j in range(1, m_cols - 1):  # inside (2 j + 1 < n_cols): the terms below, without the tests
                dst[j] = ((row[2 * j] + row[2 * j + 1]) * centre + quarter * row[2 * j + 2]) + quarter * row[2 * j - 1]
            for j in range(0, m_cols, max(m_cols - 1, 1)):  # the first and last cells
                e = row[2 * j]
                o = row[2 * j + 1] if 2 * j + 1 < n_cols else zero
                v = (e + o) * centre
                if j < m_cols - 1:
                    v = v + quarter * row[2 * j + 2]
                if j > 0:
                    v = v + quarter * row[2 * j - 1]
                if j == 0:
                    v = v + quarter * e
                if j == m_cols - 1:
                    v = v + quarter * o
                dst[j] = v
        for j in range(m_rows):  # along the rows: whole rows at a time
            even = tmp[c, 2 * j]
            has_odd = 2 * j + 1 < n_rows
            odd = tmp[c, 2 * j + 1] if has_odd else even
            after = tmp[c, 2 * j + 2] if j < m_rows - 1 else even
            before = tmp[c, 2 * j - 1] if j > 0 else even
            dst = out[c, j]
            for k in range(m_cols):
                o = odd[k] if has_odd else zero
                v = (even[k] + o) * centre
                if j < m_rows - 1:
                    v = v + quarter * after[k]
                if j > 0:
                    v = v + quarter * before[k]
                if j == 0:
                    v = v + quarter * even[k]
                if j == m_rows - 1:
                    v = v + quarter * o
                dst[k] = v


@_jit
def prolong_add(xc, weights, tmp, x):
    """``x += P xc``: :func:`hs_multigrid._prolong1` on columns, then on rows (``tmp``: (2, h, W)).

    Fine cell 2j of a line is ``0.75 xc[j] + 0.25 xc[j - 1]``, 2j + 1 is ``0.75 xc[j] + 0.25 xc[j + 1]``
    (indices clamped to the line), the line cut to the fine size.
    """
    centre, quarter = weights[0], weights[1]
    m_rows, m_cols = xc.shape[1], xc.shape[2]
    n_rows, n_cols = x.shape[1], x.shape[2]
    for c in range(2):
        for i in range(m_rows):  # along the columns
            row, dst = xc[c, i], tmp[c, i]
            for j in range(1, m_cols - 1):  # inside: fine cells 2 j, 2 j + 1 < n_cols, neighbours unclamped
                dst[2 * j] = centre * row[j] + quarter * row[j - 1]
                dst[2 * j + 1] = centre * row[j] + quarter * row[j + 1]
            last = 2 * m_cols - 2
            for f in (0, 1, last, last + 1):  # the cells at the edges (clamped neighbours)
                if f >= n_cols:
                    continue
                j = f // 2
                nb = (j - 1 if j > 0 else 0) if f % 2 == 0 else (j + 1 if j < m_cols - 1 else m_cols - 1)
                dst[f] = centre * row[j] + quarter * row[nb]
        for f in range(n_rows):  # along the rows, added to x
            j = f // 2
            nb = (j - 1 if j > 0 else 0) if f % 2 == 0 else (j + 1 if j < m_rows - 1 else m_rows - 1)
            near, far, dst = tmp[c, j], tmp[c, nb], x[c, f]
            for k in range(n_cols):
                dst[k] = dst[k] + (centre * near[k] + quarter * far[k])


@_jit
def _block_dot(a, b, lo, n):
    """One leaf of :func:`pairwise_dot` (``n <= 128`` terms from ``lo``), summed as NumPy sums it."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += np.float64(a[i]) * np.float64(b[i])
        return res
    r = np.empty(8)
    for t in range(8):
        r[t] = np.float64(a[lo + t]) * np.float64(b[lo + t])
    i = 8
    whole = n - n % 8
    while i < whole:
        for t in range(8):
            r[t] += np.float64(a[lo + i + t]) * np.float64(b[lo + i + t])
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for k in range(lo + i, lo + n):
        res += np.float64(a[k]) * np.float64(b[k])
    return res


@_jit
def pairwise_dot(a, b, lo, n):
    """``sum a[k] b[k]`` over the flat ``a``, ``b`` (1-D, any float dtypes, taken as float64) from ``lo``, ``n`` terms.

    The products rounded to float64 and summed in NumPy's pairwise order (``np.add.reduce`` of a
    contiguous array: ``pairwise_sum`` of numpy/_core/src/umath/loops_utils.h.src, numpy 2.x):
    below 8 terms one by one from 0; up to 128 in eight running sums combined as
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest one by one; above, the
    sum of the first ``n // 2`` rounded down to a multiple of 8 plus the sum of the rest. So the
    value is ``float(np.multiply(a, b).sum())``'s bits, without writing the products. The halving
    runs on an explicit stack (a recursive function's cached machine code crashes Numba 0.6x).
    """
    starts, sizes = np.empty(130, np.int64), np.empty(130, np.int64)
    stage, sums = np.zeros(130, np.int64), np.empty(130)
    starts[0], sizes[0], top, held = lo, n, 1, 0
    while top > 0:
        k = top - 1
        m = sizes[k]
        if m <= 128:  # a leaf
            sums[held] = _block_dot(a, b, starts[k], m)
            held += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[k] < 2:  # the first half, then the rest
            starts[top] = starts[k] + (half if stage[k] else 0)
            sizes[top] = m - half if stage[k] else half
            stage[top] = 0
            stage[k] += 1
            top += 1
        else:  # both halves summed: first + rest
            sums[held - 2] = sums[held - 2] + sums[held - 1]
            held -= 1
            top -= 1
    return sums[0]


@_jit
def dot(a, b):
    """``float(np.multiply(a, b).sum())`` of two C-contiguous arrays of one shape: :func:`pairwise_dot`."""
    af, bf = a.reshape(-1), b.reshape(-1)
    return pairwise_dot(af, bf, 0, af.size)


@_jit
def cg_update(x, res, direction, ad, step, res32):
    """``x += step d``, ``res -= step A d`` and ``res32 = float32(res)``; returns ``sum res * res``.

    The conjugate-gradient step in one pass, the squared residual norm summed as :func:`dot` (NumPy's
    order) and the residual rounded to float32 for the preconditioner, as ``np.copyto`` rounds it.
    """
    xf, rf, df, af, r32 = x.reshape(-1), res.reshape(-1), direction.reshape(-1), ad.reshape(-1), res32.reshape(-1)
    for k in range(xf.size):
        xf[k] = xf[k] + step * df[k]
        r = rf[k] - step * af[k]
        rf[k] = r
        r32[k] = np.float32(r)
    return pairwise_dot(rf, rf, 0, rf.size)


@_jit
def cg_direction(direction, z, beta):
    """``d = d * beta + z`` (the new search direction; ``z`` float32 or float64, taken as float64)."""
    df, zf = direction.reshape(-1), z.reshape(-1)
    for k in range(df.size):
        df[k] = df[k] * beta + np.float64(zf[k])


def weights(dtype) -> np.ndarray:
    """The transfer weights (0.75, 0.25) and a zero in ``dtype``, for :func:`restrict` and :func:`prolong_add`."""
    return np.array([0.75, 0.25, 0.0], dtype)


def taps(kernel: np.ndarray) -> np.ndarray:
    """The 8 off-centre taps of a 3 x 3 ``kernel`` with a zero centre and no other zero, row-major (OpenCV's order)."""
    kernel = np.asarray(kernel)
    if kernel.shape != (3, 3) or kernel[1, 1] != 0 or np.count_nonzero(kernel) != 8:
        raise ValueError(f"the compiled Horn-Schunck average needs a 3 x 3 kernel with only its centre zero, "
                         f"got {kernel}")
    return np.ascontiguousarray(np.delete(kernel.ravel(), 4))
