"""Test helper: one stimulus through a motion model and the pursuit readout, in memory.

The same chain as the workflow (``motion_response_blocks`` -> RR-7317 eq. 3
``pursuit`` -> ``direction_error``) without stores, so library-level tests can
score small stimuli with the public criteria (:data:`psybench.motion.criteria.SCORERS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psybench.motion.criteria import SCORERS, merge_criteria
from psybench.motion.display import Display
from psybench.motion.readouts import (
    DEFAULT_MIN_SPEED_FRACTION,
    direction_error,
    mean_flow,
    pursuit,
    speed_threshold,
)
from psybench.motion.responses import motion_response_blocks
from psybench.motion.stimuli.geometry import Stimulus
from psybench.registry import resolve_model


def model_spec(algorithm: str, **params: Any):
    """The registered motion model ``algorithm`` with ``params``."""
    return resolve_model({"name": algorithm, "algorithm": algorithm, "params": params}, track="motion")


def readout(spec, stim: Stimulus, display: Display, *, lambda_ms: float = 50.0) -> dict[str, Any]:
    """Pursuit readout of ``stim`` (the dict the criteria take)."""
    flows = [b["flow"] for b in motion_response_blocks(spec, stim.frames, display)]
    vbar = mean_flow(np.concatenate(flows, axis=0))
    w = pursuit(vbar, frame_ms=display.frame_ms, lambda_ms=lambda_ms)
    thr = speed_threshold(w, min_speed_fraction=DEFAULT_MIN_SPEED_FRACTION)
    err = direction_error(w, stim.attrs["truth"]["direction_deg"], min_speed=thr)
    t = np.arange(len(w)) * display.frame_ms
    return {"t_ms": t, "direction_error_deg": err, "direction_deg": err + stim.attrs["truth"]["direction_deg"],
            "speed_deg_s": np.hypot(*w.T) * display.frames_per_s / display.px_per_deg, "stimulus": stim.attrs}


def verdict(experiment: str, spec, stimuli: dict[str, Stimulus], display: Display) -> dict[str, Any]:
    """Row of the public scorer of ``experiment`` for ``spec`` on ``stimuli``."""
    readouts = {name: readout(spec, s, display) for name, s in stimuli.items()}
    row, _ = SCORERS[experiment](spec.name, readouts, merge_criteria())
    return row


def translating_texture(display: Display, direction_deg: float, speed_deg_s: float, n_frames: int, *,
                        sigma_px: float = 2.0, contrast: float = 0.2, seed: int = 0) -> np.ndarray:
    """A full-field random texture translating rigidly: one true velocity everywhere (analytic ground truth).

    Periodic white noise low-passed by a Gaussian of ``sigma_px``, scaled to an RMS
    contrast ``contrast`` about ``display.background``, and shifted to each frame by
    an exact Fourier phase shift (frame ``i`` = frame 0 moved by ``i`` times the
    velocity, sub-pixel exactly; no edges, no aperture). Not a benchmark stimulus:
    it has no aperture problem, so any direction error is the model's or its grid's.

    Returns
    -------
    ndarray, shape (n_frames, H, W), float32
    """
    h, w = display.height_px, display.width_px
    ky, kx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    noise = np.random.default_rng(seed).standard_normal((h, w))
    spec = np.fft.fft2(noise) * np.exp(-2 * np.pi**2 * sigma_px**2 * (kx**2 + ky**2))
    base = np.fft.ifft2(spec).real
    scale = contrast / base.std()
    s = speed_deg_s * display.px_per_deg / display.frames_per_s
    u, v = s * np.cos(np.radians(direction_deg)), -s * np.sin(np.radians(direction_deg))  # image y points down
    frames = [np.fft.ifft2(spec * np.exp(-2j * np.pi * (kx * u + ky * v) * i)).real for i in range(n_frames)]
    return (display.background * (1.0 + (np.array(frames) - base.mean()) * scale)).astype(np.float32)
