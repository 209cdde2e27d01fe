"""OpenCV's optical flow: Farneback (2003) polynomial expansion and DIS (Kroeger et al. 2016)."""

from __future__ import annotations

import numpy as np

from psybench._opencv import cv2
from psybench.motion.models.flow.common import _check_frames, _number
from psybench.registry import register

__all__ = ["farneback", "dis", "DIS_PRESETS"]

FARNEBACK_REFERENCE = "Farneback (2003), Proc. SCIA, LNCS 2749:363-370 (OpenCV calcOpticalFlowFarneback)"
DIS_REFERENCE = "Kroeger, Timofte, Dai & Van Gool (2016), Proc. ECCV, LNCS 9908:471-488 (OpenCV DISOpticalFlow)"

#: OpenCV's DIS presets by name: the values of ``cv2.DISOPTICAL_FLOW_PRESET_{ULTRAFAST,FAST,MEDIUM}``
#: (OpenCV's ``DISOpticalFlow`` enum), written out so that importing this module (the model registry,
#: at every planning) does not import OpenCV (tests/test_motion_models_flow.py compares them).
DIS_PRESETS = {"ultrafast": 0, "fast": 1, "medium": 2}


# ---------------------------------------------------------------------- Farneback
@register("farneback", track="motion", kind="pair", reference=FARNEBACK_REFERENCE,
          bounds={"levels": (0, 16), "iterations": (0, 10_000)})
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


@register("dis", track="motion", kind="pair", reference=DIS_REFERENCE,
          bounds={"gradient_descent_iterations": (0, 10_000), "variational_refinement_iterations": (0, 10_000)})
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
    frame0, frame1
        The pair kind's frames (:mod:`psybench.motion.models`).
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
        The pair kind's flow (:mod:`psybench.motion.models`).

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
