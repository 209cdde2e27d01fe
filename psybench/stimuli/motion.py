"""Motion stimuli of Motion Psychobench (RR-7317, section 3), rendered from physical units.

Every renderer takes the run's :class:`~psybench.display.Display` (the one mapping
between degrees, milliseconds, luminance and pixels, frames; RR-7317 section 2.1)
and keyword-only physical parameters: sizes in degrees of visual angle, speeds
in deg/s, durations in ms, Michelson contrast around ``display.background``.
It returns a :class:`Stimulus`: frames ``(T, H, W)`` float32 luminance in [0, 1]
and the attributes written into the stimulus store (parameters, ground-truth
velocity and family-specific facts such as the vector-average direction of a
diamond's edges).

Rendering (RR-7317 section 2.2)
-------------------------------
* Shapes are analytic: a sample at position ``(x, y)`` (deg, visual y up, origin
  at the display centre) is inside or outside the shape. Positions are analytic
  functions of time, ``c(t) = c_mid + v (t - t_mid)``, evaluated in float64, so
  sub-pixel motion is exact (nothing is rounded to whole pixels).
* Anti-aliasing is explicit: with ``display.antialias`` each pixel averages
  ``display.supersample**2`` regularly spaced samples (a box filter over the
  pixel area); without it each pixel is point-sampled at its centre.
* Gratings are band-limited carriers (below the spatial Nyquist frequency), so the
  carrier is sampled at pixel centres, exactly; only the aperture (a
  discontinuity) is box-filtered. A pixel is ``L0 (1 + c a(x) g(x, t))`` with
  ``a`` the aperture coverage in [0, 1] and ``g`` the unit sinusoid.
* Every renderer calls :meth:`Display.check_temporal_aliasing` with the spatial
  period of its pattern measured along the motion (none for solid shapes), which
  warns (:class:`~psybench.display.TemporalAliasingWarning`) when the speed
  reaches the temporal Nyquist limit of the frame rate.
* Luminance: line drawings and bars are drawn at ``L0 (1 + polarity c)`` on the
  background ``L0`` (``display.contrast_levels``: the symmetric Michelson pair
  around the mean; relative to the background alone this is a Weber contrast
  ``c``); gratings modulate ``L0 (1 + c cos(...))`` so their Michelson contrast is
  exactly ``c``.

Timing: ``T = display.ms_to_frames(duration_ms)`` frames, frame ``i`` shown at
``i * 1000 / frames_per_s`` ms. Moving objects travel symmetrically about
``center_deg`` (their position at the middle frame), so an object that fits at
its first and last frame fits throughout.

References
----------
.. [1] Tlapale, Kornprobst, Bouecke, Neumann, Masson (2010). Towards a bio-inspired
   evaluation methodology for motion estimation models. INRIA RR-7317.
.. [2] Masson & Stone (2002). From following edges to pursuing objects.
   J Neurophysiol 88:2869-2873.
.. [3] Pack & Born (2001). Temporal dynamics of a neural solution to the aperture
   problem in visual area MT of macaque brain. Nature 409:1040-1042.
.. [4] Lorenceau, Shiffrar, Wells, Castet (1993). Different motion sensitive units
   are involved in recovering the direction of moving lines. Vision Res 33:1207.
.. [5] Masson, Rybarczyk, Castet, Mestre (2000). Temporal dynamics of motion
   integration for the initiation of tracking eye movements at ultra-short
   latencies. Vis Neurosci 17:753-767.
.. [6] Barthelemy, Vanzetta, Masson (2006). Behavioral receptive field for
   ocular following in humans. J Neurophysiol 95:3319-3330.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from psybench.display import Display

__all__ = [
    "Stimulus",
    "FAMILIES",
    "DEFAULTS",
    "render",
    "render_diamond",
    "render_bar",
    "render_dashed_bar",
    "render_barberpole",
    "render_grating",
    "diamond_geometry",
    "stimulus_set",
    "write_stimulus",
]


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


# ------------------------------------------------------------------------------------
# rendering core
# ------------------------------------------------------------------------------------
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
    """Object luminance ``L0 (1 + polarity c)``."""
    if not isinstance(contrast, (int, float)) or isinstance(contrast, bool) or not 0.0 <= contrast <= 1.0:
        raise ValueError(f"contrast must be a Michelson contrast in [0, 1], got {contrast!r}")
    if polarity not in (1, -1):
        raise ValueError(f"polarity must be +1 (bright) or -1 (dark), got {polarity!r}")
    lo, hi = display.contrast_levels(contrast)
    return hi if polarity > 0 else lo


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


# ------------------------------------------------------------------------------------
# diamonds (Masson & Stone 2002)
# ------------------------------------------------------------------------------------
def diamond_geometry(
    *,
    handedness: str,
    direction_deg: float,
    size_deg: float,
    interior_angle_deg: float = 40.0,
    va_bias_deg: float = 44.0,
) -> dict[str, Any]:
    """Rhombus whose edges' vector-average normal motion is ``va_bias_deg`` off its motion.

    Derivation
    ----------
    A straight edge with unit normal ``n`` seen through a small aperture moves
    with its normal velocity ``(v . n) n``. A rhombus has two pairs of parallel
    edges of equal length, with normals at angles ``phi1``, ``phi2`` from the true
    direction ``v = |v| (1, 0)``. The vector average (VA) of the four edges' normal
    velocities is ``(|v| / 2) sum_k cos(phi_k) (cos phi_k, sin phi_k)``, i.e.
    ``(|v| / 4) (2 + cos 2phi1 + cos 2phi2, sin 2phi1 + sin 2phi2)``. With
    ``m = phi1 + phi2`` and ``alpha = phi1 - phi2`` (the acute interior angle of
    the rhombus: the angle between two edges equals the angle between their
    normals) the VA direction ``psi`` obeys::

        tan psi = sin(m) cos(alpha) / (1 + cos(m) cos(alpha))
        <=>  sin(m - psi) = sin(psi) / cos(alpha)

    so a bias ``psi`` is reachable iff ``sin psi <= cos alpha``, and we take the
    smaller root ``m = psi + arcsin(sin psi / cos alpha)``, ``phi1,2 = (m +- alpha)/2``.
    With the defaults (``alpha = 40``, ``psi = 44``) the normals lie 74.5 and 34.5
    deg from the motion: both on the same side of it, the true (IOC) direction
    outside the cone of edge normals, as in a type II plaid, and the VA 44 deg off
    (RR-7317 section 3.2; Masson & Stone 2002). The exact interior angle of Masson
    & Stone's diamonds is not verified here; ``interior_angle_deg`` is exposed and
    ``va_bias_deg`` is what the geometry is solved for. ``"ccw"`` puts the VA
    ``psi`` counter-clockwise of the motion (normals at ``+phi``), ``"cw"`` is the
    mirror image about the motion axis (normals at ``-phi``, VA ``psi`` clockwise).

    Parameters
    ----------
    handedness : {"cw", "ccw"}
        Sense of rotation from the true direction to the VA direction.
    direction_deg : float
        Translation direction (deg CCW from rightward, y up).
    size_deg : float
        Edge (side) length of the rhombus, deg.
    interior_angle_deg : float
        Acute interior angle alpha of the rhombus, in (0, 90].
    va_bias_deg : float
        Unsigned VA bias psi the geometry is solved for, in [0, 90).

    Returns
    -------
    dict
        ``vertices_deg`` (4 x 2, relative to the centre, y up, in drawing order),
        ``edge_orientations_deg`` (the two edge orientations, mod 180),
        ``edge_normals_deg`` (the two normal directions within 90 deg of the motion),
        ``interior_angle_deg``, ``handedness``, ``vector_average_bias_deg`` (signed,
        CCW positive) and ``vector_average_direction_deg``, recomputed from the
        vertices.
    """
    if handedness not in ("cw", "ccw"):
        raise ValueError(f"handedness must be 'cw' or 'ccw', got {handedness!r}")
    _check_positive("size_deg", size_deg)
    if not 0.0 < interior_angle_deg <= 90.0:
        raise ValueError(f"interior_angle_deg must lie in (0, 90], got {interior_angle_deg!r}")
    if not 0.0 <= va_bias_deg < 90.0:
        raise ValueError(f"va_bias_deg must lie in [0, 90), got {va_bias_deg!r}")
    alpha, psi = math.radians(interior_angle_deg), math.radians(va_bias_deg)
    ratio = math.sin(psi) / math.cos(alpha)
    if ratio > 1.0 + 1e-12:
        raise ValueError(
            f"interior_angle_deg={interior_angle_deg} cannot give a vector-average bias of {va_bias_deg} deg "
            f"(needs sin(bias) <= cos(interior angle), i.e. interior_angle_deg <= {90 - va_bias_deg:.3g})"
        )
    m = psi + math.asin(min(ratio, 1.0))
    sign = 1.0 if handedness == "ccw" else -1.0
    phis = [sign * math.degrees((m + alpha) / 2.0), sign * math.degrees((m - alpha) / 2.0)]
    normals = [direction_deg + p for p in phis]
    e = [size_deg * _unit(nd + 90.0) for nd in normals]
    verts = np.array([(e[0] + e[1]) / 2.0, (e[1] - e[0]) / 2.0, -(e[0] + e[1]) / 2.0, (e[0] - e[1]) / 2.0])
    va = _vector_average(verts, speed_dir=_unit(direction_deg))
    va_dir = math.degrees(math.atan2(va[1], va[0]))
    bias = (va_dir - direction_deg + 180.0) % 360.0 - 180.0
    return {
        "vertices_deg": verts.tolist(),
        "edge_orientations_deg": [float((nd + 90.0) % 180.0) for nd in normals],
        "edge_normals_deg": [float(nd % 360.0) for nd in normals],
        "interior_angle_deg": float(interior_angle_deg),
        "handedness": handedness,
        "vector_average_bias_deg": float(bias),
        "vector_average_direction_deg": float(va_dir % 360.0),
        "vector_average_speed_fraction": float(np.hypot(*va)),
    }


def _vector_average(vertices: np.ndarray, *, speed_dir: np.ndarray) -> np.ndarray:
    """Length-weighted mean of the edges' normal velocities for unit velocity ``speed_dir``."""
    edges = np.roll(vertices, -1, axis=0) - vertices
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1) / lengths[:, None]
    vn = (normals @ speed_dir)[:, None] * normals
    return (lengths[:, None] * vn).sum(axis=0) / lengths.sum()


def _segments_inside(vertices: np.ndarray, half_width: float) -> Inside:
    """Outline of a closed polygon: points within ``half_width`` of an edge (round joins)."""
    p0 = vertices
    d = np.roll(vertices, -1, axis=0) - vertices
    dd = (d**2).sum(axis=1)
    hw2 = half_width**2

    def inside(x, y):
        best = None
        for k in range(len(p0)):
            px, py = x - p0[k, 0], y - p0[k, 1]
            t = np.clip((px * d[k, 0] + py * d[k, 1]) / dd[k], 0.0, 1.0)
            dist2 = (px - t * d[k, 0]) ** 2 + (py - t * d[k, 1]) ** 2
            best = dist2 if best is None else np.minimum(best, dist2)
        return best <= hw2

    return inside


def render_diamond(
    display: Display,
    *,
    handedness: str,
    direction_deg: float,
    speed_deg_s: float = 10.0,
    size_deg: float = 8.0,
    line_width_deg: float = 0.25,
    contrast: float = 1.0,
    duration_ms: float = 500.0,
    interior_angle_deg: float = 40.0,
    va_bias_deg: float = 44.0,
    polarity: int = 1,
    center_deg: tuple[float, float] = (0.0, 0.0),
) -> Stimulus:
    """Outline rhombus translating rigidly: Masson & Stone's (2002) type II diamond.

    The geometry (see :func:`diamond_geometry` for the derivation) puts the vector
    average of the edges' normal velocities ``va_bias_deg`` away from the true
    direction, clockwise (``"cw"``) or counter-clockwise (``"ccw"``); CW and CCW are
    mirror images about the motion axis (RR-7317 section 3.2).

    Parameters
    ----------
    display : Display
    handedness : {"cw", "ccw"}
        Side of the vector-average bias.
    direction_deg : float
        Translation direction (deg CCW from rightward, visual y up).
    speed_deg_s : float
        Translation speed (deg/s).
    size_deg : float
        Edge length (deg).
    line_width_deg : float
        Width of the outline (deg), centred on the rhombus edges; round joins.
    contrast : float
        Michelson contrast in [0, 1]; the outline is ``L0 (1 + polarity c)``.
    duration_ms : float
        Duration of the motion (ms).
    interior_angle_deg, va_bias_deg : float
        Acute interior angle and target unsigned VA bias (see :func:`diamond_geometry`).
    polarity : {1, -1}
        Bright (+1) or dark (-1) outline.
    center_deg : (float, float)
        Centre of the diamond at the middle frame (deg).

    Returns
    -------
    Stimulus
        frames of shape (T, H, W); attrs with ``truth``, the geometry and
        ``vector_average_direction_deg``.
    """
    _check_positive("speed_deg_s", speed_deg_s)
    _check_positive("line_width_deg", line_width_deg)
    geom = diamond_geometry(
        handedness=handedness, direction_deg=direction_deg, size_deg=size_deg,
        interior_angle_deg=interior_angle_deg, va_bias_deg=va_bias_deg,
    )
    n = _n_frames(display, duration_ms)
    level = _levels(display, contrast, polarity)
    display.check_temporal_aliasing(speed_deg_s, what="diamond")
    verts = np.asarray(geom["vertices_deg"])
    hw = line_width_deg / 2.0
    half = (float(np.abs(verts[:, 0]).max() + hw), float(np.abs(verts[:, 1]).max() + hw))
    centres = _trajectory(display, n, speed_deg_s * _unit(direction_deg), center_deg)
    _check_fits(display, "diamond", half, centres)
    cov = _coverage(display, _segments_inside(verts, hw), centres, half)
    L0 = display.background
    frames = _frames(L0 + (level - L0) * cov)
    params = dict(
        handedness=handedness, direction_deg=float(direction_deg), speed_deg_s=float(speed_deg_s),
        size_deg=float(size_deg), line_width_deg=float(line_width_deg), contrast=float(contrast),
        duration_ms=float(duration_ms), interior_angle_deg=float(interior_angle_deg),
        va_bias_deg=float(va_bias_deg), polarity=int(polarity), center_deg=[float(c) for c in center_deg],
    )
    attrs = {"family": "diamond", "params": params, "truth": _truth(display, direction_deg, speed_deg_s)}
    va_fraction = geom.pop("vector_average_speed_fraction")
    attrs.update(geom)
    attrs["vector_average_speed_deg_s"] = float(va_fraction * speed_deg_s)
    attrs["object_luminance"] = float(level)
    return Stimulus(frames, attrs)


# ------------------------------------------------------------------------------------
# tilted bars and dashed bars (Lorenceau et al. 1993; Pack & Born 2001; Biber & Ilg 2008)
# ------------------------------------------------------------------------------------
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
    n = _n_frames(display, duration_ms)
    level = _levels(display, contrast, polarity)
    half = _rect_half_extent(length_deg / 2.0, width_deg / 2.0, orientation)
    centres = _trajectory(display, n, speed_deg_s * _unit(direction_deg), center_deg)
    _check_fits(display, what, half, centres)
    cov = _coverage(display, inside, centres, half)
    L0 = display.background
    return _frames(L0 + (level - L0) * cov), level


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
        Michelson contrast; the bar is ``L0 (1 + polarity c)``.
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
    }
    return Stimulus(frames, attrs)


# ------------------------------------------------------------------------------------
# gratings: barber-pole (Wallach 1935; Masson et al. 2000) and grating size (Barthelemy et al. 2006)
# ------------------------------------------------------------------------------------
def _carrier(display: Display, n: int, sf_cpd: float, direction_deg: float, speed_deg_s: float, phase_deg: float):
    """Unit sinusoid ``cos(2 pi f (x . n - v t) + phase)`` at pixel centres; shape (T, H, W).

    Sampled at pixel centres: the carrier is band-limited below the spatial Nyquist
    frequency (checked by the caller), so point sampling is exact.
    """
    x, y = _pixel_centres_deg(display)
    nx, ny = _unit(direction_deg)
    proj = x * nx + y * ny  # (H, W), deg along the drift direction
    t_s = np.arange(n) / display.frames_per_s
    arg = 2.0 * np.pi * sf_cpd * (proj[None] - speed_deg_s * t_s[:, None, None]) + math.radians(phase_deg)
    return np.cos(arg)


def _check_sf(display: Display, sf_cpd: float) -> None:
    _check_positive("sf_cpd", sf_cpd)
    nyquist = display.px_per_deg / 2.0
    if sf_cpd >= nyquist:
        raise ValueError(
            f"sf_cpd={sf_cpd} is at or above the spatial Nyquist frequency {nyquist:.3g} c/deg of "
            f"{display.px_per_deg} px/deg"
        )


def render_barberpole(
    display: Display,
    *,
    aspect_ratio: float,
    short_side_deg: float = 6.0,
    sf_cpd: float = 0.5,
    speed_deg_s: float = 5.0,
    grating_orientation_deg: float = 45.0,
    aperture_orientation_deg: float = 0.0,
    contrast: float = 1.0,
    duration_ms: float = 500.0,
    phase_deg: float = 0.0,
    center_deg: tuple[float, float] = (0.0, 0.0),
) -> Stimulus:
    """Grating drifting behind a rectangular aperture: the barber-pole (RR-7317 section 3.3).

    The aperture is ``aspect_ratio * short_side_deg`` by ``short_side_deg`` with
    its long axis at ``aperture_orientation_deg`` (0: horizontal). The grating
    drifts along its normal at ``aperture_orientation_deg + grating_orientation_deg``
    (45 deg: stripes oblique to both sides of the aperture). The 1D cue is the
    grating normal; the 2D cues are the terminators at the aperture borders, more
    numerous along the long sides, so the final percept is along the long axis
    (Wallach 1935; Masson et al. 2000).

    Parameters
    ----------
    display : Display
    aspect_ratio : float
        Long side / short side (>= 1; 1 is a square aperture).
    short_side_deg : float
    sf_cpd : float
        Spatial frequency (cycles/deg).
    speed_deg_s : float
        Drift speed of the grating along its normal (deg/s).
    grating_orientation_deg : float
        Drift direction (the grating normal) relative to the aperture's long axis,
        deg CCW.
    aperture_orientation_deg : float
        Direction of the aperture's long axis (deg CCW from rightward).
    contrast : float
        Michelson contrast of the grating.
    duration_ms : float
    phase_deg : float
        Carrier phase at the aperture centre at frame 0.
    center_deg : (float, float)
        Aperture centre (deg); the carrier's phase origin is the display centre.

    Returns
    -------
    Stimulus
        ``truth`` is the grating's (normal) drift velocity; attrs add
        ``grating_normal_deg``, ``long_axis_deg`` (the long-axis direction within
        90 deg of the drift), ``perceived_direction_deg`` (the long axis, or the
        grating normal for a square aperture where neither axis dominates),
        ``aperture_deg`` [long, short] and ``temporal_frequency_hz``.
    """
    _check_positive("short_side_deg", short_side_deg)
    _check_positive("speed_deg_s", speed_deg_s)
    if isinstance(aspect_ratio, bool) or not isinstance(aspect_ratio, (int, float)) or not aspect_ratio >= 1.0:
        raise ValueError(f"aspect_ratio must be >= 1, got {aspect_ratio!r}")
    _check_sf(display, sf_cpd)
    n = _n_frames(display, duration_ms)
    _levels(display, contrast, 1)
    normal = aperture_orientation_deg + grating_orientation_deg
    display.check_temporal_aliasing(speed_deg_s, spatial_period_deg=1.0 / sf_cpd, what="barber-pole grating")
    long_side = aspect_ratio * short_side_deg
    half = _rect_half_extent(long_side / 2.0, short_side_deg / 2.0, aperture_orientation_deg)
    centre = np.asarray([center_deg], dtype=np.float64)
    _check_fits(display, "barber-pole aperture", half, centre)
    aperture = _coverage(display, _rect_inside(long_side / 2.0, short_side_deg / 2.0, aperture_orientation_deg),
                         centre, half)[0]
    g = _carrier(display, n, sf_cpd, normal, speed_deg_s, phase_deg)
    L0 = display.background
    frames = _frames(L0 * (1.0 + contrast * aperture[None] * g))
    # the long axis, signed to lie within 90 deg of the grating drift
    diff = (normal - aperture_orientation_deg + 180.0) % 360.0 - 180.0
    long_axis = aperture_orientation_deg if abs(diff) <= 90.0 else aperture_orientation_deg + 180.0
    perceived = long_axis if aspect_ratio > 1.0 else normal
    params = dict(
        aspect_ratio=float(aspect_ratio), short_side_deg=float(short_side_deg), sf_cpd=float(sf_cpd),
        speed_deg_s=float(speed_deg_s), grating_orientation_deg=float(grating_orientation_deg),
        aperture_orientation_deg=float(aperture_orientation_deg), contrast=float(contrast),
        duration_ms=float(duration_ms), phase_deg=float(phase_deg), center_deg=[float(c) for c in center_deg],
    )
    attrs = {
        "family": "barberpole", "params": params, "truth": _truth(display, normal, speed_deg_s),
        "grating_normal_deg": float(normal % 360.0),
        "long_axis_deg": float(long_axis % 360.0),
        "perceived_direction_deg": float(perceived % 360.0),
        "aperture_deg": [float(long_side), float(short_side_deg)],
        "temporal_frequency_hz": float(sf_cpd * speed_deg_s),
    }
    return Stimulus(frames, attrs)


def render_grating(
    display: Display,
    *,
    diameter_deg: float,
    sf_cpd: float = 0.27,
    speed_deg_s: float = 37.0,
    direction_deg: float = 0.0,
    contrast: float = 1.0,
    duration_ms: float = 500.0,
    edge_deg: float = 0.0,
    phase_deg: float = 0.0,
    center_deg: tuple[float, float] = (0.0, 0.0),
) -> Stimulus:
    """Drifting sinusoidal grating in a circular aperture on the mean-luminance background.

    The grating-size set of RR-7317 (Barthelemy et al. 2006): 0.27 c/deg drifting
    at 37 deg/s, i.e. 10 Hz, seen through apertures of several diameters.

    Parameters
    ----------
    display : Display
    diameter_deg : float
        Aperture diameter (deg).
    sf_cpd : float
        Spatial frequency (cycles/deg).
    speed_deg_s : float
        Drift speed along the grating normal (deg/s); default 37 so that
        ``sf * speed = 10 Hz`` as in RR-7317.
    direction_deg : float
        Drift direction (the grating normal).
    contrast : float
        Michelson contrast of the grating.
    duration_ms : float
    edge_deg : float
        Width of a raised-cosine soft edge inside the aperture radius; 0 (default)
        is a hard edge, anti-aliased per ``display``.
    phase_deg : float
        Carrier phase at the display centre at frame 0.
    center_deg : (float, float)
        Aperture centre (deg).

    Returns
    -------
    Stimulus
        ``truth`` is the drift velocity; attrs add ``grating_normal_deg``,
        ``diameter_deg``, ``aperture_area_deg2`` (pi r^2) and ``temporal_frequency_hz``.
    """
    _check_positive("diameter_deg", diameter_deg)
    _check_positive("speed_deg_s", speed_deg_s)
    _check_sf(display, sf_cpd)
    radius = diameter_deg / 2.0
    if isinstance(edge_deg, bool) or not 0.0 <= edge_deg <= radius:
        raise ValueError(f"edge_deg must lie in [0, diameter_deg / 2 = {radius}], got {edge_deg!r}")
    n = _n_frames(display, duration_ms)
    _levels(display, contrast, 1)
    display.check_temporal_aliasing(speed_deg_s, spatial_period_deg=1.0 / sf_cpd, what="grating")
    centre = np.asarray([center_deg], dtype=np.float64)
    _check_fits(display, "grating aperture", (radius, radius), centre)
    if edge_deg > 0:
        inner = radius - edge_deg

        def window(x, y):
            r = np.sqrt(x * x + y * y)
            ramp = 0.5 * (1.0 + np.cos(np.pi * np.clip((r - inner) / edge_deg, 0.0, 1.0)))
            return np.where(r <= inner, 1.0, ramp)
    else:
        def window(x, y):
            return x * x + y * y <= radius * radius

    aperture = _coverage(display, window, centre, (radius, radius))[0]
    g = _carrier(display, n, sf_cpd, direction_deg, speed_deg_s, phase_deg)
    L0 = display.background
    frames = _frames(L0 * (1.0 + contrast * aperture[None] * g))
    params = dict(
        diameter_deg=float(diameter_deg), sf_cpd=float(sf_cpd), speed_deg_s=float(speed_deg_s),
        direction_deg=float(direction_deg), contrast=float(contrast), duration_ms=float(duration_ms),
        edge_deg=float(edge_deg), phase_deg=float(phase_deg), center_deg=[float(c) for c in center_deg],
    )
    attrs = {
        "family": "grating", "params": params, "truth": _truth(display, direction_deg, speed_deg_s),
        "grating_normal_deg": float(direction_deg % 360.0),
        "diameter_deg": float(diameter_deg),
        "aperture_area_deg2": float(math.pi * radius**2),
        "temporal_frequency_hz": float(sf_cpd * speed_deg_s),
    }
    return Stimulus(frames, attrs)


# ------------------------------------------------------------------------------------
# dispatch
# ------------------------------------------------------------------------------------
#: family -> (renderer, experiment); experiments are the four rows of RR-7317 Table 1.
FAMILIES: dict[str, tuple[Callable[..., Stimulus], str]] = {
    "diamond": (render_diamond, "diamonds"),
    "bar": (render_bar, "dashed_bars"),
    "dashed_bar": (render_dashed_bar, "dashed_bars"),
    "barberpole": (render_barberpole, "barberpole"),
    "grating": (render_grating, "grating_size"),
}


def render(family: str, display: Display, **params: Any) -> Stimulus:
    """Render a stimulus of ``family`` (a key of :data:`FAMILIES`) with ``params``."""
    try:
        renderer, _ = FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown stimulus family {family!r}; known: {sorted(FAMILIES)}") from None
    try:
        return renderer(display, **params)
    except TypeError as exc:  # unknown or missing keyword
        raise ValueError(f"{family}: bad parameters {sorted(params)}: {exc}") from None


# ------------------------------------------------------------------------------------
# the stimulus set of a run, from config
# ------------------------------------------------------------------------------------
#: Defaults of the ``motion`` config section, chosen so that every stimulus fits a
#: 256 x 256 display at 8 px/deg (32 x 32 deg) for its whole 500 ms of motion, with
#: objects travelling symmetrically about the centre (a 10 deg/s object moves 5 deg):
#:
#: * ``duration_ms`` 500: 50 frames at 100 frames/s; human direction errors decay
#:   within ~300 ms (Wallace et al. 2005; Pack & Born 2001), so 500 ms covers the
#:   decay and a steady state for the fits (several time constants of ~100 ms).
#: * ``contrast`` 1.0: full Michelson contrast (the high-contrast conditions).
#: * diamonds: 10 deg/s (0.8 px/frame, a common pursuit target speed), 8 deg edges,
#:   0.25 deg (2 px) outline, the 4 cardinal directions (Masson & Stone 2002), the
#:   interior angle 40 deg solved for the 44 deg VA bias (see :func:`diamond_geometry`);
#:   the 15 x 11 deg diamond plus 5 deg of travel fits in 32 deg.
#: * bars: 10 deg/s and 45 deg tilt (Pack & Born 2001), 0.5 deg wide (Biber & Ilg
#:   2008), lengths doubling 2-16 deg (Biber & Ilg's 20 deg does not leave room for
#:   a 2-fold series; 16 deg at 45 deg spans 11.7 deg, + 5 deg travel).
#: * dashed bars: the longest bar (16 deg) cut into 1, 2, 4, 8 tiles, 30 % gaps.
#: * barber-pole: aspect ratios 1 (control: no dominant axis), 2, 3 (Masson et al.
#:   2000 used several), 6 deg short side (3 periods of the 0.5 c/deg grating, so
#:   the longest aperture is 18 deg), 5 deg/s (2.5 Hz, 0.4 px/frame).
#: * gratings: 0.27 c/deg at 37 deg/s = 10 Hz (RR-7317 grating-size set); diameters
#:   doubling from 1 deg to 16, then 28 deg (the largest circle that fits 32 deg with
#:   a margin); Barthelemy et al.'s exact diameters are not verified.
DEFAULTS: dict[str, Any] = {
    "duration_ms": 500.0,
    "contrast": 1.0,
    "diamonds": {"speed_deg_s": 10.0, "size_deg": 8.0, "line_width_deg": 0.25,
                 "directions_deg": [0, 90, 180, 270], "interior_angle_deg": 40.0, "va_bias_deg": 44.0},
    "bars": {"speed_deg_s": 10.0, "width_deg": 0.5, "tilt_deg": 45.0, "lengths_deg": [2, 4, 8, 16]},
    # speed_deg_s, width_deg, tilt_deg default to the bars' values
    "dashed_bars": {"length_deg": 16.0, "n_tiles": [1, 2, 4, 8], "gap_fraction": 0.3,
                    "speed_deg_s": None, "width_deg": None, "tilt_deg": None},
    "barberpole": {"aspect_ratios": [1, 2, 3], "short_side_deg": 6.0, "sf_cpd": 0.5, "speed_deg_s": 5.0,
                   "grating_orientation_deg": 45.0},
    "gratings": {"diameters_deg": [1, 2, 4, 8, 16, 28], "sf_cpd": 0.27, "speed_deg_s": 37.0, "edge_deg": 0.0},
}
#: Keys of the motion section that belong to later stages (not validated here).
_OTHER_STAGE_KEYS = ("readout", "criteria", "models")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _number(key: str, value: Any, *, gt: float | None = None, ge: float | None = None,
            lt: float | None = None, le: float | None = None, integer: bool = False) -> float:
    if not _is_number(value) or (integer and int(value) != value):
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{key} must be {kind}, got {value!r}")
    if gt is not None and not value > gt:
        raise ValueError(f"{key} must be > {gt:g}, got {value!r}")
    if ge is not None and not value >= ge:
        raise ValueError(f"{key} must be >= {ge:g}, got {value!r}")
    if lt is not None and not value < lt:
        raise ValueError(f"{key} must be < {lt:g}, got {value!r}")
    if le is not None and not value <= le:
        raise ValueError(f"{key} must be <= {le:g}, got {value!r}")
    return int(value) if integer else float(value)


def _number_list(key: str, value: Any, **bounds) -> list:
    if not isinstance(value, (list, tuple)) or len(value) == 0:
        raise ValueError(f"{key} must be a non-empty list, got {value!r}")
    return [_number(f"{key}[{i}]", v, **bounds) for i, v in enumerate(value)]


def _section(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    given = cfg.get(name)
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise ValueError(f"motion.{name} must be a mapping, got {given!r}")
    unknown = sorted(set(given) - set(DEFAULTS[name]))
    if unknown:
        raise ValueError(f"motion.{name}.{unknown[0]}: unknown key; allowed: {sorted(DEFAULTS[name])}")
    out = dict(DEFAULTS[name])
    out.update(given)
    return out


def _tag(value: float, width: int) -> str:
    """Zero-padded name fragment: 4 -> '04', 2.5 -> '02p5' (names match [a-z0-9_]+)."""
    if float(value).is_integer():
        return f"{int(value):0{width}d}"
    whole, frac = f"{value:.6f}".rstrip("0").split(".")
    return f"{int(whole):0{width}d}p{frac}"


def stimulus_set(cfg: Mapping[str, Any], *, display: Display | None = None) -> dict[str, dict[str, Any]]:
    """The run's motion stimuli, ``{name: {"family", "experiment", "params"}}``, from config.

    Parameters
    ----------
    cfg : mapping
        The ``motion`` config section (or a whole config holding one); missing keys
        take :data:`DEFAULTS`. Keys of later stages (``readout``, ``criteria``,
        ``models``) are ignored.
    display : Display, optional
        When given, every stimulus is checked to fit the display for its whole
        duration (cheaply, without rendering), so a bad size fails before any job.

    Returns
    -------
    dict
        Ordered diamonds, bars, dashed bars, barber-poles, gratings. Names (Snakemake
        wildcards, ``[a-z0-9_]+``): ``diamond_{cw,ccw}_dir{DDD}``, ``bar_len{LL}``,
        ``dashed_n{NN}``, ``barberpole_ar{A}``, ``grating_d{DD}`` (zero-padded; a
        fractional value is written with ``p`` for the point, e.g. ``bar_len02p5``).
        ``params`` are the keyword arguments of the family's renderer (JSON types).

    Raises
    ------
    ValueError
        Naming the config key path, e.g. ``motion.gratings.diameters_deg[2] must be
        > 0, got -1``, for unknown keys, bad values or duplicate stimuli.
    """
    if "motion" in cfg and isinstance(cfg["motion"], Mapping):
        cfg = cfg["motion"]
    if not isinstance(cfg, Mapping):
        raise ValueError(f"motion must be a mapping, got {cfg!r}")
    allowed = set(DEFAULTS) | set(_OTHER_STAGE_KEYS)
    unknown = sorted(set(cfg) - allowed)
    if unknown:
        raise ValueError(f"motion.{unknown[0]}: unknown key; allowed: {sorted(allowed)}")
    duration = _number("motion.duration_ms", cfg.get("duration_ms", DEFAULTS["duration_ms"]), gt=0)
    contrast = _number("motion.contrast", cfg.get("contrast", DEFAULTS["contrast"]), ge=0, le=1)
    common = {"contrast": contrast, "duration_ms": duration}
    out: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}

    def add(name: str, family: str, params: dict[str, Any], key: str) -> None:
        if name in out:
            raise ValueError(f"{key} duplicates stimulus {name!r} (already made by {where[name]})")
        where[name] = key
        out[name] = {"family": family, "experiment": FAMILIES[family][1], "params": {**params, **common}}

    # diamonds
    d = _section(cfg, "diamonds")
    p = "motion.diamonds"
    dia = {
        "speed_deg_s": _number(f"{p}.speed_deg_s", d["speed_deg_s"], gt=0),
        "size_deg": _number(f"{p}.size_deg", d["size_deg"], gt=0),
        "line_width_deg": _number(f"{p}.line_width_deg", d["line_width_deg"], gt=0),
        "interior_angle_deg": _number(f"{p}.interior_angle_deg", d["interior_angle_deg"], gt=0, le=90),
        "va_bias_deg": _number(f"{p}.va_bias_deg", d["va_bias_deg"], ge=0, lt=90),
    }
    if math.sin(math.radians(dia["va_bias_deg"])) > math.cos(math.radians(dia["interior_angle_deg"])) + 1e-12:
        raise ValueError(
            f"{p}.interior_angle_deg must be <= 90 - va_bias_deg = {90 - dia['va_bias_deg']:g} "
            f"to reach the vector-average bias, got {dia['interior_angle_deg']:g}"
        )
    directions = _number_list(f"{p}.directions_deg", d["directions_deg"])
    for hand in ("cw", "ccw"):
        for i, direction in enumerate(directions):
            direction = direction % 360.0
            add(f"diamond_{hand}_dir{_tag(direction, 3)}", "diamond",
                {"handedness": hand, "direction_deg": direction, **dia}, f"{p}.directions_deg[{i}]")

    # bars
    b = _section(cfg, "bars")
    p = "motion.bars"
    bar = {
        "width_deg": _number(f"{p}.width_deg", b["width_deg"], gt=0),
        "tilt_deg": _number(f"{p}.tilt_deg", b["tilt_deg"], gt=-90, lt=90),
        "direction_deg": 0.0,
        "speed_deg_s": _number(f"{p}.speed_deg_s", b["speed_deg_s"], gt=0),
    }
    for i, length in enumerate(_number_list(f"{p}.lengths_deg", b["lengths_deg"], gt=0)):
        add(f"bar_len{_tag(length, 2)}", "bar", {"length_deg": length, **bar}, f"{p}.lengths_deg[{i}]")

    # dashed bars (same motion as the bars unless overridden)
    s = _section(cfg, "dashed_bars")
    p = "motion.dashed_bars"
    dashed = {
        "length_deg": _number(f"{p}.length_deg", s["length_deg"], gt=0),
        "gap_fraction": _number(f"{p}.gap_fraction", s["gap_fraction"], ge=0, lt=1),
        "width_deg": bar["width_deg"] if s["width_deg"] is None else _number(f"{p}.width_deg", s["width_deg"], gt=0),
        "tilt_deg": bar["tilt_deg"] if s["tilt_deg"] is None
        else _number(f"{p}.tilt_deg", s["tilt_deg"], gt=-90, lt=90),
        "direction_deg": 0.0,
        "speed_deg_s": bar["speed_deg_s"] if s["speed_deg_s"] is None
        else _number(f"{p}.speed_deg_s", s["speed_deg_s"], gt=0),
    }
    for i, n in enumerate(_number_list(f"{p}.n_tiles", s["n_tiles"], ge=1, integer=True)):
        add(f"dashed_n{_tag(n, 2)}", "dashed_bar", {"n_tiles": n, **dashed}, f"{p}.n_tiles[{i}]")

    # barber-poles
    bp = _section(cfg, "barberpole")
    p = "motion.barberpole"
    pole = {
        "short_side_deg": _number(f"{p}.short_side_deg", bp["short_side_deg"], gt=0),
        "sf_cpd": _number(f"{p}.sf_cpd", bp["sf_cpd"], gt=0),
        "speed_deg_s": _number(f"{p}.speed_deg_s", bp["speed_deg_s"], gt=0),
        "grating_orientation_deg": _number(f"{p}.grating_orientation_deg", bp["grating_orientation_deg"]),
    }
    for i, ar in enumerate(_number_list(f"{p}.aspect_ratios", bp["aspect_ratios"], ge=1)):
        add(f"barberpole_ar{_tag(ar, 1)}", "barberpole", {"aspect_ratio": ar, **pole}, f"{p}.aspect_ratios[{i}]")

    # gratings
    g = _section(cfg, "gratings")
    p = "motion.gratings"
    grat = {
        "sf_cpd": _number(f"{p}.sf_cpd", g["sf_cpd"], gt=0),
        "speed_deg_s": _number(f"{p}.speed_deg_s", g["speed_deg_s"], gt=0),
        "direction_deg": 0.0,
        "edge_deg": _number(f"{p}.edge_deg", g["edge_deg"], ge=0),
    }
    for i, dia_deg in enumerate(_number_list(f"{p}.diameters_deg", g["diameters_deg"], gt=0)):
        if grat["edge_deg"] > dia_deg / 2.0:
            raise ValueError(f"{p}.edge_deg ({grat['edge_deg']:g}) exceeds the radius of diameters_deg[{i}]")
        add(f"grating_d{_tag(dia_deg, 2)}", "grating", {"diameter_deg": dia_deg, **grat}, f"{p}.diameters_deg[{i}]")

    if display is not None:
        for name, spec in out.items():
            try:
                _check_spec_fits(display, spec)
            except ValueError as exc:
                raise ValueError(f"motion stimulus {name} ({where[name]}): {exc}") from None
    return out


def _check_spec_fits(display: Display, spec: Mapping[str, Any]) -> None:
    """Fit check of one stimulus spec against ``display`` without rendering it."""
    fam, prm = spec["family"], dict(spec["params"])
    n = _n_frames(display, prm["duration_ms"])
    if fam == "diamond":
        geom = diamond_geometry(handedness=prm["handedness"], direction_deg=prm["direction_deg"],
                                size_deg=prm["size_deg"], interior_angle_deg=prm["interior_angle_deg"],
                                va_bias_deg=prm["va_bias_deg"])
        v = np.asarray(geom["vertices_deg"])
        hw = prm["line_width_deg"] / 2.0
        half = (float(np.abs(v[:, 0]).max() + hw), float(np.abs(v[:, 1]).max() + hw))
        centres = _trajectory(display, n, prm["speed_deg_s"] * _unit(prm["direction_deg"]), (0.0, 0.0))
    elif fam in ("bar", "dashed_bar"):
        orientation = prm["direction_deg"] + 90.0 + prm["tilt_deg"]
        half = _rect_half_extent(prm["length_deg"] / 2.0, prm["width_deg"] / 2.0, orientation)
        centres = _trajectory(display, n, prm["speed_deg_s"] * _unit(prm["direction_deg"]), (0.0, 0.0))
    elif fam == "barberpole":
        half = _rect_half_extent(prm["aspect_ratio"] * prm["short_side_deg"] / 2.0, prm["short_side_deg"] / 2.0,
                                 prm.get("aperture_orientation_deg", 0.0))
        centres = np.zeros((1, 2))
    else:
        half = (prm["diameter_deg"] / 2.0,) * 2
        centres = np.zeros((1, 2))
    _check_fits(display, fam.replace("_", " "), half, centres)


# ------------------------------------------------------------------------------------
# store
# ------------------------------------------------------------------------------------
def write_stimulus(
    name: str,
    spec: Mapping[str, Any],
    display: Display | Mapping[str, Any],
    out_path: str | os.PathLike,
    *,
    code_hash: str = "",
) -> Path:
    """Render one stimulus of :func:`stimulus_set` and write its store atomically.

    Parameters
    ----------
    name : str
        Stimulus name (the Snakemake wildcard).
    spec : mapping
        ``{"family", "experiment", "params"}`` as produced by :func:`stimulus_set`.
    display : Display or mapping
        The run's display (a mapping is the ``display`` config section).
    out_path : path-like
        ``results/stimuli/{name}.zarr``.
    code_hash : str
        Hash of the stimulus code (:func:`psybench.provenance.code_hash`).

    Returns
    -------
    pathlib.Path
        The store: array ``frames`` (dims ``t, y, x``, float32, chunked along ``t``)
        and group attrs ``{"stage": "stimuli", "display", "stimulus": {"name",
        "family", "experiment", "params", "truth", ...}, "code_hash"}``.
    """
    from psybench.io.store import ArraySpec, write_store

    if not isinstance(display, Display):
        display = Display.from_config(display)
    family = spec.get("family")
    if family not in FAMILIES:
        raise ValueError(f"stimulus {name}: unknown family {family!r}; known: {sorted(FAMILIES)}")
    experiment = spec.get("experiment", FAMILIES[family][1])
    try:
        stim = render(family, display, **dict(spec.get("params", {})))
    except ValueError as exc:
        raise ValueError(f"stimulus {name}: {exc}") from None
    info = {"name": name, "family": family, "experiment": experiment}
    info.update({k: v for k, v in stim.attrs.items() if k != "family"})
    attrs = {"stage": "stimuli", "display": display.to_attrs(), "stimulus": info, "code_hash": code_hash}
    arrays = {
        "frames": ArraySpec(
            stim.frames, ("t", "y", "x"),
            attrs={"units": "luminance, 0 black to 1 white", "frame_ms": display.frame_ms},
        )
    }
    return write_store(out_path, arrays, attrs)
