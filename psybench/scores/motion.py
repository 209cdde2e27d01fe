"""Pass/fail criteria and continuous errors of the four motion experiments (RR-7317 Table 1).

Each experiment's criterion is an explicit rule, stated in its function's
docstring with its source and every threshold. The thresholds live in
:data:`CRITERIA_DEFAULTS` and can be overridden from the config
(``motion.criteria``), but the rules are the same for every model: nothing here
knows a model's name, and the thresholds come from the literature, not from any
model's result.

Every criterion returns one row::

    {"experiment", "model", "passed": bool, "error": float (continuous, lower is better),
     "details": dict of the measured quantities and fit parameters}

Inputs are *readouts* (see :mod:`psybench.readouts.motion`): a mapping stimulus
name -> readout data, either a readout-store path or a dict with

``t_ms`` (T,), ``direction_deg`` (T,), ``direction_error_deg`` (T,),
``speed_deg_s`` (T,), ``stimulus`` (the stimulus attributes, with ``truth``).

Conventions shared by all rules
-------------------------------
* Response onset ``t_on``: the first sample at which the direction of ``w`` is
  defined (:func:`psybench.readouts.motion.direction_error` gives NaN before).
  Fits use time since onset, so ``A`` is the bias at the response onset.
* Late window: samples at least ``late_ms`` (300 ms) after onset. Wallace, Stone
  & Masson (2005) report that human pursuit of the diamonds converges to the true
  direction in under 300 ms. If the response is shorter, the last
  ``final_window_ms`` are used.
* Perceived direction: direction of the mean of ``w`` over the last
  ``final_window_ms`` (RR-7317 sec. 4.1: the steady state of the pursuit).
* Fits: :func:`psybench.fits.fit_exponential` (RR-7317 eq. 4), one vs two
  exponentials by BIC (Born et al. 2006), the scale-invariant variant (sec.
  4.2.1), and the Gaussian score (eq. 1) against ``config/literature.yaml``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from psybench.display import wrap_deg
from psybench.fits.exponential import (
    fit_exponential_scale_invariant,
    gaussian_score,
    select_exponential,
)
from psybench.fits.literature import literature_params, load_literature
from psybench.io.tables import write_table
from psybench.readouts.motion import half_differential_error, load_readout, nanmean_quiet

__all__ = [
    "CRITERIA_DEFAULTS",
    "EXPERIMENTS",
    "SCORE_COLUMNS",
    "FIT_COLUMNS",
    "merge_criteria",
    "score_diamonds",
    "score_dashed_bars",
    "score_barberpole",
    "score_grating_size",
    "score_model",
    "score_model_stores",
]

EXPERIMENTS = ("barberpole", "diamonds", "dashed_bars", "grating_size")

#: Thresholds of the criteria. Sources are given per key; override any of them in
#: the config under ``motion.criteria.<section>.<key>``.
CRITERIA_DEFAULTS: dict[str, dict[str, float]] = {
    "common": {
        # Wallace, Stone & Masson 2005: human pursuit of the diamonds converges in < 300 ms.
        "late_ms": 300.0,
        # Window of the perceived (steady-state) direction.
        "final_window_ms": 100.0,
        # Kass & Raftery 1995: Delta BIC > 2 is positive evidence for the larger model.
        "bic_margin": 2.0,
    },
    "diamonds": {
        # Initial bias toward the vector average: the diamonds' vector average is 44 deg
        # off (Masson & Stone 2002, RR-7317 sec. 3.2); requiring a quarter of it (10 deg)
        # separates "starts biased" from "starts right".
        "a_min_deg": 10.0,
        # Converged: final half-differential error within 5 deg of the true direction.
        "b_max_deg": 5.0,
        # Decay time constant in a biological range: above two 10 ms frames (faster than
        # any cortical transition; Pack & Born 2001: ~60 ms in MT) and below 500 ms (humans
        # converge in < 300 ms, Wallace et al. 2005).
        "tau_min_ms": 20.0,
        "tau_max_ms": 500.0,
        # The exponential must explain most of the variance of the time course.
        "r2_min": 0.7,
    },
    "dashed_bars": {
        "a_min_deg": 10.0,
        "b_max_deg": 5.0,
        "tau_min_ms": 20.0,
        "tau_max_ms": 500.0,
        "r2_min": 0.7,
        # Peak error grows with bar length (Lorenceau et al. 1993; Biber & Ilg 2008):
        # Spearman rho(length, peak error) must exceed this.
        "length_rho_min": 0.0,
        # Tiling a long bar helps (Lorenceau et al. 1993; Biber & Ilg 2008):
        # Spearman rho(number of tiles, peak error) must be below this.
        "tiles_rho_max": 0.0,
    },
    "barberpole": {
        # For aspect ratios > 1 the deviation from the grating normal toward the long axis
        # must exceed this fraction of the angle between them; 0.5 = "closer to the long
        # axis than to the grating normal" (RR-7317 sec. 3.3: perceived = long axis).
        "min_fraction_toward_long_axis": 0.5,
        # Deviation toward the long axis must not decrease with aspect ratio (Masson et
        # al. 2000: the 2D component's size depends on the aspect ratio); a decrease
        # smaller than this tolerance (deg) counts as flat.
        "monotonic_tol_deg": 2.0,
    },
    "grating_size": {
        # Early window after the response onset (ms) over which the pursuit displacement
        # is integrated (Barthelemy et al. 2006 measured the early change in eye position).
        "window_ms": 150.0,
        # Growth from the smallest diameter to the peak, relative to the peak, must be at
        # least this ("increases with diameter").
        "growth_min": 0.05,
        # Growth over the last diameter step, relative to the peak, must be at most this
        # ("then saturates or declines").
        "saturation_tol": 0.05,
    },
}

SCORE_COLUMNS = ["experiment", "model", "passed", "error", "details"]
FIT_COLUMNS = [
    "experiment", "model", "curve", "family", "t_onset_ms",
    "A", "tau_ms", "B", "se_A", "se_tau", "se_B", "r2", "rmse", "n", "converged", "aic", "bic",
    "gaussian_score", "n_lit_params", "selected", "delta_bic",
    "double_A1", "double_tau1_ms", "double_A2", "double_tau2_ms", "double_B", "double_r2", "double_converged",
    "si_A", "si_B", "si_t0", "si_tau", "si_r2",
]


# ------------------------------------------------------------------------- config
def merge_criteria(overrides: Mapping[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """:data:`CRITERIA_DEFAULTS` updated with ``overrides`` (``{section: {key: value}}``).

    Raises
    ------
    ValueError
        For an unknown section or key, or a non-numeric value, naming it as
        ``criteria.<section>.<key>``.
    """
    out = copy.deepcopy(CRITERIA_DEFAULTS)
    for section, values in (overrides or {}).items():
        if section not in out:
            raise ValueError(f"criteria.{section}: unknown section; allowed {sorted(out)}")
        if not isinstance(values, Mapping):
            raise ValueError(f"criteria.{section} must be a mapping of thresholds")
        for key, value in values.items():
            if key not in out[section]:
                raise ValueError(f"criteria.{section}.{key}: unknown threshold; allowed {sorted(out[section])}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"criteria.{section}.{key} must be a finite number; got {value!r}")
            out[section][key] = float(value)
    return out


# ------------------------------------------------------------------- stimulus facts
_NAME_PATTERNS = {
    "length": r"len(\d+(?:p\d+)?)",
    "tiles": r"_n(\d+)",
    "aspect": r"_ar(\d+(?:p\d+)?)",
    "diameter": r"_d(\d+(?:p\d+)?)",
}


def _lookup(stim: Mapping[str, Any], keys: Sequence[str]) -> Any:
    params = stim.get("params") or {}
    for key in keys:
        for src in (stim, params):
            if key in src and src[key] is not None:
                return src[key]
    return None


def _number(stim: Mapping[str, Any], keys: Sequence[str], pattern: str, what: str) -> float:
    """A stimulus parameter from its attributes (``keys``), else from its name."""
    value = _lookup(stim, keys)
    if value is None:
        m = re.search(_NAME_PATTERNS[pattern], str(stim.get("name", "")))
        if m:
            value = m.group(1).replace("p", ".")
    if value is None:
        raise ValueError(f"stimulus {stim.get('name')!r}: attributes give no {what} (looked for {list(keys)})")
    return float(value)


def _truth(stim: Mapping[str, Any]) -> float:
    truth = stim.get("truth") or {}
    if "direction_deg" not in truth:
        raise ValueError(f"stimulus {stim.get('name')!r}: attributes lack truth.direction_deg")
    return float(truth["direction_deg"])


def _axis_toward(axis_deg: float, reference_deg: float) -> float:
    """The direction along an axis (``axis`` or ``axis + 180``) within 90 deg of ``reference``."""
    d = float(wrap_deg(axis_deg - reference_deg))
    return float(wrap_deg(axis_deg + 180.0)) if abs(d) > 90.0 else float(wrap_deg(axis_deg))


def _handedness(stim: Mapping[str, Any]) -> str:
    value = _lookup(stim, ("handedness", "rotation", "chirality"))
    if value is None:
        m = re.search(r"(?:^|_)(cw|ccw)(?:_|$)", str(stim.get("name", "")))
        value = m.group(1) if m else None
    value = str(value).lower() if value is not None else None
    if value not in ("cw", "ccw"):
        raise ValueError(f"stimulus {stim.get('name')!r}: handedness must be 'cw' or 'ccw'; got {value!r}")
    return value


# -------------------------------------------------------------------- readout data
def _as_readout(name: str, data: Any) -> dict[str, Any]:
    if isinstance(data, (str, os.PathLike)):
        data = load_readout(data)
    for key in ("t_ms", "direction_error_deg", "stimulus"):
        if key not in data:
            raise ValueError(f"readout of {name!r} lacks {key!r}")
    out = dict(data)
    out["t_ms"] = np.asarray(data["t_ms"], dtype=np.float64)
    out["direction_error_deg"] = np.asarray(data["direction_error_deg"], dtype=np.float64)
    n = out["t_ms"].shape[0]
    if out["direction_error_deg"].shape != (n,):
        raise ValueError(f"readout of {name!r}: direction_error_deg has shape "
                         f"{out['direction_error_deg'].shape}, expected ({n},)")
    for key in ("direction_deg", "speed_deg_s"):
        if key in data:
            out[key] = np.asarray(data[key], dtype=np.float64)
    stim = dict(data["stimulus"])
    stim.setdefault("name", name)
    out["stimulus"] = stim
    return out


def _onset(err: np.ndarray, t: np.ndarray) -> float:
    ok = np.isfinite(err)
    return float(t[ok][0]) if ok.any() else float("nan")


def _late_mask(t: np.ndarray, t_on: float, c: Mapping[str, float]) -> np.ndarray:
    mask = t - t_on >= c["late_ms"]
    if not mask.any():
        mask = t >= t[-1] - c["final_window_ms"] + 1e-9
    return mask


def _late_abs(err: np.ndarray, t: np.ndarray, t_on: float, c: Mapping[str, float]) -> float:
    if not math.isfinite(t_on):
        return float("nan")
    return float(nanmean_quiet(np.abs(err[_late_mask(t, t_on, c)])))


def _need(data: Mapping[str, Any], key: str, name: str) -> np.ndarray:
    if key not in data:
        raise ValueError(f"readout of {name!r} lacks {key!r}")
    return data[key]


def _perceived(data: Mapping[str, Any], name: str, window_ms: float) -> float:
    """Direction of the mean of w over the final window, from speed and direction."""
    t = data["t_ms"]
    speed = _need(data, "speed_deg_s", name)
    direction = _need(data, "direction_deg", name)
    sel = (t >= t[-1] - window_ms + 1e-9) & np.isfinite(direction)
    if not sel.any():
        return float("nan")
    x = np.sum(speed[sel] * np.cos(np.radians(direction[sel])))
    y = np.sum(speed[sel] * np.sin(np.radians(direction[sel])))
    if x == 0 and y == 0:
        return float("nan")
    return float(np.degrees(np.arctan2(y, x)))


def _spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation; NaN when fewer than 3 finite pairs or a constant series."""
    from scipy.stats import rankdata

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        return float("nan")
    rx, ry = rankdata(x[ok]), rankdata(y[ok])
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float(rx @ rx) * float(ry @ ry))
    return float(rx @ ry / den) if den > 0 else float("nan")


def _f(x: Any) -> Any:
    """JSON-friendly scalar: NaN/inf -> None, numpy -> Python."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(float(x)) else None
    if isinstance(x, Mapping):
        return {str(k): _f(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_f(v) for v in x]
    return x


def _row(experiment: str, model: str, passed: bool, error: float, details: Mapping[str, Any]) -> dict[str, Any]:
    return {"experiment": experiment, "model": model, "passed": bool(passed),
            "error": float(error) if error is not None else float("nan"), "details": _f(dict(details))}


# ---------------------------------------------------------------------- fit rows
def _fit_curve(
    experiment: str, model: str, curve: str, family: str, t: np.ndarray, y: np.ndarray,
    c_common: Mapping[str, float], literature: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], Any]:
    """Fit one time course (time since onset); return the fits-table row and the selection."""
    t_on = _onset(y, t)
    tt = t - t_on
    sel = select_exponential(tt, y, bic_margin=c_common["bic_margin"])
    si = fit_exponential_scale_invariant(tt, y, t0=0.0)
    s, d = sel.single, sel.double
    gs = gaussian_score(s.params(), literature_params(literature, experiment, family))
    row = {
        "experiment": experiment, "model": model, "curve": curve, "family": family, "t_onset_ms": t_on,
        "A": s.A, "tau_ms": s.tau_ms, "B": s.B, "se_A": s.se_A, "se_tau": s.se_tau, "se_B": s.se_B,
        "r2": s.r2, "rmse": s.rmse, "n": s.n, "converged": s.converged, "aic": s.aic, "bic": s.bic,
        "gaussian_score": gs.score, "n_lit_params": gs.n, "selected": sel.selected, "delta_bic": sel.delta_bic,
        "double_A1": d.A1, "double_tau1_ms": d.tau1_ms, "double_A2": d.A2, "double_tau2_ms": d.tau2_ms,
        "double_B": d.B, "double_r2": d.r2, "double_converged": d.converged,
        "si_A": si.A, "si_B": si.B, "si_t0": si.t0, "si_tau": si.tau, "si_r2": si.r2,
    }
    return row, sel


def _decay_checks(sel, c: Mapping[str, float]) -> dict[str, Any]:
    """Shared decay rule: starts biased, converges, plausible tau, good fit.

    With two exponentials selected (Born et al. 2006), the initial bias is
    ``A1 + A2``, the asymptote ``B`` and the time constant the slower ``tau2``.
    """
    s = sel.single
    if sel.selected == "double":
        d = sel.double
        A, B, tau, r2, conv = d.A1 + d.A2, d.B, d.tau2_ms, d.r2, d.converged
    else:
        A, B, tau, r2, conv = s.A, s.B, s.tau_ms, s.r2, s.converged
    checks = {
        "fit_converged": bool(conv),
        "initial_bias": bool(np.isfinite(A) and A >= c["a_min_deg"]),
        "converges": bool(np.isfinite(B) and abs(B) <= c["b_max_deg"]),
        "tau_in_range": bool(np.isfinite(tau) and c["tau_min_ms"] <= tau <= c["tau_max_ms"]),
        "fit_quality": bool(np.isfinite(r2) and r2 >= c["r2_min"]),
    }
    return {"A": A, "B": B, "tau_ms": tau, "r2": r2, "selected": sel.selected, "checks": checks}


# ------------------------------------------------------------------------ diamonds
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
    }
    return _row("diamonds", model, passed, error, details), [fit_row]


# --------------------------------------------------------------------- dashed bars
def _oriented_bar_error(name: str, data: Mapping[str, Any]) -> tuple[np.ndarray, str]:
    """Direction error signed toward the bar normal (the 1D, aperture-problem direction)."""
    stim = data["stimulus"]
    truth = _truth(stim)
    normal = _lookup(stim, ("normal_direction_deg", "bar_normal_deg", "one_d_direction_deg",
                            "vector_average_direction_deg", "grating_normal_deg"))
    err = data["direction_error_deg"]
    if normal is None:
        return np.abs(err), "abs (stimulus gives no normal direction)"
    s = np.sign(wrap_deg(_axis_toward(float(normal), truth) - truth))
    if s == 0:
        return np.abs(err), "abs (normal equals the true direction)"
    return s * err, "toward the bar normal"


def score_dashed_bars(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Tilted bars and dashed bars (Lorenceau et al. 1993; Biber & Ilg 2008; Born et al. 2006).

    Rule
    ----
    For each stimulus, the direction error is signed so that positive points
    toward the bar normal (the 1D motion); its peak is the maximum of that
    oriented error over time. **Pass** iff all of:

    (a1) decay: on the longest tilted bar (family ``bar``), the oriented error,
         fitted by one or two exponentials (Born et al. 2006: at most two),
         starts biased (``A >= a_min_deg``, 10), converges (``|B| <= b_max_deg``, 5),
         with ``tau`` in [``tau_min_ms``, ``tau_max_ms``] (20-500 ms; monkeys align
         ~300 ms after onset, Pack & Born 2001 / Born et al. 2006) and
         ``R^2 >= r2_min``; and every tilted bar converges (``|B| <= b_max_deg``);
    (a2) length: Spearman rho(length, peak error) > ``length_rho_min`` (0): "as the
         bar length is increased, it becomes more complicated to recover its true
         direction" (RR-7317 sec. 3.2);
    (b)  tiling: over the dashed bars (family ``dashed_bar``, fixed total length),
         Spearman rho(number of tiles, peak error) < ``tiles_rho_max`` (0): "it is
         easier to pursue one long bar if it is tiled into several sub bars"
         (Lorenceau et al. 1993; Biber & Ilg 2008). RR-7317 suggests the slope of
         the *peak* error against length and tiles, hence peaks in (a2) and (b).

    Continuous error (deg): mean over all bar and dashed-bar stimuli of the late
    ``|direction error|`` (>= 300 ms after onset) plus the shortfall
    ``max(0, a_min_deg - A)`` of the longest bar's initial bias.
    """
    c = {**criteria["common"], **criteria["dashed_bars"]}
    bars, dashed = [], []
    fit_rows, late = [], []
    for name, data in readouts.items():
        stim = data["stimulus"]
        fam = stim.get("family")
        oriented, how = _oriented_bar_error(name, data)
        peak = float(np.nanmax(oriented)) if np.isfinite(oriented).any() else float("nan")
        t = data["t_ms"]
        t_on = _onset(oriented, t)
        late.append(_late_abs(data["direction_error_deg"], t, t_on, c))
        if fam == "bar":
            length = _number(stim, ("length_deg", "bar_length_deg", "length"), "length", "bar length")
            fit_row, sel = _fit_curve("dashed_bars", model, name, "bar", t, oriented, criteria["common"], literature)
            fit_rows.append(fit_row)
            bars.append({"stimulus": name, "length_deg": length, "peak_deg": peak, "orientation": how,
                         "decay": _decay_checks(sel, c)})
        elif fam == "dashed_bar":
            n_tiles = _number(stim, ("n_tiles", "tiles", "n_segments"), "tiles", "tile count")
            fit_row, _ = _fit_curve("dashed_bars", model, name, "dashed_bar", t, oriented, criteria["common"],
                                    literature)
            fit_rows.append(fit_row)
            dashed.append({"stimulus": name, "n_tiles": n_tiles, "peak_deg": peak, "orientation": how})
        else:
            raise ValueError(f"stimulus {name!r}: family {fam!r} is not 'bar' or 'dashed_bar'")
    if len(bars) < 2 or len(dashed) < 2:
        raise ValueError(f"dashed_bars needs >= 2 tilted bars and >= 2 dashed bars; got {len(bars)} and {len(dashed)}")
    bars.sort(key=lambda b: b["length_deg"])
    dashed.sort(key=lambda b: b["n_tiles"])
    longest = bars[-1]["decay"]
    all_converge = all(b["decay"]["checks"]["converges"] for b in bars)
    decay_ok = all(longest["checks"].values()) and all_converge
    rho_len = _spearman([b["length_deg"] for b in bars], [b["peak_deg"] for b in bars])
    rho_tiles = _spearman([b["n_tiles"] for b in dashed], [b["peak_deg"] for b in dashed])
    length_ok = bool(np.isfinite(rho_len) and rho_len > c["length_rho_min"])
    tiles_ok = bool(np.isfinite(rho_tiles) and rho_tiles < c["tiles_rho_max"])
    A = longest["A"]
    shortfall = max(0.0, c["a_min_deg"] - A) if np.isfinite(A) else c["a_min_deg"]
    late_mean = float(nanmean_quiet(np.array(late)))
    error = late_mean + shortfall if np.isfinite(late_mean) else float("nan")
    details = {
        "rule": "(a1) longest bar's error decays (A>=a_min, |B|<=b_max, tau in range, R2) and all bars converge; "
                "(a2) Spearman(length, peak) > length_rho_min; (b) Spearman(tiles, peak) < tiles_rho_max",
        "checks": {"decay": bool(decay_ok), "all_bars_converge": bool(all_converge),
                   "peak_grows_with_length": length_ok, "tiling_reduces_peak": tiles_ok},
        "rho_length_peak": rho_len, "rho_tiles_peak": rho_tiles,
        "bars": bars, "dashed_bars": dashed, "late_abs_error_deg": late_mean,
        "initial_bias_shortfall_deg": shortfall, "thresholds": c,
    }
    return _row("dashed_bars", model, decay_ok and length_ok and tiles_ok, error, details), fit_rows


# ---------------------------------------------------------------------- barberpole
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
        ar = _number(stim, ("aspect_ratio", "ar"), "aspect", "aspect ratio")
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


# -------------------------------------------------------------------- grating size
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
        d = _number(data["stimulus"], ("diameter_deg", "diameter", "aperture_diameter_deg"), "diameter", "diameter")
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


# --------------------------------------------------------------------------- model
_SCORERS = {
    "barberpole": score_barberpole,
    "diamonds": score_diamonds,
    "dashed_bars": score_dashed_bars,
    "grating_size": score_grating_size,
}


def score_model(
    model: str,
    readouts: Mapping[str, Any],
    *,
    criteria: Mapping[str, Any] | None = None,
    literature: Mapping[str, Any] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score one model on every experiment present in its readouts.

    Parameters
    ----------
    model : str
        Only copied into the rows; no rule depends on it.
    readouts : mapping of str to (path or dict)
        Stimulus name -> readout store path or readout dict (see module docstring);
        each stimulus's ``experiment`` attribute routes it to its criterion.
    criteria : mapping, optional
        Overrides of :data:`CRITERIA_DEFAULTS` (``{section: {key: value}}``).
    literature : mapping, optional
        As returned by :func:`psybench.fits.load_literature`.

    Returns
    -------
    scores : DataFrame
        Columns :data:`SCORE_COLUMNS` (``details`` a dict), one row per experiment
        present, in the order of :data:`EXPERIMENTS`.
    fits : DataFrame
        Columns :data:`FIT_COLUMNS`, one row per fitted curve.
    """
    crit = merge_criteria(criteria)
    groups: dict[str, dict[str, Any]] = {}
    for name, data in readouts.items():
        data = _as_readout(name, data)
        exp = data["stimulus"].get("experiment")
        if exp not in _SCORERS:
            raise ValueError(f"stimulus {name!r}: experiment {exp!r} is not one of {list(EXPERIMENTS)}")
        groups.setdefault(exp, {})[name] = data
    rows, fits = [], []
    for exp in EXPERIMENTS:
        if exp in groups:
            row, fit_rows = _SCORERS[exp](model, groups[exp], crit, literature)
            rows.append(row)
            fits.extend(fit_rows)
    return pd.DataFrame(rows, columns=SCORE_COLUMNS), pd.DataFrame(fits, columns=FIT_COLUMNS)


def score_model_stores(
    readout_paths: Sequence[str | os.PathLike],
    scores_out: str | os.PathLike,
    fits_out: str | os.PathLike,
    *,
    criteria: Mapping[str, Any] | None = None,
    literature_path: str | os.PathLike | None = None,
) -> tuple[Path, Path]:
    """Score one model's readout stores and write its score and fit tables.

    The model name is read from the stores' ``model.name`` attribute (all stores
    must agree). ``scores_out`` gets columns ``experiment, model, passed, error,
    details`` with ``details`` a JSON string; ``fits_out`` the fits table.
    """
    readouts, models = {}, set()
    for p in readout_paths:
        data = load_readout(p)
        name = data["stimulus"].get("name") or Path(p).name.removesuffix(".zarr")
        readouts[name] = data
        models.add(str((data.get("model") or {}).get("name", "")))
    if len(models) != 1:
        raise ValueError(f"readout stores belong to several models {sorted(models)}; score one model at a time")
    model = models.pop()
    if not model:
        model = Path(readout_paths[0]).parent.name
    literature = load_literature(literature_path) if literature_path else None
    scores, fits = score_model(model, readouts, criteria=criteria, literature=literature)
    scores = scores.copy()
    scores["details"] = scores["details"].map(lambda d: json.dumps(d, sort_keys=True))
    return write_table(scores, scores_out), write_table(fits, fits_out)
