"""What every motion criterion shares: stimulus facts, onset and late window, fits, rows.

Conventions (Tlapale et al. 2010, RR-7317 sec. 4; stated in full in
:mod:`psybench.motion.criteria`): time since the response onset, the late window
``late_ms`` after it, the perceived direction over the final window, one or two
exponentials by BIC (Born et al. 2006) and the Gaussian score (RR-7317 eq. 1).
Stimulus parameters are read from the stimulus attributes (or their ``params``),
never decoded from the stimulus name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from psybench.motion.display import wrap_deg
from psybench.motion.fits import fit_exponential_scale_invariant, select_exponential, verdict_fit
from psybench.motion.fits.status import NO_PUBLISHED_SD, reported_fit
from psybench.motion.literature import gaussian_score, literature_params
from psybench.motion.readouts import nanmean_quiet


# ------------------------------------------------------------------- stimulus facts
def _lookup(stim: Mapping[str, Any], keys: Sequence[str]) -> Any:
    params = stim.get("params") or {}
    for key in keys:
        for src in (stim, params):
            if key in src and src[key] is not None:
                return src[key]
    return None


def _stimulus_param(stim: Mapping[str, Any], keys: Sequence[str], what: str) -> float:
    """A stimulus parameter from its attributes or its ``params`` (``keys``, first found)."""
    value = _lookup(stim, keys)
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
    value = str(value).lower() if value is not None else None
    if value not in ("cw", "ccw"):
        raise ValueError(f"stimulus {stim.get('name')!r}: handedness must be 'cw' or 'ccw'; got {value!r}")
    return value


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


def _average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``a`` (n,), ties sharing their mean rank: ``scipy.stats.rankdata(a)``'s values.

    Exact (integers and halves); written out because importing SciPy's stats would lengthen
    every scoring job's start-up for the two rank correlations of the dashed bars.
    """
    order = np.argsort(a, kind="stable")
    first = np.r_[True, a[order][1:] != a[order][:-1]]  # start of each group of ties
    starts = np.r_[np.flatnonzero(first), a.size]  # 0-based, and the end
    group = np.cumsum(first) - 1
    ranks = np.empty(a.size, dtype=np.float64)
    ranks[order] = 0.5 * (starts[group] + starts[group + 1] + 1)
    return ranks


def _spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation; NaN when fewer than 3 finite pairs or a constant series."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        return float("nan")
    rx, ry = _average_ranks(x[ok]), _average_ranks(y[ok])
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
        # NaN and a reason when the fit sits at a bound or leaves a parameter unidentified
        **reported_fit(s, tt, y),
        "r2": s.r2, "rmse": s.rmse, "n": s.n, "converged": s.converged, "aic": s.aic, "bic": s.bic,
        "gaussian_score": gs.score, "n_lit_params": gs.n,
        "gaussian_score_reason": "" if gs.n else NO_PUBLISHED_SD, "selected": sel.selected, "delta_bic": sel.delta_bic,
        "double_A1": d.A1, "double_tau1_ms": d.tau1_ms, "double_A2": d.A2, "double_tau2_ms": d.tau2_ms,
        "double_B": d.B, "double_r2": d.r2, "double_converged": d.converged,
        "si_A": si.A, "si_B": si.B, "si_t0": si.t0, "si_tau": si.tau, "si_r2": si.r2,
        **verdict_fit(sel).columns(),
    }
    return row, sel


def _decay_checks(sel, c: Mapping[str, float]) -> dict[str, Any]:
    """Shared decay rule: starts biased, converges, plausible tau, good fit.

    With two exponentials selected (Born et al. 2006), the initial bias is
    ``A1 + A2``, the asymptote ``B`` and the time constant the slower ``tau2``.
    """
    v = verdict_fit(sel)
    A, B, tau, r2, conv = v.A, v.B, v.tau_ms, v.r2, v.converged
    checks = {
        "fit_converged": bool(conv),
        "initial_bias": bool(np.isfinite(A) and A >= c["a_min_deg"]),
        "converges": bool(np.isfinite(B) and abs(B) <= c["b_max_deg"]),
        "tau_in_range": bool(np.isfinite(tau) and c["tau_min_ms"] <= tau <= c["tau_max_ms"]),
        "fit_quality": bool(np.isfinite(r2) and r2 >= c["r2_min"]),
    }
    return {"A": A, "B": B, "tau_ms": tau, "r2": r2, "selected": sel.selected, "checks": checks}
