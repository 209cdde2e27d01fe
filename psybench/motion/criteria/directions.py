"""Nuisance invariance over motion directions: one verdict per direction, passed only if passed at each.

A benchmark whose verdict changes when the same stimulus moves at 15 instead of 0
deg measures the stimulus set, not the model. Every experiment is
therefore scored separately at each motion direction of the run
(``motion.directions_deg``) and a model passes it only if it passes at every
direction; the continuous error is the worst (largest) over directions, so that
a model cannot buy back a failure at one direction with a good score at another.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from psybench.motion.criteria.common import _lookup, _truth

__all__ = ["combine_directions", "direction_tag", "motion_direction"]

#: Fitted quantities of a decay criterion kept for each direction (initial bias, time constant, asymptote).
_FIT_KEYS = ("A", "tau_ms", "B")


def motion_direction(stim: Mapping[str, Any]) -> float:
    """The nuisance direction (deg in [0, 360)) a stimulus was rendered at.

    The barber-pole's configuration is rotated as a whole, so its direction is the
    rotation of the aperture (``aperture_orientation_deg``, 0 when absent); every
    other family moves along ``direction_deg`` (its parameter, else its true
    direction of motion).
    """
    if stim.get("family") == "barberpole" or stim.get("experiment") == "barberpole":
        value = _lookup(stim, ("aperture_orientation_deg",))
        return float(value) % 360.0 if value is not None else 0.0
    value = _lookup(stim, ("direction_deg",))
    return (float(value) if value is not None else _truth(stim)) % 360.0


def direction_tag(direction: float) -> str:
    """Column suffix of a direction: 15 -> 'dir015', 22.5 -> 'dir022p5'."""
    whole, _, frac = f"{float(direction):.6f}".rstrip("0").rstrip(".").partition(".")
    return f"dir{int(whole):03d}" + (f"p{frac}" if frac else "")


def _worst(errors: Sequence[float]) -> float:
    """Largest error; NaN when any direction could not be scored (a gap is not a success)."""
    if not errors or any(not math.isfinite(e) for e in errors):
        return float("nan")
    return float(max(errors))


def combine_directions(per_direction: Sequence[tuple[float, Mapping[str, Any]]]) -> dict[str, Any]:
    """One experiment's overall score row from its rows at each direction.

    Parameters
    ----------
    per_direction : sequence of (direction_deg, row)
        Rows of one criterion (``experiment, model, passed, error, details``), one
        per direction.

    Returns
    -------
    dict
        ``passed`` iff passed at every direction; ``error`` the largest error
        (NaN if any is NaN); ``details`` those of the decisive direction (the
        first failing one, else the one with the largest error), with
        ``by_direction`` (direction, passed, error of each, and ``A``, ``tau_ms``,
        ``B`` of a decay criterion) and ``n_directions``;
        columns ``n_directions``, ``passed_dir{DDD}``, ``error_dir{DDD}``, and for
        a criterion whose details carry a separately reported ``integration``
        verdict, ``integration_passed`` (at every direction) and
        ``integration_error`` (the largest).
    """
    if not per_direction:
        raise ValueError("combine_directions needs at least one direction")
    errors = [float(r["error"]) for _, r in per_direction]
    failing = [i for i, (_, r) in enumerate(per_direction) if not r["passed"]]
    if failing:
        decisive = failing[0]
    else:
        finite = [e if math.isfinite(e) else -math.inf for e in errors]
        decisive = max(range(len(finite)), key=finite.__getitem__)
    first = per_direction[decisive][1]
    by_direction = [{"direction_deg": d, "passed": bool(r["passed"]),
                     "error": float(r["error"]) if math.isfinite(float(r["error"])) else None,
                     **{k: r["details"][k] for k in _FIT_KEYS if k in r["details"]}}
                    for d, r in per_direction]
    details = {**first["details"], "by_direction": by_direction, "n_directions": len(per_direction),
               "decisive_direction_deg": per_direction[decisive][0]}
    row = {"experiment": first["experiment"], "model": first["model"], "passed": not failing,
           "error": _worst(errors), "details": details, "n_directions": len(per_direction)}
    for d, r in per_direction:
        row[f"passed_{direction_tag(d)}"] = bool(r["passed"])
        row[f"error_{direction_tag(d)}"] = float(r["error"])
    integration = [r["details"].get("integration") for _, r in per_direction]
    if all(isinstance(x, Mapping) for x in integration):
        row["integration_passed"] = all(bool(x["passed"]) for x in integration)
        row["integration_error"] = _worst([float(x["error"]) if x["error"] is not None else math.nan
                                           for x in integration])
    return row


def _column_order(column: str) -> tuple:
    """Order of the extra score columns: n_directions, per-direction pairs by angle, then the rest."""
    m = re.fullmatch(r"(passed|error)_dir(\d+)(?:p(\d+))?", column)
    if column == "n_directions":
        return (0,)
    if m:
        angle = float(f"{m.group(2)}.{m.group(3) or 0}")
        return (1, angle, m.group(1) != "passed")
    return (2, column.removesuffix("_passed").removesuffix("_error"), column.endswith("_error"))
