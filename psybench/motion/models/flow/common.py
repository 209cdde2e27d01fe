"""Shared by the classic optical-flow algorithms: input checks and the coarse-to-fine driver.

Every algorithm validates its frames and knobs here (:func:`_check_frames`,
:func:`_number`) and the gradient methods (Horn & Schunck 1981; Lucas & Kanade 1981)
hand a per-level solver to :func:`_coarse_to_fine` (warp, Gaussian pyramid,
upsampled flow), as scikit-image's ``_coarse_to_fine`` does.

OpenCV is limited to one thread (``cv2.setNumThreads(1)`` at its first use, :mod:`psybench._opencv`): the runner
(:mod:`psybench.motion.responses`) already processes frame pairs in parallel
threads, and nested thread pools only oversubscribe the cores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

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
# map_coordinates pads an image by this much (edges replicated) before its spline prefilter in mode "nearest"
_SPLINE_PAD = 12


def _spline_coefficients(image: np.ndarray) -> np.ndarray:
    """Cubic B-spline coefficients of ``image``, exactly as ``map_coordinates(order=3, mode="nearest")`` makes them.

    SciPy pads the image by ``_SPLINE_PAD`` px (edges replicated) and prefilters the
    padded array in float64; computed once, they serve every warp of the same image
    (:func:`_warp`'s ``coefficients``): the same numbers as prefiltering at each warp.

    Returns
    -------
    ndarray, shape (H + 2 * _SPLINE_PAD, W + 2 * _SPLINE_PAD), float64
    """
    from scipy import ndimage as ndi  # here: the registry imports this module at planning
    return ndi.spline_filter(np.pad(image, _SPLINE_PAD, mode="edge"), 3, output=np.float64, mode="nearest")


def _warp(image: np.ndarray, flow: np.ndarray, coefficients: np.ndarray | None = None) -> np.ndarray:
    """``image(x + flow(x))`` by cubic B-spline interpolation, edges replicated.

    Cubic rather than bilinear: bilinear interpolation blurs the warped image by a
    sub-pixel-dependent amount, which left ~0.08 px/frame of end-point error in
    Lucas-Kanade on a smooth translating texture (cubic: ~0.003). Warping by an
    identically zero flow is the identity (returned as is), which keeps zero
    motion at exactly zero flow. ``coefficients``: ``_spline_coefficients(image)``,
    if already computed (the result is the same, bit for bit, as
    ``scipy.ndimage.map_coordinates(image, ..., order=3, mode="nearest")``; tested).
    """
    from scipy import ndimage as ndi  # here: the registry imports this module at planning
    if not flow.any():
        return image
    if coefficients is None:
        coefficients = _spline_coefficients(image)
    h, w = image.shape
    rows, cols = np.mgrid[0:h, 0:w].astype(np.float64)
    coords = np.stack([rows + flow[..., 1], cols + flow[..., 0]])
    coords += _SPLINE_PAD  # into the padded coefficients, after the sum as SciPy adds its padding
    return ndi.map_coordinates(coefficients, coords, order=3, mode="nearest", prefilter=False)


def _pyramid(image: np.ndarray, levels: int) -> list[np.ndarray]:
    """Gaussian pyramid, coarsest first; level k+1 = (G_sigma * level k)[::2, ::2]."""
    from scipy import ndimage as ndi  # here: the registry imports this module at planning
    pyr = [image]
    while len(pyr) < levels and min(pyr[-1].shape) // 2 >= _MIN_PYRAMID_SIDE:
        pyr.append(ndi.gaussian_filter(pyr[-1], _PYRAMID_SIGMA, mode="nearest")[::2, ::2])
    return pyr[::-1]


def _upsample_flow(flow: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Flow of a pyramid level to the next finer level: fine pixel x sits at coarse x / 2."""
    from scipy import ndimage as ndi  # here: the registry imports this module at planning
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
    from scipy import ndimage as ndi  # here: the registry imports this module at planning
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
