"""Grating size: the early response grows with diameter, then saturates (Barthelemy et al. 2006;
Tlapale et al. 2010, RR-7317 sec. 3)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from psybench.motion.criteria.common import _need, _row, _stimulus_param

__all__ = ["integration_area_growth", "score_grating_size"]


def score_grating_size(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Grating in circular apertures of growing diameter (Barthelemy, Vanzetta & Masson 2006).

    Rule
    ----
    Pursuit speed along the true direction, ``u(t) = speed * cos(direction error)``.
    The model's own response onset ``t_on``: the first time ``u`` reaches
    ``onset_fraction`` (0.1) of its largest value over the series (one latency per
    model, as for an eye). Early response ``R(D)``: the displacement ``integral of
    u dt`` (deg) over ``[t_on, t_on + window_ms]`` (40 ms: the open-loop window of
    the data, tens of ms). With ``R_peak = max_D R``. **Pass** iff

    * ``R_peak > 0`` (the response follows the grating);
    * the peak is not at the smallest diameter and
      ``(R_peak - R(D_min)) / R_peak >= growth_min`` (0.05): it grows with diameter;
    * ``(R(D_last) - R(D_prev)) / R_peak <= saturation_tol`` (0.05): over the last
      diameter step it saturates or declines (surround suppression);
    * ``(R_peak - R(D_last)) / R_peak <= decline_max`` (0.25): the decline is bounded
      ("slightly decreases").

    Continuous error (dimensionless, graded): ``max(0, g_last - saturation_tol) +
    max(0, growth_min - g_first) + max(0, decline - decline_max)``; NaN when
    ``R_peak <= 0``.

    Separately reported (``details["integration"]``, the ``integration_*`` score
    columns; not part of the Table 1 verdict): the integration area, the smallest
    diameter whose response reaches ``area_fraction`` of the peak, must not shrink
    from the early window to the next window of the same length (Barthelemy et al.
    2006: integration area grows with time). Its error is the shrinkage in
    octaves of diameter (0 when it grows or stays).
    """
    c = {**criteria["common"], **criteria["grating_size"]}
    series = []
    for name, data in readouts.items():
        d = _stimulus_param(data["stimulus"], ("diameter_deg", "diameter", "aperture_diameter_deg"), "diameter")
        speed = _need(data, "speed_deg_s", name)
        along = speed * np.cos(np.radians(np.nan_to_num(data["direction_error_deg"], nan=90.0)))
        series.append((d, name, data["t_ms"], along))
    if len(series) < 3:
        raise ValueError(f"grating_size needs at least 3 diameters; got {len(series)}")
    series.sort(key=lambda s: s[0])
    t_on = _speed_onset([(t, u) for _, _, t, u in series], c["onset_fraction"])
    W = c["window_ms"]
    R = np.array([_displacement(t, u, t_on, t_on + W) for _, _, t, u in series])
    R_next = np.array([_displacement(t, u, t_on + W, t_on + 2 * W) for _, _, t, u in series])
    diameters = np.array([d for d, *_ in series])
    resp = [{"stimulus": name, "diameter_deg": d, "early_displacement_deg": float(r),
             "next_window_displacement_deg": float(r2)} for (d, name, _, _), r, r2 in zip(series, R, R_next)]
    peak_i = int(np.argmax(R)) if np.isfinite(R).any() else 0
    r_peak = float(R[peak_i])
    if np.isfinite(r_peak) and r_peak > 0:
        g_first = float((r_peak - R[0]) / r_peak)
        g_last = float((R[-1] - R[-2]) / r_peak)
        decline = float((r_peak - R[-1]) / r_peak)
        grows = bool(peak_i > 0 and g_first >= c["growth_min"])
        saturates = bool(g_last <= c["saturation_tol"])
        bounded = bool(decline <= c["decline_max"])
        error = (max(0.0, g_last - c["saturation_tol"]) + max(0.0, c["growth_min"] - g_first)
                 + max(0.0, decline - c["decline_max"]))
    else:
        g_first = g_last = decline = float("nan")
        grows = saturates = bounded = False
        error = float("nan")
    responds = bool(np.isfinite(r_peak) and r_peak > 0)
    passed = bool(responds and grows and saturates and bounded)
    details = {
        "rule": "early displacement (window from the model's onset) grows from the smallest diameter to its "
                "peak, then saturates, declining by at most decline_max",
        "checks": {"responds": responds, "grows": grows, "saturates": saturates, "bounded_decline": bounded},
        "t_onset_ms": t_on, "window_ms": [t_on, t_on + W], "peak_diameter_deg": resp[peak_i]["diameter_deg"],
        "relative_growth_first_to_peak": g_first, "relative_growth_last_step": g_last,
        "relative_decline_peak_to_last": decline,
        "integration": integration_area_growth(diameters, R, R_next, c["area_fraction"]),
        "series": resp, "thresholds": c,
    }
    return _row("grating_size", model, passed, error, details), []


def _speed_onset(courses, fraction: float) -> float:
    """First time any course reaches ``fraction`` of the largest value over all courses (NaN if none > 0)."""
    peak = max((float(np.nanmax(u)) for _, u in courses if np.isfinite(u).any()), default=float("nan"))
    if not (math.isfinite(peak) and peak > 0):
        return float("nan")
    times = [float(t[np.argmax(u >= fraction * peak)]) for t, u in courses if (u >= fraction * peak).any()]
    return min(times)


def _displacement(t: np.ndarray, u: np.ndarray, t0: float, t1: float) -> float:
    """Integral of ``u`` (deg/s) over ``[t0, t1]`` ms, in deg (0 when fewer than 2 samples)."""
    if not math.isfinite(t0):
        return float("nan")
    sel = (t >= t0 - 1e-9) & (t <= t1 + 1e-9)
    return float(np.trapezoid(u[sel], t[sel] / 1000.0)) if sel.sum() >= 2 else 0.0


def integration_area_growth(
    diameters: np.ndarray, early: np.ndarray, later: np.ndarray, fraction: float,
) -> dict[str, Any]:
    """Integration area in two successive windows (Barthelemy et al. 2006: it grows with time).

    Parameters
    ----------
    diameters : ndarray, shape (D,)
        Aperture diameters (deg), increasing.
    early, later : ndarray, shape (D,)
        Response (displacement) per diameter in the early window and the next one.
    fraction : float
        The area is the smallest diameter whose response reaches ``fraction`` of
        that window's peak.

    Returns
    -------
    dict
        ``early_area_deg``, ``later_area_deg``, ``passed`` (the later area is not
        smaller) and ``error`` (shrinkage in octaves, ``max(0, log2(early/later))``;
        None when a window has no positive response).
    """
    areas = []
    for r in (early, later):
        r = np.asarray(r, dtype=np.float64)
        if not (np.isfinite(r).any() and np.nanmax(r) > 0):
            areas.append(float("nan"))
            continue
        reach = np.flatnonzero(r >= fraction * np.nanmax(r))
        areas.append(float(diameters[reach[0]]))
    a0, a1 = areas
    ok = math.isfinite(a0) and math.isfinite(a1)
    return {"early_area_deg": a0 if ok else None, "later_area_deg": a1 if ok else None,
            "passed": bool(ok and a1 >= a0), "error": max(0.0, math.log2(a0 / a1)) if ok else None,
            "rule": "integration area (smallest diameter reaching area_fraction of the peak) does not shrink "
                    "from the early window to the next"}
