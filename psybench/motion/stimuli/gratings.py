"""Drifting gratings in circular apertures: the grating-size set (Barthelemy et al. 2006).

Tlapale et al. 2010, RR-7317 sec. 3 (grating size): 0.27 c/deg at 37 deg/s seen
through apertures of growing diameter. The band-limited carrier
(:func:`_carrier`) is shared with the barber-pole (:mod:`psybench.motion.stimuli.barberpole`).
"""

from __future__ import annotations

import math

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
    _pixel_centres_deg,
    _truth,
    _unit,
)

__all__ = ["render_grating"]


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
        # L0 (1 +- c) at the carrier's extremes:: Michelson contrast exactly c
        "contrast_definition": "michelson",
        "michelson_contrast": float(contrast),
    }
    return Stimulus(frames, attrs)
