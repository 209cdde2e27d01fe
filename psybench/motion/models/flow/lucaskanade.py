"""Lucas-Kanade optical flow (Lucas & Kanade 1981), single scale by default (Tlapale et al. 2010,
RR-7317 sec. 4.4, footnote 2)."""

from __future__ import annotations

from functools import partial

import numpy as np

from psybench._opencv import cv2
from psybench.motion.models.flow.common import (
    _SPLINE_PAD,
    _check_frames,
    _coarse_to_fine,
    _number,
    _spline_coefficients,
)
from psybench.registry import register

__all__ = ["lucas_kanade"]

LK_REFERENCE = "Lucas & Kanade (1981), Proc. IJCAI 674-679"


# -------------------------------------------------------------------- Lucas-Kanade
def _gaussian_kernel(sigma: float) -> np.ndarray:
    """``scipy.ndimage.gaussian_filter``'s 1-D kernel: truncated at 4 sigma, normalised."""
    radius = int(4.0 * sigma + 0.5)
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    kernel /= kernel.sum()
    return kernel


def _gaussian_window(stack: np.ndarray, *, sigma: float, out: np.ndarray | None = None) -> np.ndarray:
    """Normalised Gaussian window applied to each (H, W) map of ``stack``, shape (K, H, W), into ``out``.

    The kernel is exactly ``scipy.ndimage.gaussian_filter``'s (truncated at 4 sigma,
    edges replicated = ``mode="nearest"``), applied with ``cv2.sepFilter2D``, which
    gives the same numbers to float64 rounding (tested) about 5 times faster.
    """
    kernel = _gaussian_kernel(sigma)
    out = np.empty_like(stack) if out is None else out
    for m, o in zip(stack, out):
        cv2.sepFilter2D(m, -1, kernel, kernel, dst=o, borderType=cv2.BORDER_REPLICATE)
    return out


def _lk_solve(a11: np.ndarray, a12: np.ndarray, a22: np.ndarray, b1: np.ndarray, b2: np.ndarray, *,
              min_eigenvalue: float, min_eigen_ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Solve ``A d = -b`` per pixel, dropping directions of tiny eigenvalue (normal flow on edges).

    With ``lambda1 >= lambda2`` the eigenvalues of the symmetric ``A`` and ``e1`` the
    eigenvector of ``lambda1``:

    * ``lambda2 >= max(min_eigenvalue, min_eigen_ratio * lambda1)``: full solution
      ``d = -A^{-1} b``;
    * else, ``lambda1 >= min_eigenvalue``: only the component along ``e1`` (the
      normal flow of an edge, the aperture problem): ``d = -(e1 . b / lambda1) e1``,
      computed with the spectral projector ``e1 e1^T = (A - lambda2 I) / (lambda1 - lambda2)``;
    * else (no texture): ``d = 0``.

    This follows the eigenvalue reliability test of Barron, Fleet & Beauchemin's
    (1994) Lucas-Kanade, with a relative test added for ``lambda2`` (see
    :func:`lucas_kanade`).
    """
    # the formulas below, each step written into arrays already allocated (the same operations on
    # every value, so the same bits, with a third fewer passes over memory)
    half_trace = np.add(a11, a22)
    half_trace *= 0.5
    disc = np.subtract(a11, a22)
    disc *= 0.5
    np.hypot(disc, a12, out=disc)
    lam1 = half_trace + disc
    lam2 = np.subtract(half_trace, disc, out=half_trace)
    floor = np.multiply(lam1, min_eigen_ratio)
    full = lam2 >= np.maximum(floor, min_eigenvalue, out=floor)
    normal = lam1 >= min_eigenvalue
    normal &= ~full
    # one formula for both cases: d = -M b with M = A^{-1} (full) or e1 e1^T / lambda1 (normal)
    tmp = np.multiply(a12, a12)
    det = np.multiply(a11, a22, out=floor)
    det -= tmp
    inv_det = np.zeros_like(a11)
    np.divide(1.0, det, out=inv_det, where=full)
    proj = np.multiply(lam1, 2.0, out=lam1)
    proj *= disc
    inv_proj = np.zeros_like(a11)
    np.divide(1.0, proj, out=inv_proj, where=normal)
    m11 = np.multiply(a22, inv_det)
    m11 += np.multiply(np.subtract(a11, lam2, out=tmp), inv_proj, out=tmp)
    m22 = np.multiply(a11, inv_det)
    m22 += np.multiply(np.subtract(a22, lam2, out=tmp), inv_proj, out=tmp)
    m12 = np.subtract(inv_proj, inv_det, out=inv_proj)
    m12 *= a12
    du = np.multiply(m11, b1, out=m11)
    du += np.multiply(m12, b2, out=tmp)
    dv = np.multiply(m12, b1, out=m12)
    dv += np.multiply(m22, b2, out=m22)
    return np.negative(du, out=du), np.negative(dv, out=dv)


def _lk_level(i0: np.ndarray, i1: np.ndarray, flow0: np.ndarray, *, window_sigma: float, n_warps: int,
              min_eigenvalue: float, min_eigen_ratio: float) -> np.ndarray:
    """Iterative Lucas-Kanade at one scale: ``n_warps`` Gauss-Newton steps, each after warping ``i1``.

    Each step solves, at every pixel, the Gaussian-weighted least squares of
    [LK81]_ (their Newton-Raphson registration step, in 2-D) for the increment
    ``d`` (see :func:`_lk_solve`)::

        A d = -[G * (I_x I_t), G * (I_y I_t)],
        A = [[G * I_x^2, G * I_x I_y], [G * I_x I_y, G * I_y^2]]

    with ``G`` the normalised Gaussian window, ``I_t = i1(x + flow) - i0(x)`` and the
    gradient averaged over both images (central differences).
    """
    from psybench.motion.models.flow import lk_kernels  # compiled (cached) on first use, not at planning

    gy0, gx0 = np.gradient(i0)
    flow = flow0.copy()
    # what does not change between the warps: i1's spline coefficients (once the flow is
    # non-zero) and the work arrays of the five products and their windowed sums
    coefficients = None
    products = np.empty((5,) + i0.shape)
    sums = np.empty_like(products)
    i1w_buffer = np.empty_like(i0)
    kernel = _gaussian_kernel(window_sigma)
    for _ in range(n_warps):
        if not flow.any():
            i1w = i1  # as _warp: a zero flow leaves the image as it is
        else:  # _warp(i1, flow, coefficients), the same bits, in one compiled pass
            if coefficients is None:
                coefficients = _spline_coefficients(i1)
            lk_kernels.warp(coefficients, flow, float(_SPLINE_PAD), i1w_buffer)
            i1w = i1w_buffer
        # it = i1w - i0, the gradients averaged over both frames and their five products, in one pass
        if not lk_kernels.products(i1w, i0, gx0, gy0, products):
            break  # exact fit: the increment would be zero
        lk_kernels.window(products, kernel, sums)  # = _gaussian_window(products, sigma=window_sigma), the same bits
        lk_kernels.solve_add(sums, min_eigenvalue, min_eigen_ratio, flow)  # flow += _lk_solve(*sums), per pixel
    return flow


@register("lucas_kanade", track="motion", kind="pair", reference=LK_REFERENCE,
          bounds={"n_warps": (0, 1_000), "levels": (0, 16)})
def lucas_kanade(
    frame0: np.ndarray,
    frame1: np.ndarray,
    *,
    window_sigma: float = 2.0,
    n_warps: int = 5,
    levels: int = 1,
    sigma: float = 1.0,
    min_eigenvalue: float = 1e-6,
    min_eigen_ratio: float = 0.01,
) -> np.ndarray:
    """Dense Lucas-Kanade optical flow: Gaussian-weighted local least squares with warping (Lucas & Kanade 1981).

    At every pixel the flow minimises the windowed sum
    ``sum_y G(x - y) (I_x u + I_y v + I_t)^2`` ([LK81]_ with a Gaussian weighting
    window); the linearisation is refined ``n_warps`` times by warping ``frame1``
    with the current flow (the paper's iterative registration).

    Parameters
    ----------
    frame0, frame1 : ndarray, shape (H, W)
        Consecutive frames, luminance in [0, 1].
    window_sigma : float
        Standard deviation (px) of the Gaussian window ``G`` (truncated at 4 sigma).
        scikit-image's ``optical_flow_ilk(radius=r, gaussian=True)`` uses
        ``sigma = (2 r + 1) / 4``.
    n_warps : int
        Gauss-Newton iterations (warps of ``frame1``) per pyramid level.
    levels : int
        Maximum number of coarse-to-fine pyramid levels (factor 2). 1 (default) is
        single scale, as in the OpenCV implementation RR-7317 used.
    sigma : float
        Standard deviation (px of each pyramid level) of a Gaussian pre-smoothing
        of both frames; 0 disables it. [LK81]_ smooth the images to widen the
        range of convergence; here it mainly removes the pixel-scale staircase of rendered
        oblique edges, which otherwise gives their structure tensor a spurious
        second eigenvalue (see ``min_eigen_ratio``).
    min_eigenvalue : float
        Absolute floor on the structure tensor's eigenvalues, in (luminance/px)^2
        (the default 1e-6 is a gradient of 1e-3 per px): below it a direction
        carries no information and its flow component is not estimated.
    min_eigen_ratio : float
        Relative floor ``lambda2 / lambda1`` below which the 2x2 system is treated
        as rank one (a straight edge, the aperture problem) and only the normal
        flow ``-(e1 . b / lambda1) e1`` is estimated (Barron, Fleet & Beauchemin
        1994 use an absolute threshold on ``lambda2``; a ratio is independent of
        contrast). Without it, a rendered oblique line with
        ``lambda2 / lambda1 ~ 1e-3`` gets a tangential component of several px from
        rendering residue. Set 0 to solve every system with ``lambda2 >= min_eigenvalue``.

    Returns
    -------
    flow : ndarray, shape (H, W, 2), float32
        ``(u, v)`` px/frame, ``frame0(x) ~ frame1(x + flow(x))``. Exactly zero
        when the frames are identical.

    References
    ----------
    .. [LK81] Lucas & Kanade (1981), Proc. IJCAI 674-679.
    .. [BFB94] Barron, Fleet & Beauchemin (1994). Performance of optical flow
       techniques. IJCV 12, 43-77.
    """
    name = "lucas_kanade"
    f0, f1 = _check_frames(name, frame0, frame1)
    window_sigma = _number(name, "window_sigma", window_sigma)
    n_warps = _number(name, "n_warps", n_warps, integer=True)
    levels = _number(name, "levels", levels, integer=True)
    sigma = _number(name, "sigma", sigma, strict=False)
    min_eigenvalue = _number(name, "min_eigenvalue", min_eigenvalue)
    min_eigen_ratio = _number(name, "min_eigen_ratio", min_eigen_ratio, strict=False, high=1.0)
    solver = partial(_lk_level, window_sigma=window_sigma, n_warps=n_warps, min_eigenvalue=min_eigenvalue,
                     min_eigen_ratio=min_eigen_ratio)
    return _coarse_to_fine(f0, f1, solver, levels, sigma=sigma).astype(np.float32)
