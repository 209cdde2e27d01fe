"""Barber-pole: the perceived direction follows the long axis (Masson et al. 2000; Tlapale et al. 2010,
RR-7317 sec. 3.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from psybench.motion.criteria.common import (
    _axis_toward,
    _lookup,
    _perceived,
    _row,
    _stimulus_param,
    _truth,
)
from psybench.motion.display import wrap_deg
from psybench.motion.readouts import nanmean_quiet

__all__ = ["score_barberpole"]


def score_barberpole(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Barber-pole (Wallach 1935; Masson et al. 2000; RR-7317 sec. 3.3).

    Rule
    ----
    The perceived direction (steady state of ``w``) is "the same as the
    orientation of the elongated side of the aperture": the 2D cues with the
    greater number of occurrences win (RR-7317 sec. 3.3, Masson et al. 2000).
    With ``n`` the grating-normal direction and ``L`` the long-axis direction
    (the sense of the axis within 90 deg of ``n``), and the deviation
    ``dev = wrap(perceived - n)`` signed positive toward ``L``. **Pass** iff

    * for every aspect ratio > 1: ``dev > min_fraction_toward_long_axis * |wrap(L - n)|``;
      with the default fraction 0.5 this is ``|wrap(perceived - L)| <
      |wrap(perceived - n)|`` for a percept between the two (closer to the long
      axis than to the grating normal);
    * ``dev`` does not decrease with aspect ratio by more than
      ``monotonic_tol_deg`` (2) between consecutive ratios (Masson et al. 2000:
      the size of the 2D component depends on the aspect ratio).

    Continuous error (deg): mean ``|wrap(perceived - L)|`` over aspect ratios > 1.
    """
    c = {**criteria["common"], **criteria["barberpole"]}
    rows = []
    for name, data in readouts.items():
        stim = data["stimulus"]
        ar = _stimulus_param(stim, ("aspect_ratio", "ar"), "aspect ratio")
        normal = _lookup(stim, ("grating_normal_deg",))
        normal = _truth(stim) if normal is None else float(normal)
        long_axis = _lookup(stim, ("long_axis_deg",))
        perceived = _perceived(data, name, c["final_window_ms"])
        entry = {"stimulus": name, "aspect_ratio": ar, "perceived_deg": perceived, "grating_normal_deg": normal}
        if long_axis is not None:
            L = _axis_toward(float(long_axis), normal)
            s = np.sign(wrap_deg(L - normal))
            entry.update({
                "long_axis_direction_deg": L,
                "abs_to_long_axis_deg": abs(float(wrap_deg(perceived - L))),
                "abs_to_normal_deg": abs(float(wrap_deg(perceived - normal))),
                "deviation_toward_long_axis_deg": float(s * wrap_deg(perceived - normal)) if s else 0.0,
            })
        elif ar > 1:
            raise ValueError(f"stimulus {name!r}: aspect ratio {ar} > 1 but its attributes lack long_axis_deg")
        else:
            entry["deviation_toward_long_axis_deg"] = float("nan")
        rows.append(entry)
    rows.sort(key=lambda r: r["aspect_ratio"])
    elongated = [r for r in rows if r["aspect_ratio"] > 1]
    if not elongated:
        raise ValueError("barberpole needs at least one aspect ratio > 1")
    for r in elongated:
        span = abs(float(wrap_deg(r["long_axis_direction_deg"] - r["grating_normal_deg"])))
        r["fraction_toward_long_axis"] = r["deviation_toward_long_axis_deg"] / span if span > 0 else float("nan")
    closer = [bool(np.isfinite(r["perceived_deg"]) and np.isfinite(r["fraction_toward_long_axis"])
                   and r["fraction_toward_long_axis"] > c["min_fraction_toward_long_axis"]) for r in elongated]
    devs = [r["deviation_toward_long_axis_deg"] for r in rows
            if np.isfinite(r.get("deviation_toward_long_axis_deg", np.nan))]
    monotonic = bool(len(devs) >= 1 and all(b >= a - c["monotonic_tol_deg"] for a, b in zip(devs, devs[1:])))
    error = float(nanmean_quiet(np.array([r["abs_to_long_axis_deg"] for r in elongated])))
    passed = all(closer) and monotonic
    details = {
        "rule": "deviation from the grating normal toward the long axis > min_fraction_toward_long_axis of the angle "
                "between them for every aspect ratio > 1 (0.5: closer to the long axis), "
                "deviation toward the long axis non-decreasing with aspect ratio",
        "checks": {"closer_to_long_axis": all(closer), "non_decreasing_with_aspect": monotonic},
        "stimuli": rows, "thresholds": c,
    }
    return _row("barberpole", model, passed, error, details), []
