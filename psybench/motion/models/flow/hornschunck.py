"""Horn-Schunck optical flow (Horn & Schunck 1981), single scale by default (Tlapale et al. 2010,
RR-7317 sec. 4.4, footnote 2)."""

from __future__ import annotations

from functools import partial

import cv2
import numpy as np

from psybench.motion.models.flow.common import (
    _check_frames,
    _coarse_to_fine,
    _number,
    _warp,
)
from psybench.registry import register

__all__ = ["horn_schunck", "HS_AVERAGE_KERNEL"]

HS_REFERENCE = "Horn & Schunck (1981), Artificial Intelligence 17:185-203"

# Horn & Schunck (1981), section 8: the local average u_bar weights the four
# edge neighbours by 1/6 and the four corner neighbours by 1/12 (centre 0).
HS_AVERAGE_KERNEL = np.array([[1, 2, 1], [2, 0, 2], [1, 2, 1]], dtype=float) / 12.0
_HS_KERNEL32 = HS_AVERAGE_KERNEL.astype(np.float32)


# -------------------------------------------------------------------- Horn-Schunck
def _hs_derivatives(i0: np.ndarray, i1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E_x, E_y, E_t of Horn & Schunck (1981), section 7: first differences averaged over the 2x2x2 cube.

    With ``E[i, j, k]`` (row i, column j, frame k)::

        E_x ~ 1/4 sum over (di, dk) in {0,1}^2 of E[i+di, j+1, k+dk] - E[i+di, j, k+dk]

    and likewise E_y (rows) and E_t (frames). The estimates refer to the cube's
    centre (i + 1/2, j + 1/2, k + 1/2) and, as in the paper, are indexed by its
    corner (i, j): the flow field is therefore staggered by half a pixel right and
    down. The last row and column are replicated so the output keeps shape (H, W).
    """
    p0 = np.pad(i0, ((0, 1), (0, 1)), mode="edge")
    p1 = np.pad(i1, ((0, 1), (0, 1)), mode="edge")
    s = p0 + p1  # sum over the two frames
    d = p1 - p0  # difference over the two frames
    ex = 0.25 * (s[:-1, 1:] - s[:-1, :-1] + s[1:, 1:] - s[1:, :-1])
    ey = 0.25 * (s[1:, :-1] - s[:-1, :-1] + s[1:, 1:] - s[:-1, 1:])
    et = 0.25 * (d[:-1, :-1] + d[:-1, 1:] + d[1:, :-1] + d[1:, 1:])
    return ex, ey, et


def _hs_average(field: np.ndarray) -> np.ndarray:
    """The paper's weighted neighbourhood average ``u_bar`` (HS_AVERAGE_KERNEL) of a float32 (H, W) field.

    Borders replicate the flow (zero normal derivative, the natural boundary
    condition of the variational problem). The 3x3 stencil is applied with
    ``cv2.filter2D``: the same numbers as
    ``scipy.ndimage.correlate(field, HS_AVERAGE_KERNEL, mode="nearest")`` (to float32
    rounding; tested) at about 1/15 of the cost, which dominates the iterations.
    """
    kernel = _HS_KERNEL32 if field.dtype == np.float32 else HS_AVERAGE_KERNEL
    return cv2.filter2D(field, -1, kernel, borderType=cv2.BORDER_REPLICATE)


def _hs_level(i0: np.ndarray, i1: np.ndarray, flow0: np.ndarray, *, alpha: float, n_iter: int,
              tol: float) -> np.ndarray:
    """Horn-Schunck flow at one scale, linearised about ``flow0``: the paper's equations solved to ``tol``.

    The paper (section 12) iterates, Jacobi style::

        u^{n+1} = u_bar^n - E_x (E_x u_bar^n + E_y v_bar^n + E_t) / (alpha^2 + E_x^2 + E_y^2)

    (and likewise ``v``), whose fixed point solves the linear equations of its
    section 11 (the paper absorbs the factor kappa = 3 of its Laplacian estimate
    ``lap u ~ kappa (u_bar - u)`` into alpha^2; we keep its equations as printed)::

        E_x (E_x u + E_y v) + alpha^2 (u - u_bar) = -E_x E_t
        E_y (E_x u + E_y v) + alpha^2 (v - v_bar) = -E_y E_t

    The operator on the left is symmetric positive definite (``u_bar`` is a
    symmetric average whose replicated borders only add to its diagonal), so we
    solve the same equations by conjugate gradients (Hestenes & Stiefel 1952),
    which reaches the fixed point in O(N) iterations for an N-pixel side where
    the Jacobi iterations need O(N^2) (information spreads about one pixel per
    Jacobi iteration). The iterations stop at the relative residual ``tol`` or
    after ``n_iter``. ``alpha`` is relative to the luminance range ``max - min``
    of the pair at this level (0 range: no motion, the flow stays ``flow0``).
    For ``flow0 != 0`` (coarse to fine) ``frame1`` is first warped by ``flow0`` and
    the constraint becomes ``E_x (u - u0) + E_y (v - v0) + E_t = 0``, while the
    smoothness term acts on the total flow ``u``; ``flow0`` is also where the
    iterations start.
    """
    x = np.array(flow0, np.float64)
    span = float(max(i0.max(), i1.max()) - min(i0.min(), i1.min()))
    if span <= 0.0:
        return x
    ex, ey, et = _hs_derivatives(i0, _warp(i1, flow0))
    if flow0.any():
        et = et - ex * flow0[..., 0] - ey * flow0[..., 1]
    a2 = (alpha * span) ** 2
    # (u, v) stacked along a leading axis: float64 conjugate gradients
    g = np.stack([ex, ey])

    def apply(w: np.ndarray) -> np.ndarray:  # the left-hand side of the equations
        data = g * (ex * w[0] + ey * w[1])
        data[0] += a2 * (w[0] - _hs_average(w[0]))
        data[1] += a2 * (w[1] - _hs_average(w[1]))
        return data

    x = np.ascontiguousarray(np.moveaxis(x, -1, 0))
    b = -g * et
    b_norm = float(np.sqrt(np.vdot(b, b)))
    r = b - apply(x)
    rs = float(np.vdot(r, r))
    if b_norm == 0.0 or np.sqrt(rs) <= tol * b_norm:
        return np.moveaxis(x, 0, -1)
    d = r.copy()
    for _ in range(n_iter):
        md = apply(d)
        step = rs / float(np.vdot(d, md))
        x += step * d
        r -= step * md
        rs_new = float(np.vdot(r, r))
        if np.sqrt(rs_new) <= tol * b_norm:
            break
        d *= rs_new / rs
        d += r
        rs = rs_new
    return np.moveaxis(x, 0, -1)


@register("horn_schunck", track="motion", kind="pair", reference=HS_REFERENCE)
def horn_schunck(
    frame0: np.ndarray,
    frame1: np.ndarray,
    *,
    alpha: float = 0.04,
    n_iter: int = 1000,
    tol: float = 1e-2,
    sigma: float = 1.0,
    levels: int = 1,
) -> np.ndarray:
    """Horn-Schunck optical flow: brightness constancy plus global smoothness (Horn & Schunck 1981).

    Minimises ``sum (E_x u + E_y v + E_t)^2 + alpha^2 (|grad u|^2 + |grad v|^2)``
    ([HS81]_, up to the paper's discretisation) by the paper's Jacobi
    iterations (section 12) starting from zero flow, with derivatives averaged
    over the 2x2x2 cube (section 7) and the 1/6, 1/12 neighbourhood average
    (section 8), solved to convergence (conjugate gradients on the paper's
    equations, see :func:`_hs_level`).

    Parameters
    ----------
    frame0, frame1 : ndarray, shape (H, W)
        Consecutive frames, luminance in [0, 1].
    alpha : float
        Smoothness weight alpha of [HS81]_ *relative to the stimulus contrast*: the
        iterations use ``alpha * (L_max - L_min)``, the luminance range of the
        (pre-smoothed) pair. The paper's estimates E_x, E_y, E_t all scale with
        contrast, so a fixed alpha weighs smoothness more on a faint stimulus
        than on a strong one; relative to the range, the solution is the same at
        every contrast (``alpha * k`` for frames ``L0 + k (I - L0)``). 0.04 equals the
        former absolute 0.02 at the range 0.5 of a contrast-1 line stimulus on
        the 0.5 background, i.e. the old calibration at the reference contrast.
    n_iter : int
        Largest number of (conjugate-gradient) iterations per pyramid level.
    tol : float
        Convergence tolerance: the iterations stop when the residual of the
        paper's equations falls below ``tol`` times its value at zero flow. A
        fixed count of the paper's Jacobi iterations (100 here before) left the
        interior of large apertures unfilled, because information spreads about
        one pixel per Jacobi iteration.
    sigma : float
        Standard deviation (px of each pyramid level) of the Gaussian pre-smoothing
        of both frames; 0 disables it. [HS81]_ (sections 3 and 13) assume a brightness
        pattern that varies smoothly, whose derivatives the 2x2x2 first differences
        estimate well; on a sharp line of 2 px they are aliased, and the error then
        depends on the line's orientation relative to the pixel grid. Barron, Fleet &
        Beauchemin (1994, IJCV 12:43, sec. 4) pre-smooth with a Gaussian of
        sigma 1.5 for the same reason; 1 px keeps 2-px lines.
    levels : int
        Maximum number of coarse-to-fine pyramid levels (factor 2, warping between
        levels). 1 (default) is the paper's single-scale method, as in the OpenCV
        implementation RR-7317 used.

    Returns
    -------
    flow : ndarray, shape (H, W, 2), float32
        ``(u, v)`` px/frame, ``frame0(x) ~ frame1(x + flow(x))``. Exactly zero
        when the frames are identical.

    Notes
    -----
    The cube-averaged derivatives refer to points half a pixel right and below
    each pixel (see :func:`_hs_derivatives`); the flow is reported on the pixel
    grid like the paper does, i.e. staggered by (+1/2, +1/2) px.

    References
    ----------
    .. [HS81] Horn & Schunck (1981), Artificial Intelligence 17:185-203.
    """
    name = "horn_schunck"
    f0, f1 = _check_frames(name, frame0, frame1)
    alpha = _number(name, "alpha", alpha)
    n_iter = _number(name, "n_iter", n_iter, integer=True, strict=False)
    tol = _number(name, "tol", tol)
    sigma = _number(name, "sigma", sigma, strict=False)
    levels = _number(name, "levels", levels, integer=True)
    solver = partial(_hs_level, alpha=alpha, n_iter=n_iter, tol=tol)
    return _coarse_to_fine(f0, f1, solver, levels, sigma=sigma).astype(np.float32)
