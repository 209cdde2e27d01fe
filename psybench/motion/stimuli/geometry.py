"""Rendering core shared by every motion stimulus family (Tlapale et al. 2010, RR-7317 sec. 2.2).

A stimulus is a :class:`Stimulus`: frames ``(T, H, W)`` float32 luminance in [0, 1]
and the attributes written into its store. The helpers here map physical units
(deg, ms, deg/s, Michelson contrast) to pixels and frames through the run's
:class:`~psybench.motion.display.Display`: analytic shapes box-filtered over each
pixel (:func:`_coverage`), trajectories ``c(t) = c_mid + v (t - t_mid)`` in float64
(:func:`_trajectory`), ground-truth velocities (:func:`_truth`) and the check that
a shape stays inside the display for its whole duration (:func:`_check_fits`).
The renderers of each family (diamonds, bars, barber-poles, gratings) build on them;
the package docstring (:mod:`psybench.motion.stimuli`) states the conventions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from psybench.motion.display import Display

__all__ = ["Stimulus", "Inside"]


@dataclass
class Stimulus:
    """A rendered stimulus.

    Attributes
    ----------
    frames : ndarray, shape (T, H, W), float32
        Luminance in [0, 1]; frame ``i`` is shown at ``i * 1000 / frames_per_s`` ms.
    attrs : dict
        JSON-serialisable description: ``family``, ``params`` (every renderer
        argument, defaults included), ``truth`` (``velocity_deg_s`` [vx, vy_up],
        ``direction_deg``, ``speed_deg_s``, ``velocity_px_per_frame`` [u, v]) and
        family-specific facts (e.g. ``vector_average_direction_deg``,
        ``normal_direction_deg``, ``long_axis_deg``, ``grating_normal_deg``).
    """

    frames: np.ndarray
    attrs: dict[str, Any] = field(default_factory=dict)


Inside = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _sub_offsets(display: Display) -> np.ndarray:
    """Sample positions inside a pixel, in px from its top-left corner."""
    s = display.supersample if display.antialias else 1
    return (np.arange(s) + 0.5) / s


def _coverage(display: Display, inside: Inside, centres: np.ndarray, half_extent: tuple[float, float]) -> np.ndarray:
    """Pixel coverage of a shape translated to each of ``centres``.

    Parameters
    ----------
    display : Display
    inside : callable
        ``inside(x, y) -> bool array`` for coordinates in deg relative to the shape's
        centre (x rightward, y up), broadcasting ``x`` of shape (1, n) against ``y``
        of shape (m, 1).
    centres : ndarray, shape (T, 2)
        Shape centre per frame (deg, origin at the display centre, y up).
    half_extent : (float, float)
        Half width and half height (deg) of a box around the centre that contains
        the shape; only pixels meeting it are evaluated.

    Returns
    -------
    ndarray, shape (T, H, W), float64
        Fraction of each pixel's samples inside the shape.
    """
    H, W = display.height_px, display.width_px
    ppd = display.px_per_deg
    off = _sub_offsets(display)
    s = off.size
    out = np.zeros((len(centres), H, W))
    hx, hy = half_extent[0] * ppd, half_extent[1] * ppd
    for i, (cx, cy) in enumerate(np.asarray(centres, dtype=np.float64)):
        col_c = cx * ppd + W / 2.0
        row_c = H / 2.0 - cy * ppd
        c0, c1 = max(0, math.floor(col_c - hx) - 1), min(W, math.ceil(col_c + hx) + 1)
        r0, r1 = max(0, math.floor(row_c - hy) - 1), min(H, math.ceil(row_c + hy) + 1)
        if c0 >= c1 or r0 >= r1:
            continue
        xs = ((np.arange(c0, c1)[:, None] + off).ravel() - W / 2.0) / ppd - cx
        ys = (H / 2.0 - (np.arange(r0, r1)[:, None] + off).ravel()) / ppd - cy
        mask = inside(xs[None, :], ys[:, None])
        out[i, r0:r1, c0:c1] = mask.reshape(r1 - r0, s, c1 - c0, s).mean(axis=(1, 3))
    return out


def _pixel_centres_deg(display: Display) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates in deg: x of shape (1, W), y of shape (H, 1), y up."""
    H, W = display.height_px, display.width_px
    x = (np.arange(W) + 0.5 - W / 2.0) / display.px_per_deg
    y = (H / 2.0 - (np.arange(H) + 0.5)) / display.px_per_deg
    return x[None, :], y[:, None]


def _trajectory(display: Display, n_frames: int, velocity_deg_s: np.ndarray, center_deg) -> np.ndarray:
    """Centre per frame (deg), passing ``center_deg`` at the middle frame; shape (T, 2)."""
    t_s = (np.arange(n_frames) - (n_frames - 1) / 2.0) / display.frames_per_s
    return np.asarray(center_deg, dtype=np.float64)[None, :] + t_s[:, None] * velocity_deg_s[None, :]


def _unit(direction_deg: float) -> np.ndarray:
    """Unit vector (x, y up); exact zeros for cardinal directions (no 6e-17 residues)."""
    a = math.radians(direction_deg)
    u = np.array([math.cos(a), math.sin(a)])
    u[np.abs(u) < 1e-12] = 0.0
    return u


def _truth(display: Display, direction_deg: float, speed_deg_s: float) -> dict[str, Any]:
    v = speed_deg_s * _unit(direction_deg)
    k = display.px_per_deg / display.frames_per_s
    return {
        "velocity_deg_s": [float(v[0]), float(v[1])],
        "direction_deg": float(direction_deg),
        "speed_deg_s": float(speed_deg_s),
        # image coordinates: u rightward, v downward
        "velocity_px_per_frame": [float(v[0] * k), float(-v[1] * k)],
    }


def _n_frames(display: Display, duration_ms: float) -> int:
    _check_positive("duration_ms", duration_ms)
    n = display.ms_to_frames(duration_ms)
    if n < 2:
        raise ValueError(
            f"duration_ms={duration_ms} gives {n} frame(s) at {display.frames_per_s} frames/s; need at least 2"
        )
    return n


def _levels(display: Display, contrast: float, polarity: int) -> float:
    """Object luminance ``L0 (1 + polarity c)``: Weber contrast ``polarity c`` against the background ``L0``."""
    if not isinstance(contrast, (int, float)) or isinstance(contrast, bool) or not 0.0 <= contrast <= 1.0:
        raise ValueError(f"contrast must lie in [0, 1], got {contrast!r}")
    if polarity not in (1, -1):
        raise ValueError(f"polarity must be +1 (bright) or -1 (dark), got {polarity!r}")
    lo, hi = display.contrast_levels(contrast)
    return hi if polarity > 0 else lo


def _line_contrast(display: Display, level: float) -> dict[str, Any]:
    """Contrast attributes of a uniform shape of luminance ``level`` on the background ``L0``.

    A shape drawn at ``L0 (1 + p c)`` (:func:`_levels`) has Weber contrast
    ``(L - L0) / L0 = p c`` and Michelson contrast ``|L - L0| / (L + L0) = c / (2 + p c)``
    (Michelson's definition over the two luminances present, shape and background):
    a bright line of ``contrast`` 1 is Michelson 1/3. A true Michelson contrast
    ``m`` would need ``L = L0 (1 + m) / (1 - m)``, beyond the display's range for
    bright shapes with ``m > (1 - L0) / (1 + L0)``; so the renderers keep the Weber
    definition of ``contrast`` for shapes and record both values honestly.

    Returns
    -------
    dict
        ``contrast_definition`` ("weber": the definition of ``params.contrast``),
        ``weber_contrast`` (signed) and ``michelson_contrast``.
    """
    L0 = display.background
    return {
        "contrast_definition": "weber",
        "weber_contrast": float((level - L0) / L0),
        "michelson_contrast": float(abs(level - L0) / (level + L0)),
    }


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def _check_fits(display: Display, what: str, half_extent: tuple[float, float], centres: np.ndarray) -> None:
    """Raise if the shape's bounding box leaves the display at any frame."""
    half_w = display.width_px / display.px_per_deg / 2.0
    half_h = display.height_px / display.px_per_deg / 2.0
    xmax = float(np.max(np.abs(centres[:, 0])) + half_extent[0])
    ymax = float(np.max(np.abs(centres[:, 1])) + half_extent[1])
    tol = 1e-9
    if xmax > half_w + tol or ymax > half_h + tol:
        raise ValueError(
            f"{what} reaches |x| = {xmax:.3g} deg, |y| = {ymax:.3g} deg but the display spans "
            f"+-{half_w:.3g} x +-{half_h:.3g} deg ({display.width_px}x{display.height_px} px at "
            f"{display.px_per_deg} px/deg): make it smaller, slower or shorter, or the display larger"
        )


def _rect_inside(half_a: float, half_b: float, orientation_deg: float) -> Inside:
    """Rectangle of half-sides ``half_a`` along ``orientation_deg`` and ``half_b`` across."""
    c, s = math.cos(math.radians(orientation_deg)), math.sin(math.radians(orientation_deg))

    def inside(x, y):
        a = x * c + y * s
        b = -x * s + y * c
        return (np.abs(a) <= half_a) & (np.abs(b) <= half_b)

    return inside


def _rect_half_extent(half_a: float, half_b: float, orientation_deg: float) -> tuple[float, float]:
    c, s = abs(math.cos(math.radians(orientation_deg))), abs(math.sin(math.radians(orientation_deg)))
    return half_a * c + half_b * s, half_a * s + half_b * c


def _frames(lum: np.ndarray) -> np.ndarray:
    return np.clip(lum, 0.0, 1.0).astype(np.float32)


def _render_translating(display: Display, what: str, inside: Inside, half_extent: tuple[float, float], *,
                        direction_deg: float, speed_deg_s: float, contrast: float, duration_ms: float,
                        polarity: int, center_deg) -> tuple[np.ndarray, float]:
    """A rigid shape of luminance ``L0 (1 + polarity c)`` translating at constant velocity.

    Returns the frames ``(T, H, W)`` float32 and the shape's luminance; raises if the
    shape leaves the display at any frame (RR-7317 sec. 2.2: positions analytic in time).
    """
    n = _n_frames(display, duration_ms)
    level = _levels(display, contrast, polarity)
    centres = _trajectory(display, n, speed_deg_s * _unit(direction_deg), center_deg)
    _check_fits(display, what, half_extent, centres)
    cov = _coverage(display, inside, centres, half_extent)
    L0 = display.background
    return _frames(L0 + (level - L0) * cov), level
