"""Translating diamonds: the half-differential error decays (Masson & Stone 2002; Tlapale et al. 2010,
RR-7317 sec. 3.2, 4.4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from psybench.motion.criteria.common import (
    _decay_checks,
    _fit_curve,
    _handedness,
    _late_abs,
    _lookup,
    _row,
    _truth,
)
from psybench.motion.display import wrap_deg
from psybench.motion.readouts import half_differential_error, nanmean_quiet

__all__ = ["score_diamonds"]


def score_diamonds(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Translating diamonds (Masson & Stone 2002; RR-7317 sec. 3.2 and 4.4).

    Rule
    ----
    For each translation direction, pair the CW and CCW diamonds and take the
    half-differential direction error ``(e_CW - e_CCW) / 2``, signed so that
    positive points toward the vector average of the edge motions (sign of
    ``wrap(vector_average_direction_deg - truth)`` of the CW diamond, which must be
    opposite for the CCW one). Average over directions (NaN ignored) and fit
    ``A exp(-t/tau) + B`` on time since response onset (one or two exponentials
    by BIC). **Pass** iff the fit converged and

    * ``A >= a_min_deg`` (10): the response starts biased toward the vector
      average, as human pursuit and fast percepts do (Masson & Stone 2002);
    * ``|B| <= b_max_deg`` (5): it converges to the true direction;
    * ``tau_min_ms <= tau <= tau_max_ms`` (20-500 ms; humans converge in under
      300 ms, Wallace et al. 2005);
    * ``R^2 >= r2_min`` (0.7).

    Continuous error (deg, lower is better): mean ``|half-differential error|``
    in the late window (>= ``late_ms`` = 300 ms after onset: what is left when
    humans have converged) plus the shortfall ``max(0, a_min_deg - A)`` of the
    initial bias. A static model stuck on the vector average scores about 44
    (residual); one that is right from the start scores about ``a_min_deg``.
    """
    c = {**criteria["common"], **criteria["diamonds"]}
    pairs: dict[int, dict[str, Any]] = {}
    for name, data in readouts.items():
        stim = data["stimulus"]
        key = int(round(_truth(stim))) % 360
        pairs.setdefault(key, {})[_handedness(stim)] = (name, data)
    errs_cw, errs_ccw = [], []
    t = None
    used = []
    for key in sorted(pairs):
        pair = pairs[key]
        if set(pair) != {"cw", "ccw"}:
            raise ValueError(f"diamonds: direction {key} deg needs a CW and a CCW stimulus; got {sorted(pair)}")
        (n_cw, d_cw), (n_ccw, d_ccw) = pair["cw"], pair["ccw"]
        s = []
        for name, data in ((n_cw, d_cw), (n_ccw, d_ccw)):
            va = _lookup(data["stimulus"], ("vector_average_direction_deg",))
            if va is None:
                raise ValueError(f"stimulus {name!r}: attributes lack vector_average_direction_deg")
            s.append(np.sign(wrap_deg(float(va) - _truth(data["stimulus"]))))
        if s[0] == 0 or s[0] != -s[1]:
            raise ValueError(
                f"diamonds {n_cw!r}/{n_ccw!r}: the vector averages must lie on opposite sides of the truth"
            )
        if t is None:
            t = d_cw["t_ms"]
        if d_cw["t_ms"].shape != t.shape or d_ccw["t_ms"].shape != t.shape:
            raise ValueError(f"diamonds {n_cw!r}/{n_ccw!r}: readouts differ in length")
        # Orient each pair by its own CW sign so every direction counts toward the VA.
        errs_cw.append(s[0] * d_cw["direction_error_deg"])
        errs_ccw.append(s[0] * d_ccw["direction_error_deg"])
        used.append((n_cw, n_ccw))
    hd = nanmean_quiet(half_differential_error(np.array(errs_cw), np.array(errs_ccw)), axis=0)
    fit_row, sel = _fit_curve("diamonds", model, "half_differential", "half_differential", t, hd,
                              criteria["common"], literature)
    dec = _decay_checks(sel, c)
    t_on = fit_row["t_onset_ms"]
    late = _late_abs(hd, t, t_on, c)
    A = dec["A"]
    shortfall = max(0.0, c["a_min_deg"] - A) if np.isfinite(A) else c["a_min_deg"]
    error = late + shortfall if np.isfinite(late) else float("nan")
    passed = all(dec["checks"].values())
    details = {
        "rule": "half-differential error toward the vector average decays: A>=a_min, |B|<=b_max, "
                "tau in range, R2>=r2_min",
        "pairs": used, "n_directions": len(used), "t_onset_ms": t_on, "late_abs_error_deg": late,
        "initial_bias_shortfall_deg": shortfall, **dec, "thresholds": c,
        "gaussian_score": fit_row["gaussian_score"], "n_lit_params": fit_row["n_lit_params"],
        "gaussian_score_reason": fit_row["gaussian_score_reason"],
    }
    return _row("diamonds", model, passed, error, details), [fit_row]
