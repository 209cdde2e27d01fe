"""Tilted bars and dashed bars (Lorenceau et al. 1993; Pack & Born 2001; Biber & Ilg 2008).

Tlapale et al. 2010, RR-7317 sec. 3.2 ("Translating bars"): a bar tilted to its
motion carries the 1D (normal) cue along its edges and the 2D cue at its line
ends; tiling the bar at fixed total length multiplies the line ends.
"""

from __future__ import annotations

import math

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli.geometry import (
    Stimulus,
    _check_positive,
    _line_contrast,
    _rect_half_extent,
    _rect_inside,
    _render_translating,
    _truth,
)

__all__ = ["render_bar", "render_dashed_bar"]


def _bar_common(direction_deg, speed_deg_s, tilt_deg, length_deg, width_deg):
    _check_positive("speed_deg_s", speed_deg_s)
    _check_positive("length_deg", length_deg)
    _check_positive("width_deg", width_deg)
    if not -90.0 < tilt_deg < 90.0:
        raise ValueError(f"tilt_deg must lie in (-90, 90), got {tilt_deg!r}")
    orientation = direction_deg + 90.0 + tilt_deg  # bar axis
    normal = direction_deg + tilt_deg  # bar normal within 90 deg of the motion
    return orientation, normal


def _bar_render(display, what, inside, orientation, length_deg, width_deg, direction_deg, speed_deg_s,
                contrast, duration_ms, polarity, center_deg):
    half = _rect_half_extent(length_deg / 2.0, width_deg / 2.0, orientation)
    return _render_translating(display, what, inside, half, direction_deg=direction_deg, speed_deg_s=speed_deg_s,
                               contrast=contrast, duration_ms=duration_ms, polarity=polarity, center_deg=center_deg)


def render_bar(
    display: Display,
    *,
    length_deg: float,
    width_deg: float = 0.5,
    tilt_deg: float = 45.0,
    direction_deg: float = 0.0,
    speed_deg_s: float = 10.0,
    contrast: float = 1.0,
    duration_ms: float = 500.0,
    polarity: int = 1,
    center_deg: tuple[float, float] = (0.0, 0.0),
) -> Stimulus:
    """A tilted bar translating rigidly (RR-7317 section 3.2, "Translating bars").

    The bar's long axis is at ``direction_deg + 90 + tilt_deg``: ``tilt_deg = 0`` is
    a bar orthogonal to its motion (no aperture problem), ``tilt_deg = 45`` the
    Pack & Born (2001) oblique bar, whose edges' normal motion (the 1D cue) is at
    ``direction_deg + tilt_deg`` with speed ``speed cos(tilt)`` while its line
    ends (2D cues) carry the true motion.

    Parameters
    ----------
    display : Display
    length_deg, width_deg : float
        Bar length and width (deg); Biber & Ilg (2008) used 0.5 deg wide bars.
    tilt_deg : float
        Bar orientation relative to the normal of the motion direction, in (-90, 90).
    direction_deg, speed_deg_s : float
        True translation (deg CCW from rightward; deg/s).
    contrast : float
        Weber contrast against the background, in [0, 1]: the bar is ``L0 (1 + polarity c)``
        (Michelson ``c / (2 + polarity c)``, recorded as ``michelson_contrast``).
    duration_ms : float
    polarity : {1, -1}
    center_deg : (float, float)
        Bar centre at the middle frame (deg).

    Returns
    -------
    Stimulus
        attrs add ``orientation_deg`` (bar axis, mod 180), ``normal_direction_deg``
        and ``normal_speed_deg_s``.
    """
    orientation, normal = _bar_common(direction_deg, speed_deg_s, tilt_deg, length_deg, width_deg)
    display.check_temporal_aliasing(speed_deg_s, what="bar")
    inside = _rect_inside(length_deg / 2.0, width_deg / 2.0, orientation)
    frames, level = _bar_render(display, "bar", inside, orientation, length_deg, width_deg, direction_deg,
                                speed_deg_s, contrast, duration_ms, polarity, center_deg)
    params = dict(
        length_deg=float(length_deg), width_deg=float(width_deg), tilt_deg=float(tilt_deg),
        direction_deg=float(direction_deg), speed_deg_s=float(speed_deg_s), contrast=float(contrast),
        duration_ms=float(duration_ms), polarity=int(polarity), center_deg=[float(c) for c in center_deg],
    )
    attrs = {
        "family": "bar", "params": params, "truth": _truth(display, direction_deg, speed_deg_s),
        "orientation_deg": float(orientation % 180.0),
        "normal_direction_deg": float(normal % 360.0),
        "normal_speed_deg_s": float(speed_deg_s * math.cos(math.radians(tilt_deg))),
        "object_luminance": float(level),
        **_line_contrast(display, level),
    }
    return Stimulus(frames, attrs)


def render_dashed_bar(
    display: Display,
    *,
    length_deg: float,
    n_tiles: int,
    gap_fraction: float = 0.3,
    width_deg: float = 0.5,
    tilt_deg: float = 45.0,
    direction_deg: float = 0.0,
    speed_deg_s: float = 10.0,
    contrast: float = 1.0,
    duration_ms: float = 500.0,
    polarity: int = 1,
    center_deg: tuple[float, float] = (0.0, 0.0),
) -> Stimulus:
    """The tilted bar of :func:`render_bar` cut into ``n_tiles`` collinear sub-bars.

    The total length (first tile's outer end to last tile's outer end) stays
    ``length_deg`` whatever ``n_tiles`` (Lorenceau et al. 1993; Biber & Ilg 2008):
    with tile period ``p``, each period is a tile ``(1 - g) p`` and a gap ``g p``
    (``g = gap_fraction``), and ``n`` tiles with ``n - 1`` gaps fill
    ``n (1 - g) p + (n - 1) g p = L``, so ``p = L / (n - g)``. ``n_tiles = 1`` is the
    solid bar. Tiling multiplies the line ends (2D cues) at fixed total length.

    Parameters
    ----------
    display : Display
    length_deg : float
        Total length (deg).
    n_tiles : int
        Number of sub-bars (>= 1).
    gap_fraction : float
        Fraction of a tile period left blank, in [0, 1).
    width_deg, tilt_deg, direction_deg, speed_deg_s, contrast, duration_ms, polarity, center_deg
        As in :func:`render_bar`.

    Returns
    -------
    Stimulus
        attrs as :func:`render_bar` plus ``n_tiles``, ``tile_length_deg``,
        ``gap_deg`` and ``tile_period_deg``.
    """
    orientation, normal = _bar_common(direction_deg, speed_deg_s, tilt_deg, length_deg, width_deg)
    if isinstance(n_tiles, bool) or int(n_tiles) != n_tiles or n_tiles < 1:
        raise ValueError(f"n_tiles must be an integer >= 1, got {n_tiles!r}")
    n_tiles = int(n_tiles)
    if not 0.0 <= gap_fraction < 1.0:
        raise ValueError(f"gap_fraction must lie in [0, 1), got {gap_fraction!r}")
    period = length_deg / (n_tiles - gap_fraction)
    tile = (1.0 - gap_fraction) * period
    # The tiles move along their own axis at speed sin(tilt): their period measured
    # along the motion is p / |sin(tilt)| (infinite for tilt 0: no periodic motion).
    sin_t = abs(math.sin(math.radians(tilt_deg)))
    along = period / sin_t if n_tiles > 1 and sin_t > 1e-12 else None
    display.check_temporal_aliasing(speed_deg_s, spatial_period_deg=along, what="dashed bar")
    c, s = math.cos(math.radians(orientation)), math.sin(math.radians(orientation))
    half_l, half_w = length_deg / 2.0, width_deg / 2.0

    def inside(x, y):
        a = x * c + y * s
        b = -x * s + y * c
        return (np.abs(a) <= half_l) & (np.abs(b) <= half_w) & (np.mod(a + half_l, period) <= tile)

    frames, level = _bar_render(display, "dashed bar", inside, orientation, length_deg, width_deg, direction_deg,
                                speed_deg_s, contrast, duration_ms, polarity, center_deg)
    params = dict(
        length_deg=float(length_deg), n_tiles=n_tiles, gap_fraction=float(gap_fraction),
        width_deg=float(width_deg), tilt_deg=float(tilt_deg), direction_deg=float(direction_deg),
        speed_deg_s=float(speed_deg_s), contrast=float(contrast), duration_ms=float(duration_ms),
        polarity=int(polarity), center_deg=[float(v) for v in center_deg],
    )
    attrs = {
        "family": "dashed_bar", "params": params, "truth": _truth(display, direction_deg, speed_deg_s),
        "orientation_deg": float(orientation % 180.0),
        "normal_direction_deg": float(normal % 360.0),
        "normal_speed_deg_s": float(speed_deg_s * math.cos(math.radians(tilt_deg))),
        "n_tiles": n_tiles,
        "tile_length_deg": float(tile),
        "gap_deg": float(period - tile) if n_tiles > 1 else 0.0,
        "tile_period_deg": float(period),
        "object_luminance": float(level),
        **_line_contrast(display, level),
    }
    return Stimulus(frames, attrs)
