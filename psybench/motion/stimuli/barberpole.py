"""Barber-pole: a grating drifting behind a rectangular aperture (Wallach 1935; Masson et al. 2000).

Tlapale et al. 2010, RR-7317 sec. 3.3: the terminators along the aperture's long
sides outnumber the others, so the perceived direction is the long axis.
"""

from __future__ import annotations

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli.geometry import (
    Stimulus,
    _check_fits,
    _check_positive,
    _coverage,
    _frames,
    _levels,
    _n_frames,
    _rect_half_extent,
    _rect_inside,
    _truth,
)
from psybench.motion.stimuli.gratings import _carrier, _check_sf

__all__ = ["render_barberpole"]


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
        # L0 (1 +- c) at the carrier's extremes:: Michelson contrast exactly c
        "contrast_definition": "michelson",
        "michelson_contrast": float(contrast),
    }
    return Stimulus(frames, attrs)
