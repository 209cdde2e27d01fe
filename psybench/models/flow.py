"""Classic optical flow: Horn-Schunck, Lucas-Kanade, Farneback and DIS.

Every function here is a ``kind="pair"`` algorithm of the ``motion`` track
(see :mod:`psybench.registry`)::

    flow = f(frame0, frame1, *, knobs...)

with ``frame0`` and ``frame1`` of shape ``(H, W)``, luminance in [0, 1], and
``flow`` of shape ``(H, W, 2)`` float32 holding ``(u, v)`` in px/frame, ``u``
rightward and ``v`` downward, such that ``frame0(x) ~ frame1(x + flow(x))``
(the convention of OpenCV and, with axes swapped to ``(row, col)``, of
``skimage.registration``).

Brightness constancy ``I(x, t) = I(x + w, t + 1)`` linearised gives the optical
flow constraint ``I_x u + I_y v + I_t = 0`` (Horn & Schunck 1981, section 3)
with ``I_t = frame1 - frame0``; Horn-Schunck adds a global smoothness term,
Lucas-Kanade a local least-squares fit, both implemented here in NumPy/SciPy
(their two fixed linear filters, the 3x3 Horn-Schunck average and the
Lucas-Kanade Gaussian window, run through ``cv2.filter2D``/``cv2.sepFilter2D``
for speed; the tests check them against ``scipy.ndimage``). Farneback and DIS
call OpenCV.

RR-7317 (Motion Psychobench, footnote 2 of section 4.4) took its Horn-Schunck
and Lucas-Kanade from OpenCV's legacy single-scale implementations
(``cvCalcOpticalFlowHS`` / ``cvCalcOpticalFlowLK``, since removed from OpenCV);
hence the single-scale defaults (``levels=1``) below.

OpenCV is limited to one thread (``cv2.setNumThreads(1)`` at import): the
runner (:mod:`psybench.models.run`) already processes frame pairs in parallel
threads, and nested thread pools only oversubscribe the cores.

References
----------
.. [HS81] Horn, B. K. P. & Schunck, B. G. (1981). Determining optical flow.
   Artificial Intelligence 17, 185-203.
.. [LK81] Lucas, B. D. & Kanade, T. (1981). An iterative image registration
   technique with an application to stereo vision. Proc. IJCAI, 674-679.
.. [F03] Farneback, G. (2003). Two-frame motion estimation based on polynomial
   expansion. Proc. SCIA, LNCS 2749, 363-370.
.. [K16] Kroeger, T., Timofte, R., Dai, D. & Van Gool, L. (2016). Fast optical
   flow using dense inverse search. Proc. ECCV, LNCS 9908, 471-488.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import cv2
import numpy as np
from scipy import ndimage as ndi

from psybench.registry import register

__all__ = ["horn_schunck", "lucas_kanade", "farneback", "dis", "DIS_PRESETS"]

cv2.setNumThreads(1)

HS_REFERENCE = "Horn & Schunck (1981), Artificial Intelligence 17:185-203"
LK_REFERENCE = "Lucas & Kanade (1981), Proc. IJCAI 674-679"
FARNEBACK_REFERENCE = "Farneback (2003), Proc. SCIA, LNCS 2749:363-370 (OpenCV calcOpticalFlowFarneback)"
DIS_REFERENCE = "Kroeger, Timofte, Dai & Van Gool (2016), Proc. ECCV, LNCS 9908:471-488 (OpenCV DISOpticalFlow)"

#: OpenCV's DIS presets by name.
DIS_PRESETS = {
    "ultrafast": cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST,
    "fast": cv2.DISOPTICAL_FLOW_PRESET_FAST,
    "medium": cv2.DISOPTICAL_FLOW_PRESET_MEDIUM,
}

# Horn & Schunck (1981), section 8: the local average u_bar weights the four
# edge neighbours by 1/6 and the four corner neighbours by 1/12 (centre 0).
HS_AVERAGE_KERNEL = np.array([[1, 2, 1], [2, 0, 2], [1, 2, 1]], dtype=float) / 12.0
_HS_KERNEL32 = HS_AVERAGE_KERNEL.astype(np.float32)

# Coarse-to-fine pyramids stop before a level's shorter side drops below this.
_MIN_PYRAMID_SIDE = 8
# Anti-aliasing Gaussian (px) applied before each 2x decimation of a pyramid.
_PYRAMID_SIGMA = 1.0


# --------------------------------------------------------------------------- checks
def _check_frames(name: str, frame0: Any, frame1: Any) -> tuple[np.ndarray, np.ndarray]:
    f0 = np.asarray(frame0)
    f1 = np.asarray(frame1)
    if f0.ndim != 2 or f1.ndim != 2:
        raise ValueError(f"{name}: frames must be 2-D (H, W), got shapes {f0.shape} and {f1.shape}")
    if f0.shape != f1.shape:
        raise ValueError(f"{name}: frames differ in shape: {f0.shape} vs {f1.shape}")
    if min(f0.shape) < 2:
        raise ValueError(f"{name}: frames of shape {f0.shape} are too small (need at least 2x2)")
    f0 = f0.astype(np.float64, copy=False)
    f1 = f1.astype(np.float64, copy=False)
    if not (np.all(np.isfinite(f0)) and np.all(np.isfinite(f1))):
        raise ValueError(f"{name}: frames contain non-finite values (NaN/inf)")
    return f0, f1


def _number(model: str, key: str, value: Any, *, low: float = 0.0, strict: bool = True,
            integer: bool = False, high: float | None = None) -> Any:
    """Validate knob ``key`` of ``model``: a (positive) number, optionally an integer below ``high``."""
    types = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    ok_type = isinstance(value, types)
    if isinstance(value, bool) or not ok_type or not np.isfinite(value):
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{model}: parameter {key!r} must be {kind}, got {value!r}")
    if (value <= low) if strict else (value < low):
        raise ValueError(f"{model}: parameter {key!r} must be {'>' if strict else '>='} {low}, got {value!r}")
    if high is not None and value >= high:
        raise ValueError(f"{model}: parameter {key!r} must be < {high}, got {value!r}")
    return int(value) if integer else float(value)


# ------------------------------------------------------------------ shared helpers
def _warp(image: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """``image(x + flow(x))`` by cubic B-spline interpolation, edges replicated.

    Cubic rather than bilinear: bilinear interpolation blurs the warped image by a
    sub-pixel-dependent amount, which left ~0.08 px/frame of end-point error in
    Lucas-Kanade on a smooth translating texture (cubic: ~0.003). Warping by an
    identically zero flow is the identity (returned as is), which keeps zero
    motion at exactly zero flow.
    """
    if not flow.any():
        return image
    h, w = image.shape
    rows, cols = np.mgrid[0:h, 0:w].astype(np.float64)
    coords = np.stack([rows + flow[..., 1], cols + flow[..., 0]])
    return ndi.map_coordinates(image, coords, order=3, mode="nearest")


def _pyramid(image: np.ndarray, levels: int) -> list[np.ndarray]:
    """Gaussian pyramid, coarsest first; level k+1 = (G_sigma * level k)[::2, ::2]."""
    pyr = [image]
    while len(pyr) < levels and min(pyr[-1].shape) // 2 >= _MIN_PYRAMID_SIDE:
        pyr.append(ndi.gaussian_filter(pyr[-1], _PYRAMID_SIGMA, mode="nearest")[::2, ::2])
    return pyr[::-1]


def _upsample_flow(flow: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Flow of a pyramid level to the next finer level: fine pixel x sits at coarse x / 2."""
    if not flow.any():
        return np.zeros(shape + (2,), flow.dtype)
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float64) / 2.0
    out = np.empty(shape + (2,), flow.dtype)
    for c in range(2):
        out[..., c] = 2.0 * ndi.map_coordinates(flow[..., c], [rows, cols], order=1, mode="nearest")
    return out


def _coarse_to_fine(
    frame0: np.ndarray, frame1: np.ndarray, solver: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    levels: int, *, sigma: float = 0.0,
) -> np.ndarray:
    """Run ``solver(I0, I1, flow_init) -> flow`` from the coarsest pyramid level to the finest.

    ``sigma`` > 0 pre-smooths both images of every level by a Gaussian of that
    standard deviation in the level's own pixels (the pyramid is built from the
    unsmoothed frames).
    """
    pyr0, pyr1 = _pyramid(frame0, levels), _pyramid(frame1, levels)
    flow = np.zeros(pyr0[0].shape + (2,), np.float64)
    for k, (i0, i1) in enumerate(zip(pyr0, pyr1)):
        if k:
            flow = _upsample_flow(flow, i0.shape)
        if sigma > 0:
            i0 = ndi.gaussian_filter(i0, sigma, mode="nearest")
            i1 = ndi.gaussian_filter(i1, sigma, mode="nearest")
        flow = solver(i0, i1, flow)
    return flow


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


# -------------------------------------------------------------------- Lucas-Kanade
def _gaussian_window(stack: np.ndarray, *, sigma: float) -> np.ndarray:
    """Normalised Gaussian window applied to each (H, W) map of ``stack``, shape (K, H, W).

    The kernel is exactly ``scipy.ndimage.gaussian_filter``'s (truncated at 4 sigma,
    edges replicated = ``mode="nearest"``), applied with ``cv2.sepFilter2D``, which
    gives the same numbers to float64 rounding (tested) about 5 times faster.
    """
    radius = int(4.0 * sigma + 0.5)
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    kernel /= kernel.sum()
    return np.stack([cv2.sepFilter2D(m, -1, kernel, kernel, borderType=cv2.BORDER_REPLICATE) for m in stack])


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
    half_trace = 0.5 * (a11 + a22)
    disc = np.hypot(0.5 * (a11 - a22), a12)
    lam1, lam2 = half_trace + disc, half_trace - disc
    full = lam2 >= np.maximum(min_eigenvalue, min_eigen_ratio * lam1)
    normal = ~full & (lam1 >= min_eigenvalue)
    # one formula for both cases: d = -M b with M = A^{-1} (full) or e1 e1^T / lambda1 (normal)
    inv_det = np.zeros_like(a11)
    np.divide(1.0, a11 * a22 - a12 * a12, out=inv_det, where=full)
    inv_proj = np.zeros_like(a11)
    np.divide(1.0, lam1 * 2.0 * disc, out=inv_proj, where=normal)
    m11 = a22 * inv_det + (a11 - lam2) * inv_proj
    m22 = a11 * inv_det + (a22 - lam2) * inv_proj
    m12 = a12 * (inv_proj - inv_det)
    return -(m11 * b1 + m12 * b2), -(m12 * b1 + m22 * b2)


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
    grad0 = np.stack(np.gradient(i0)[::-1])  # (d/dx, d/dy)
    flow = flow0.copy()
    window = partial(_gaussian_window, sigma=window_sigma)
    for _ in range(n_warps):
        i1w = _warp(i1, flow)
        it = i1w - i0
        if not it.any():
            break  # exact fit: the increment would be zero
        gx, gy = 0.5 * (grad0 + np.stack(np.gradient(i1w)[::-1]))
        s = window(np.stack([gx * gx, gx * gy, gy * gy, gx * it, gy * it]))
        du, dv = _lk_solve(*s, min_eigenvalue=min_eigenvalue, min_eigen_ratio=min_eigen_ratio)
        flow[..., 0] += du
        flow[..., 1] += dv
    return flow


@register("lucas_kanade", track="motion", kind="pair", reference=LK_REFERENCE)
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


# ---------------------------------------------------------------------- Farneback
@register("farneback", track="motion", kind="pair", reference=FARNEBACK_REFERENCE)
def farneback(
    frame0: np.ndarray,
    frame1: np.ndarray,
    *,
    pyr_scale: float = 0.5,
    levels: int = 3,
    winsize: int = 15,
    iterations: int = 3,
    poly_n: int = 5,
    poly_sigma: float = 1.2,
    gaussian_window: bool = False,
) -> np.ndarray:
    """Farneback polynomial-expansion optical flow (Farneback 2003), OpenCV's implementation.

    Parameters
    ----------
    frame0, frame1 : ndarray, shape (H, W)
        Consecutive frames, luminance in [0, 1].
    pyr_scale : float
        Scale between pyramid levels, in (0, 1).
    levels : int
        Pyramid levels including the full-resolution image.
    winsize : int
        Averaging window size (px).
    iterations : int
        Iterations per pyramid level.
    poly_n : {5, 7}
        Neighbourhood size for the quadratic polynomial expansion of [F03]_.
    poly_sigma : float
        Gaussian applicability width of the expansion (1.1-1.2 for poly_n=5, 1.5 for 7).
    gaussian_window : bool
        Gaussian instead of box averaging window (``OPTFLOW_FARNEBACK_GAUSSIAN``).

    Returns
    -------
    flow : ndarray, shape (H, W, 2), float32
        ``(u, v)`` px/frame, ``frame0(x) ~ frame1(x + flow(x))``.

    Notes
    -----
    Frames are passed to OpenCV as float32 scaled to the 8-bit range
    (``255 * frame``) without rounding: OpenCV converts its inputs to float
    anyway, but its flow update divides by ``det(G) + 1e-3``, a constant tuned to
    8-bit intensities that would swamp the tensors of [0, 1] images.

    References
    ----------
    .. [F03] Farneback (2003), Proc. SCIA, LNCS 2749:363-370.
    """
    name = "farneback"
    f0, f1 = _check_frames(name, frame0, frame1)
    pyr_scale = _number(name, "pyr_scale", pyr_scale, high=1.0)
    levels = _number(name, "levels", levels, integer=True)
    winsize = _number(name, "winsize", winsize, integer=True)
    iterations = _number(name, "iterations", iterations, integer=True)
    poly_n = _number(name, "poly_n", poly_n, integer=True)
    if poly_n not in (5, 7):
        raise ValueError(f"{name}: parameter 'poly_n' must be 5 or 7 (OpenCV), got {poly_n!r}")
    poly_sigma = _number(name, "poly_sigma", poly_sigma)
    if not isinstance(gaussian_window, (bool, np.bool_)):
        raise ValueError(f"{name}: parameter 'gaussian_window' must be true or false, got {gaussian_window!r}")
    flags = cv2.OPTFLOW_FARNEBACK_GAUSSIAN if gaussian_window else 0
    a = np.ascontiguousarray(f0 * 255.0, dtype=np.float32)
    b = np.ascontiguousarray(f1 * 255.0, dtype=np.float32)
    flow = cv2.calcOpticalFlowFarneback(a, b, None, pyr_scale, levels, winsize, iterations, poly_n, poly_sigma, flags)
    return np.asarray(flow, dtype=np.float32)


# ---------------------------------------------------------------------------- DIS
_DIS_SETTERS = {
    "finest_scale": ("setFinestScale", dict(integer=True, strict=False)),
    "patch_size": ("setPatchSize", dict(integer=True)),
    "patch_stride": ("setPatchStride", dict(integer=True)),
    "gradient_descent_iterations": ("setGradientDescentIterations", dict(integer=True)),
    "variational_refinement_iterations": ("setVariationalRefinementIterations", dict(integer=True, strict=False)),
    "variational_refinement_alpha": ("setVariationalRefinementAlpha", dict(strict=False)),
    "variational_refinement_delta": ("setVariationalRefinementDelta", dict(strict=False)),
    "variational_refinement_gamma": ("setVariationalRefinementGamma", dict(strict=False)),
}


def _to_uint8(frame: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(frame * 255.0), 0, 255).astype(np.uint8)


@register("dis", track="motion", kind="pair", reference=DIS_REFERENCE)
def dis(
    frame0: np.ndarray,
    frame1: np.ndarray,
    *,
    preset: str = "medium",
    finest_scale: int | None = None,
    patch_size: int | None = None,
    patch_stride: int | None = None,
    gradient_descent_iterations: int | None = None,
    variational_refinement_iterations: int | None = None,
    variational_refinement_alpha: float | None = None,
    variational_refinement_delta: float | None = None,
    variational_refinement_gamma: float | None = None,
    use_mean_normalization: bool | None = None,
    use_spatial_propagation: bool | None = None,
) -> np.ndarray:
    """Dense Inverse Search optical flow (Kroeger et al. 2016), OpenCV's ``DISOpticalFlow``.

    Parameters
    ----------
    frame0, frame1 : ndarray, shape (H, W)
        Consecutive frames, luminance in [0, 1].
    preset : {"ultrafast", "fast", "medium"}
        OpenCV preset; the knobs below override it when not ``None``.
    finest_scale : int, optional
        Finest pyramid level searched (0 = full resolution; the ``medium`` preset
        uses 1, i.e. half resolution, then upsamples and refines variationally).
    patch_size, patch_stride : int, optional
        Patch side and spacing (px) of the dense inverse search of [K16]_.
    gradient_descent_iterations : int, optional
        Inverse-compositional iterations per patch.
    variational_refinement_iterations : int, optional
        Fixed-point iterations of the variational refinement of [K16]_ (0 disables it).
    variational_refinement_alpha, variational_refinement_delta, variational_refinement_gamma : float, optional
        Smoothness, colour-constancy and gradient-constancy weights of the refinement.
    use_mean_normalization : bool, optional
        Normalise patch means (robustness to illumination changes).
    use_spatial_propagation : bool, optional
        Propagate good patch matches to their neighbours.

    Returns
    -------
    flow : ndarray, shape (H, W, 2), float32
        ``(u, v)`` px/frame, ``frame0(x) ~ frame1(x + flow(x))``.

    Notes
    -----
    OpenCV's DIS accepts only 8-bit images: frames are converted by
    ``round(255 * clip(frame, 0, 1))``, i.e. quantised to 1/255 of the luminance range.

    References
    ----------
    .. [K16] Kroeger et al. (2016), Proc. ECCV, LNCS 9908:471-488.
    """
    name = "dis"
    f0, f1 = _check_frames(name, frame0, frame1)
    if preset not in DIS_PRESETS:
        raise ValueError(f"{name}: parameter 'preset' must be one of {sorted(DIS_PRESETS)}, got {preset!r}")
    engine = cv2.DISOpticalFlow_create(DIS_PRESETS[preset])
    knobs = {
        "finest_scale": finest_scale,
        "patch_size": patch_size,
        "patch_stride": patch_stride,
        "gradient_descent_iterations": gradient_descent_iterations,
        "variational_refinement_iterations": variational_refinement_iterations,
        "variational_refinement_alpha": variational_refinement_alpha,
        "variational_refinement_delta": variational_refinement_delta,
        "variational_refinement_gamma": variational_refinement_gamma,
    }
    for key, value in knobs.items():
        if value is not None:
            setter, rule = _DIS_SETTERS[key]
            getattr(engine, setter)(_number(name, key, value, **rule))
    for key, value, setter in (
        ("use_mean_normalization", use_mean_normalization, "setUseMeanNormalization"),
        ("use_spatial_propagation", use_spatial_propagation, "setUseSpatialPropagation"),
    ):
        if value is not None:
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name}: parameter {key!r} must be true or false, got {value!r}")
            getattr(engine, setter)(bool(value))
    if engine.getPatchStride() > engine.getPatchSize():
        raise ValueError(
            f"{name}: parameter 'patch_stride' ({engine.getPatchStride()}) must not exceed "
            f"'patch_size' ({engine.getPatchSize()})"
        )
    flow = engine.calc(_to_uint8(f0), _to_uint8(f1), None)
    return np.asarray(flow, dtype=np.float32)
