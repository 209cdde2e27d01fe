"""Grating size: the early response grows with diameter, then saturates (Barthelemy et al. 2006;
Tlapale et al. 2010, RR-7317 sec. 3)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from psybench.motion.criteria.common import _need, _onset, _row, _stimulus_param

__all__ = ["score_grating_size"]


def score_grating_size(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Grating in circular apertures of growing diameter (Barthelemy, Vanzetta & Masson 2006).

    Rule
    ----
    Early response ``R(D)``: the pursuit displacement along the true direction,
    ``integral of speed * cos(direction error) dt`` (deg) over ``window_ms``
    (150 ms) from the earliest response onset of the series (the same window for
    every diameter). With ``R_peak = max_D R``. **Pass** iff

    * ``R_peak > 0`` (the response follows the grating);
    * the peak is not at the smallest diameter and
      ``(R_peak - R(D_min)) / R_peak >= growth_min`` (0.05): the response grows
      with diameter;
    * ``(R(D_last) - R(D_prev)) / R_peak <= saturation_tol`` (0.05): over the last
      diameter step it saturates or declines (surround suppression).

    Continuous error (dimensionless): ``max(0, g_last - saturation_tol) +
    max(0, growth_min - g_first)`` with ``g_last`` the relative growth over the
    last step and ``g_first = (R_peak - R(D_min)) / R_peak``; NaN when
    ``R_peak <= 0``.
    """
    c = {**criteria["common"], **criteria["grating_size"]}
    series = []
    onsets = []
    for name, data in readouts.items():
        d = _stimulus_param(data["stimulus"], ("diameter_deg", "diameter", "aperture_diameter_deg"), "diameter")
        series.append((d, name, data))
        onsets.append(_onset(data["direction_error_deg"], data["t_ms"]))
    if len(series) < 3:
        raise ValueError(f"grating_size needs at least 3 diameters; got {len(series)}")
    series.sort(key=lambda s: s[0])
    t_on = float(np.nanmin(onsets)) if np.isfinite(onsets).any() else float("nan")
    resp = []
    for d, name, data in series:
        t = data["t_ms"]
        speed = _need(data, "speed_deg_s", name)
        along = speed * np.cos(np.radians(np.nan_to_num(data["direction_error_deg"], nan=90.0)))
        sel = (t >= t_on) & (t <= t_on + c["window_ms"] + 1e-9) if math.isfinite(t_on) else np.zeros(t.size, bool)
        r = float(np.trapezoid(along[sel], t[sel] / 1000.0)) if sel.sum() >= 2 else 0.0
        resp.append({"stimulus": name, "diameter_deg": d, "early_displacement_deg": r})
    R = np.array([r["early_displacement_deg"] for r in resp])
    peak_i = int(np.argmax(R))
    r_peak = float(R[peak_i])
    if r_peak > 0:
        g_first = float((r_peak - R[0]) / r_peak)
        g_last = float((R[-1] - R[-2]) / r_peak)
        grows = bool(peak_i > 0 and g_first >= c["growth_min"])
        saturates = bool(g_last <= c["saturation_tol"])
        error = max(0.0, g_last - c["saturation_tol"]) + max(0.0, c["growth_min"] - g_first)
    else:
        g_first = g_last = float("nan")
        grows = saturates = False
        error = float("nan")
    passed = bool(r_peak > 0 and grows and saturates)
    details = {
        "rule": "early displacement grows from the smallest diameter to its peak, then saturates or declines",
        "checks": {"responds": bool(r_peak > 0), "grows": grows, "saturates": saturates},
        "t_onset_ms": t_on, "peak_diameter_deg": resp[peak_i]["diameter_deg"],
        "relative_growth_first_to_peak": g_first, "relative_growth_last_step": g_last,
        "series": resp, "thresholds": c,
    }
    return _row("grating_size", model, passed, error, details), []
