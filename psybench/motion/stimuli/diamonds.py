"""Translating diamonds: Masson & Stone's (2002) type II outline rhombus (Tlapale et al. 2010, RR-7317 sec. 3.2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli.geometry import (
    Inside,
    Stimulus,
    _check_positive,
    _line_contrast,
    _render_translating,
    _truth,
    _unit,
)

__all__ = ["diamond_geometry", "render_diamond"]


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
        Weber contrast of the outline against the background, in [0, 1]: the outline
        is ``L0 (1 + polarity c)`` (Michelson ``c / (2 + polarity c)``, recorded in the
        attributes as ``michelson_contrast``).
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
    display.check_temporal_aliasing(speed_deg_s, what="diamond")
    verts = np.asarray(geom["vertices_deg"])
    hw = line_width_deg / 2.0
    half = (float(np.abs(verts[:, 0]).max() + hw), float(np.abs(verts[:, 1]).max() + hw))
    frames, level = _render_translating(
        display, "diamond", _segments_inside(verts, hw), half, direction_deg=direction_deg,
        speed_deg_s=speed_deg_s, contrast=contrast, duration_ms=duration_ms, polarity=polarity,
        center_deg=center_deg,
    )
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
    attrs.update(_line_contrast(display, level))
    return Stimulus(frames, attrs)
