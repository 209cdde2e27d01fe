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

__all__ = ["ocular_following_range", "score_barberpole"]


def score_barberpole(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Barber-pole (Wallach 1935; Masson et al. 2000; RR-7317 sec. 3.3).

    Rule
    ----
    With ``n`` the grating-normal direction, ``L`` the long-axis direction (the
    sense within 90 deg of ``n``), ``phi = |wrap(L - n)|`` and the deviation
    ``dev = wrap(perceived - n)`` signed positive toward ``L`` (perceived: the
    steady state of ``w``, the mean over the final window). The ocular-following
    data bound the final direction (Masson, Rybarczyk, Castet & Mestre 2000: it
    lies between the vector sum of the terminators alone and that of grating plus
    terminators; see :func:`ocular_following_range`). **Pass** iff

    * for every aspect ratio > 1: ``dev`` lies in ``[dev_gt - range_tol_deg,
      dev_t + range_tol_deg]``, ``dev_t`` the terminators' vector sum and
      ``dev_gt`` the grating-plus-terminators' one, and ``dev >=
      min_fraction_toward_long_axis * phi`` (default 0: no further bound);
    * the square aperture (aspect ratio 1, where both bounds are the grating
      normal by symmetry) reads the grating normal: ``|dev| <= square_tol_deg``;
    * ``dev`` does not decrease with aspect ratio by more than
      ``monotonic_tol_deg`` (2) between consecutive ratios (Masson et al. 2000:
      the size of the 2D component grows with the aspect ratio).

    Departure: Masson et al. measured the final direction of ocular following
    135-175 ms after stimulus onset; here it is the steady state of the pursuit
    readout (RR-7317 sec. 4.1), which a model reaches on its own time scale.
    The perceptual report (the long axis, Wallach 1935) lies past the upper bound
    at any aspect ratio; the earlier rule's "closer to the long axis than to the
    normal" stays in ``checks["closer_to_long_axis"]`` for reference and no
    longer decides.

    Continuous error (deg, graded): mean over aspect ratios of the distance of
    ``dev`` from its range (0 inside; for the square, from the normal).
    The earlier quantities (``abs_to_long_axis_deg``, ``fraction_toward_long_axis``)
    stay in the details.
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
            entry["deviation_toward_long_axis_deg"] = float(wrap_deg(perceived - normal))
        rows.append(entry)
    rows.sort(key=lambda r: r["aspect_ratio"])
    elongated = [r for r in rows if r["aspect_ratio"] > 1]
    if not elongated:
        raise ValueError("barberpole needs at least one aspect ratio > 1")
    distances, in_range, squares = [], [], []
    for r in rows:
        dev = r["deviation_toward_long_axis_deg"]
        if r["aspect_ratio"] > 1:
            span = abs(float(wrap_deg(r["long_axis_direction_deg"] - r["grating_normal_deg"])))
            lo, hi = ocular_following_range(r["aspect_ratio"], span)
            r["fraction_toward_long_axis"] = dev / span if span > 0 else float("nan")
            ok = bool(np.isfinite(dev) and lo - c["range_tol_deg"] <= dev <= hi + c["range_tol_deg"]
                      and r["fraction_toward_long_axis"] >= c["min_fraction_toward_long_axis"])
            in_range.append(ok)
        else:
            lo = hi = 0.0
            squares.append(bool(np.isfinite(dev) and abs(dev) <= c["square_tol_deg"]))
        r["range_deg"] = [lo, hi]
        distances.append(max(lo - dev, dev - hi, 0.0) if np.isfinite(dev) else float("nan"))
    devs = [r["deviation_toward_long_axis_deg"] for r in rows
            if r["aspect_ratio"] > 1 and np.isfinite(r["deviation_toward_long_axis_deg"])]
    if any(r["aspect_ratio"] <= 1 for r in rows):
        devs = [0.0 if squares[0] else rows[0]["deviation_toward_long_axis_deg"]] + devs
    monotonic = bool(len(devs) >= 1 and all(b >= a - c["monotonic_tol_deg"] for a, b in zip(devs, devs[1:])))
    error = float(nanmean_quiet(np.array(distances)))
    passed = all(in_range) and all(squares) and monotonic
    details = {
        "rule": "deviation toward the long axis within the ocular-following range (grating-plus-terminators "
                "to terminators vector sum, Masson et al. 2000) for every aspect ratio > 1, the square "
                "aperture at the grating normal, deviation non-decreasing with aspect ratio",
        "checks": {"within_ocular_following_range": all(in_range), "square_reads_normal": all(squares),
                   "non_decreasing_with_aspect": monotonic,
                   "closer_to_long_axis": all(r["fraction_toward_long_axis"] > 0.5 for r in elongated)},
        "stimuli": rows, "thresholds": c,
    }
    return _row("barberpole", model, passed, error, details), []


def ocular_following_range(aspect_ratio: float, span_deg: float = 45.0) -> tuple[float, float]:
    """Deviations from the grating normal toward the long axis that bound the final direction (deg).

    Masson, Rybarczyk, Castet & Mestre (2000): the final direction of ocular
    following lies between the vector sum of the terminators' motions and that
    of the grating's (1D) motion plus the terminators'. A grating drifting at
    speed ``s`` along its normal, at ``span_deg`` from the long axis, has its
    terminators slide along the aperture sides at ``s / cos`` of the angle to
    each side; their number is proportional to the side's length
    (``aspect_ratio`` : 1). So

    * terminators: ``T = AR s/cos(phi) e_L + s/sin(phi) e_S`` (long-side and
      short-side terminators), whose direction is ``atan(1 / AR)`` from the long
      axis at ``phi = 45`` deg (26.6 deg at AR 2: a deviation of 18.4 deg from
      the normal, a fraction 0.41 of the way to the long axis);
    * grating plus terminators: ``s e_n + T / (AR + 1)`` (the 1D vector plus the
      terminators' mean vector), nearer the normal (9.5 deg at AR 2).

    Parameters
    ----------
    aspect_ratio : float
        Long side / short side (>= 1).
    span_deg : float
        Angle between the grating normal and the long axis, ``phi`` (0 < phi < 90).

    Returns
    -------
    (lower, upper) : tuple of float
        Deviations (deg, toward the long axis) of the grating-plus-terminators
        and terminators-alone sums; both 0 at aspect ratio 1 when phi = 45.
    """
    phi = np.radians(span_deg)
    if not 0 < phi < np.pi / 2:
        raise ValueError(f"barberpole: angle between grating normal and long axis must be in (0, 90); got {span_deg}")
    # frame: long axis along x, short side along y; the normal at phi from x
    term = np.array([aspect_ratio / np.cos(phi), 1.0 / np.sin(phi)])
    total = np.array([np.cos(phi), np.sin(phi)]) + term / (aspect_ratio + 1.0)

    def deviation(v: np.ndarray) -> float:
        return float(span_deg - np.degrees(np.arctan2(v[1], v[0])))

    return deviation(total), deviation(term)
