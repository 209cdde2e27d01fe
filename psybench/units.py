"""Time on a frame clock: the one conversion between milliseconds and frames.

Every track shows its stimuli as frames at ``frames_per_s`` frames per second:
frame ``i`` is on screen during ``[i, i + 1) * 1000 / frames_per_s`` ms
(Tlapale et al. 2010, RR-7317 sec. 2.1, for motion; Shic & Scassellati 2007,
sec. 5.2, for attention's movies). This module is that clock, written once and
below every track, so that motion's :class:`~psybench.motion.display.Display`,
attention's lags and gaze tables and the config checks count frames alike.

A duration becomes a number of frames in one of three ways, named by
``rounding``:

* ``"nearest"``: the number of whole frames closest to a duration (a stimulus of
  ``duration_ms`` has ``ms_to_frames(duration_ms, fps)`` frames);
* ``"floor"``: the frame on screen at a time (a gaze sample at ``t`` ms falls in
  frame ``ms_to_frames(t, fps, rounding="floor")``);
* ``"ceil"``: the whole frames covering a duration (the frame on screen ``lag`` ms
  before the onset of frame ``t`` is ``t - ms_to_frames(lag, fps, rounding="ceil")``).

``floor`` and ``ceil`` allow :data:`FRAME_TOLERANCE` of a frame, so that a time
meant to fall on a frame onset (``100 ms`` at 30 frames/s is frame 3, computed as
``2.9999999999999996``) is not moved by rounding error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["FRAME_TOLERANCE", "ROUNDINGS", "frame_ms", "frames_to_ms", "ms_to_frames", "scaled_display"]

#: Slack (in frames) of the ``floor`` and ``ceil`` roundings of :func:`ms_to_frames`.
FRAME_TOLERANCE = 1e-6
#: The roundings of :func:`ms_to_frames`.
ROUNDINGS = ("nearest", "floor", "ceil")


def _rate(frames_per_s: Any) -> float:
    fps = float(frames_per_s)
    if not fps > 0 or not math.isfinite(fps):
        raise ValueError(f"frames_per_s must be a finite number > 0, got {frames_per_s!r}")
    return fps


def frame_ms(frames_per_s: float) -> float:
    """Duration of one frame in milliseconds, ``1000 / frames_per_s``."""
    return 1000.0 / _rate(frames_per_s)


def frames_to_ms(frames, frames_per_s: float):
    """Onset time (ms) of frame ``frames`` (a number or an array): ``frames * 1000 / frames_per_s``.

    The product comes first, so that integer frame numbers give correctly rounded
    times (``np.arange(n) * frame_ms(fps)`` rounds twice when ``1000 / fps`` is not
    exact).
    """
    return frames * 1000.0 / _rate(frames_per_s)


def ms_to_frames(ms, frames_per_s: float, *, rounding: str = "nearest"):
    """Frames in a duration of ``ms`` milliseconds (a number or an array): see the module docstring.

    Returns an ``int`` for a number and an integer array for an array.

    Raises
    ------
    ValueError
        If ``frames_per_s`` is not a finite positive number or ``rounding`` is not
        one of :data:`ROUNDINGS`.
    """
    fps = _rate(frames_per_s)
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
    x = ms * fps / 1000.0
    if rounding == "nearest":
        out = np.round(x)
    elif rounding == "floor":
        out = np.floor(x + FRAME_TOLERANCE)
    else:
        out = np.ceil(x - FRAME_TOLERANCE)
    return int(out) if np.ndim(out) == 0 else np.asarray(out).astype(np.int64)


def scaled_display(display: Mapping[str, Any], px_per_deg: float) -> dict[str, Any]:
    """``display`` at another spatial scale, the field of view in degrees kept.

    ``width_px`` and ``height_px`` scale by ``px_per_deg / display["px_per_deg"]``
    (rounded to whole pixels): a stimulus of so many degrees covers the same
    fraction of the frame, only sampled more (or less) finely.
    """
    ratio = float(px_per_deg) / float(display["px_per_deg"])
    return {**display, "px_per_deg": float(px_per_deg),
            "width_px": max(1, int(round(display["width_px"] * ratio))),
            "height_px": max(1, int(round(display["height_px"] * ratio)))}
