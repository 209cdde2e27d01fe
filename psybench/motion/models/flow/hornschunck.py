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
    return cv2.filter2D(field, -1, _HS_KERNEL32, borderType=cv2.BORDER_REPLICATE)


def _hs_level(i0: np.ndarray, i1: np.ndarray, flow0: np.ndarray, *, alpha2: float, n_iter: int) -> np.ndarray:
    """Horn-Schunck Jacobi iterations (paper, section 12) at one scale, linearised about ``flow0``.

    With ``flow0 = 0`` this is exactly the paper's scheme::

        u^{n+1} = u_bar^n - E_x (E_x u_bar^n + E_y v_bar^n + E_t) / (alpha^2 + E_x^2 + E_y^2)
        v^{n+1} = v_bar^n - E_y (E_x u_bar^n + E_y v_bar^n + E_t) / (alpha^2 + E_x^2 + E_y^2)

    (the paper absorbs the factor kappa = 3 of its Laplacian estimate
    ``lap u ~ kappa (u_bar - u)`` into alpha^2; we keep its equations as printed).
    For ``flow0 != 0`` (coarse to fine) ``frame1`` is first warped by ``flow0`` and
    the constraint becomes ``E_x (u - u0) + E_y (v - v0) + E_t = 0``, while the
    smoothness term acts on the total flow ``u``.
    """
    ex, ey, et = _hs_derivatives(i0, _warp(i1, flow0))
    if flow0.any():
        et = et - ex * flow0[..., 0] - ey * flow0[..., 1]
    # float32 iterations: the flow needs no more precision, and they run twice as fast.
    ex, ey, et = (np.asarray(a, np.float32) for a in (ex, ey, et))
    denom = np.float32(alpha2) + ex * ex + ey * ey
    ex_n, ey_n = ex / denom, ey / denom
    u = np.array(flow0[..., 0], np.float32)
    v = np.array(flow0[..., 1], np.float32)
    r = np.empty_like(u)
    tmp = np.empty_like(u)
    for _ in range(n_iter):
        u_bar, v_bar = _hs_average(u), _hs_average(v)
        np.multiply(ex, u_bar, out=r)
        r += np.multiply(ey, v_bar, out=tmp)
        r += et
        np.subtract(u_bar, np.multiply(ex_n, r, out=tmp), out=u)
        np.subtract(v_bar, np.multiply(ey_n, r, out=tmp), out=v)
    return np.stack([u, v], axis=-1).astype(np.float64)


@register("horn_schunck", track="motion", kind="pair", reference=HS_REFERENCE)
def horn_schunck(
    frame0: np.ndarray,
    frame1: np.ndarray,
    *,
    alpha: float = 0.02,
    n_iter: int = 100,
    sigma: float = 0.0,
    levels: int = 1,
) -> np.ndarray:
    """Horn-Schunck optical flow: brightness constancy plus global smoothness (Horn & Schunck 1981).

    Minimises ``sum (E_x u + E_y v + E_t)^2 + alpha^2 (|grad u|^2 + |grad v|^2)``
    ([HS81]_, up to the paper's discretisation) by the paper's Jacobi
    iterations (section 12) starting from zero flow, with derivatives averaged
    over the 2x2x2 cube (section 7) and the 1/6, 1/12 neighbourhood average
    (section 8).

    Parameters
    ----------
    frame0, frame1 : ndarray, shape (H, W)
        Consecutive frames, luminance in [0, 1].
    alpha : float
        Smoothness weight, alpha of [HS81]_ (alpha^2 enters the iteration), in
        luminance units per pixel for luminance in [0, 1] (an 8-bit image's alpha
        is 255 times larger). Larger values give smoother flow and fill in
        textureless regions; ``alpha`` comparable to the typical image gradient
        balances data and smoothness.
    n_iter : int
        Jacobi iterations per pyramid level (the paper shows 1 to 64). Information
        spreads about one pixel per iteration into textureless regions.
    sigma : float
        Standard deviation (px of each pyramid level) of an optional Gaussian
        pre-smoothing of both frames; 0 (default, the paper) disables it.
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
    sigma = _number(name, "sigma", sigma, strict=False)
    levels = _number(name, "levels", levels, integer=True)
    solver = partial(_hs_level, alpha2=alpha * alpha, n_iter=n_iter)
    return _coarse_to_fine(f0, f1, solver, levels, sigma=sigma).astype(np.float32)
