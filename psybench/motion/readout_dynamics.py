"""How much of a fitted time course is the model's, and how much the pursuit readout's.

The pursuit readout of RR-7317 eq. 3 (Tlapale et al. 2010, sec. 4.1) low-pass
filters the domain-mean flow ``vbar(t)`` with the time constant ``lambda``
(:data:`psybench.motion.readouts.DEFAULT_LAMBDA_MS`, 50 ms; the paper gives no
value). A direction error that the model itself corrects within 10 ms is then
read out with a time constant near ``lambda``: the fitted ``tau`` measures the
readout, not the model, and a decay verdict with a lower bound on ``tau`` (20 ms,
Wallace, Stone & Masson 2005) can pass for the wrong reason. Two remedies, both
from the ``mean_flow`` every readout store already holds:

* :func:`direct_readout` / :func:`fit_mean_flow_direction`: the direction of
  ``vbar(t)`` itself, before the pursuit filter (the model's own dynamics);
* :func:`lambda_sensitivity`: every verdict recomputed at several ``lambda``
  (default 25, 50 and 100 ms) and without the filter, so a verdict that hangs
  on the choice of ``lambda`` shows it.

Readouts here are the dicts of :func:`psybench.motion.readouts.load_readout`
(``t_ms``, ``mean_flow``, ``frame_ms``, ``display``, ``stimulus``, ``readout``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from psybench.motion.display import Display, direction_deg
from psybench.motion.fits import Selection, select_exponential
from psybench.motion.readouts import (
    DEFAULT_MIN_SPEED_FRACTION,
    direction_error,
    pursuit,
    speed_threshold,
)

__all__ = [
    "DEFAULT_LAMBDAS_MS",
    "LambdaSensitivity",
    "SENSITIVITY_COLUMNS",
    "direct_readout",
    "fit_mean_flow_direction",
    "lambda_sensitivity",
    "repursue",
    "sensitivity_summary",
    "SUMMARY_COLUMNS",
]

#: Pursuit constants of the sensitivity report: half, once and twice the default.
DEFAULT_LAMBDAS_MS = (25.0, 50.0, 100.0)
#: Columns of :func:`lambda_sensitivity`; ``lambda_ms`` 0 is the unfiltered mean flow.
SENSITIVITY_COLUMNS = ["experiment", "model", "readout", "lambda_ms", "passed", "error", "A", "tau_ms", "B",
                       "selected", "verdict_differs"]


def _velocity_readout(data: Mapping[str, Any], w: np.ndarray, *, min_speed_fraction: float) -> dict[str, Any]:
    """``data`` with direction, direction error and speed recomputed from the velocity ``w`` (T, 2)."""
    stim = data.get("stimulus") or {}
    truth = (stim.get("truth") or {}).get("direction_deg")
    if truth is None:
        raise ValueError(f"readout of {stim.get('name')!r} lacks stimulus truth.direction_deg")
    thr = speed_threshold(w, min_speed_fraction=min_speed_fraction)
    speed_px = np.hypot(w[:, 0], w[:, 1])
    out = dict(data)
    out["direction_error_deg"] = direction_error(w, float(truth), min_speed=thr)
    out["direction_deg"] = np.where(speed_px > thr, direction_deg(w[:, 0], w[:, 1]), np.nan)
    if not data.get("display"):  # the speed in deg/s needs the run's display, never an assumed one
        raise ValueError(f"readout of {stim.get('name')!r} lacks its display (px_per_deg, frames_per_s)")
    display = Display.from_config(data["display"])
    out["speed_deg_s"] = speed_px * display.frames_per_s / display.px_per_deg
    return out


def _same_readout(variant: Mapping[str, Any], data: Mapping[str, Any]) -> bool:
    """Whether :func:`repursue` gave ``data`` back: every key it sets equal (NaN equal to NaN)."""
    for key in ("pursuit", "direction_deg", "direction_error_deg", "speed_deg_s"):
        if key in variant and not (key in data and np.array_equal(variant[key], data[key], equal_nan=True)):
            return False
    return variant.get("readout") == data.get("readout")


def _mean_flow(data: Mapping[str, Any]) -> np.ndarray:
    if "mean_flow" not in data:
        name = (data.get("stimulus") or {}).get("name")
        raise ValueError(f"readout of {name!r} lacks 'mean_flow' (written by psybench.motion.readouts)")
    v = np.asarray(data["mean_flow"], dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 2:
        raise ValueError(f"mean_flow must have shape (T, 2); got {v.shape}")
    return v


def _min_speed_fraction(data: Mapping[str, Any]) -> float:
    return float((data.get("readout") or {}).get("min_speed_fraction", DEFAULT_MIN_SPEED_FRACTION))


def direct_readout(data: Mapping[str, Any]) -> dict[str, Any]:
    """The readout without the pursuit filter: direction and speed of the mean flow ``vbar(t)``.

    Parameters
    ----------
    data : mapping
        A readout dict (:func:`psybench.motion.readouts.load_readout`).

    Returns
    -------
    dict
        A copy with ``direction_deg``, ``direction_error_deg`` (T,) and
        ``speed_deg_s`` (T,) of ``vbar`` (same relative speed threshold as the
        pursuit readout), and ``readout["lambda_ms"] = 0``. It can be scored by
        :func:`psybench.motion.scores.score_model` like any readout.
    """
    out = _velocity_readout(data, _mean_flow(data), min_speed_fraction=_min_speed_fraction(data))
    out["readout"] = {**(data.get("readout") or {}), "lambda_ms": 0.0, "kind": "domain-mean flow, no pursuit filter"}
    return out


def repursue(data: Mapping[str, Any], lambda_ms: float) -> dict[str, Any]:
    """The readout recomputed from its mean flow with another pursuit constant (RR-7317 eq. 3).

    ``lambda_ms == 0`` gives :func:`direct_readout`.
    """
    if lambda_ms == 0:
        return direct_readout(data)
    frame_ms = float(data.get("frame_ms") or np.diff(np.asarray(data["t_ms"], dtype=np.float64)[:2])[0])
    w = pursuit(_mean_flow(data), frame_ms=frame_ms, lambda_ms=lambda_ms)
    out = _velocity_readout(data, w, min_speed_fraction=_min_speed_fraction(data))
    out["pursuit"] = w
    out["readout"] = {**(data.get("readout") or {}), "lambda_ms": float(lambda_ms)}
    return out


def fit_mean_flow_direction(
    mean_flow, t_ms, true_direction_deg: float, *, min_speed_fraction: float = DEFAULT_MIN_SPEED_FRACTION,
    bic_margin: float = 2.0,
) -> Selection:
    """Fit the direction error of the mean flow itself (the model's dynamics, no readout filter).

    ``e(t) = wrap(direction(vbar(t)) - truth)`` from its first defined sample
    (time since that onset), fitted by one or two exponentials chosen by BIC
    (:func:`psybench.motion.fits.select_exponential`, RR-7317 eq. 4; Born et al.
    2006).

    Parameters
    ----------
    mean_flow : array_like, shape (T, 2)
        Domain-mean flow ``(u, v)`` (image coordinates, v downward), any unit.
    t_ms : array_like, shape (T,)
        Sample times (ms).
    true_direction_deg : float
        Direction of the stimulus (deg, visual y up).
    min_speed_fraction : float
        Relative speed threshold below which the direction is undefined.
    bic_margin : float
        As :func:`psybench.motion.fits.select_exponential`.

    Returns
    -------
    Selection
        Times are relative to the onset of the error curve.
    """
    v = np.asarray(mean_flow, dtype=np.float64)
    t = np.asarray(t_ms, dtype=np.float64)
    if v.shape != (t.size, 2):
        raise ValueError(f"mean_flow must have shape ({t.size}, 2) to match t_ms; got {v.shape}")
    thr = speed_threshold(v, min_speed_fraction=min_speed_fraction)
    err = direction_error(v, true_direction_deg, min_speed=thr)
    ok = np.isfinite(err)
    t_on = float(t[ok][0]) if ok.any() else 0.0
    return select_exponential(t - t_on, err, bic_margin=bic_margin)


class LambdaSensitivity(NamedTuple):
    """:func:`lambda_sensitivity`'s two tables."""

    verdicts: pd.DataFrame  # SENSITIVITY_COLUMNS, one row per experiment and lambda
    fits: pd.DataFrame      # the scorer's fits table at every lambda, with readout and lambda_ms first


def lambda_sensitivity(
    model: str,
    readouts: Mapping[str, Mapping[str, Any]],
    score: Callable[..., tuple[pd.DataFrame, pd.DataFrame]],
    *,
    lambdas_ms: Sequence[float] = DEFAULT_LAMBDAS_MS,
    reference_lambda_ms: float | None = None,
    reference_scores: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    **score_kwargs: Any,
) -> LambdaSensitivity:
    """Every verdict and fit at several pursuit constants and on the unfiltered mean flow.

    Parameters
    ----------
    model : str
    readouts : mapping of str to readout dict
        One model's readouts (:func:`psybench.motion.readouts.load_readout`).
    score : callable
        ``score(model, readouts, **score_kwargs) -> (scores, fits)``, i.e.
        :func:`psybench.motion.scores.score_model` (passed in, so this module
        does not depend on the criteria).
    lambdas_ms : sequence of float
        Pursuit constants (ms); 0 means no filter. The unfiltered readout and
        the reference are always included.
    reference_lambda_ms : float, optional
        The run's own ``lambda`` (default: the readouts' ``readout.lambda_ms``,
        else 50 ms); ``verdict_differs`` compares each verdict with the one at it.
    reference_scores : (DataFrame, DataFrame), optional
        ``score(model, readouts, **score_kwargs)`` of the readouts as given, when
        the caller has it: used, instead of scoring the same curves again, at the
        ``lambda`` whose :func:`repursue` gives every readout back to the bit (its
        own, for a readout store :mod:`psybench.motion.readouts` wrote).
    **score_kwargs
        Passed to ``score`` (``criteria``, ``literature``).

    Returns
    -------
    LambdaSensitivity
        ``verdicts``: columns :data:`SENSITIVITY_COLUMNS`, one row per
        experiment and ``lambda_ms`` (ascending; ``readout`` is ``"mean_flow"``
        at 0, else ``"pursuit"``); ``A``, ``tau_ms``, ``B`` and ``selected`` are
        the decay fit the verdict read where its details give one (diamonds),
        else NaN. ``fits``: every fitted curve at every ``lambda_ms``, the
        scorer's fits table (``verdict_tau_ms`` etc.) after ``readout`` and
        ``lambda_ms`` columns.
    """
    if reference_lambda_ms is None:
        first = next(iter(readouts.values()), {})
        reference_lambda_ms = float((first.get("readout") or {}).get("lambda_ms", 50.0))
    grid = sorted({0.0, float(reference_lambda_ms), *(float(x) for x in lambdas_ms)})
    if any(x < 0 for x in grid):
        raise ValueError(f"lambdas_ms must be >= 0; got {list(lambdas_ms)}")
    rows, fit_tables = [], []
    for lam in grid:
        variant = {name: repursue(data, lam) for name, data in readouts.items()}
        if reference_scores is not None and all(_same_readout(variant[k], readouts[k]) for k in readouts):
            scores, fits = reference_scores  # these very readouts: scored already
        else:
            scores, fits = score(model, variant, **score_kwargs)
        kind = "mean_flow" if lam == 0 else "pursuit"
        fit_tables.append(fits.assign(readout=kind, lambda_ms=lam))
        for _, r in scores.iterrows():
            d = r["details"] if isinstance(r["details"], Mapping) else {}
            rows.append({
                "experiment": r["experiment"], "model": model, "readout": kind,
                "lambda_ms": lam, "passed": bool(r["passed"]), "error": float(r["error"]),
                "A": d.get("A"), "tau_ms": d.get("tau_ms"), "B": d.get("B"), "selected": d.get("selected"),
            })
    out = pd.DataFrame(rows, columns=SENSITIVITY_COLUMNS[:-1])
    ref = out[out["lambda_ms"] == float(reference_lambda_ms)].set_index("experiment")["passed"]
    out["verdict_differs"] = out["passed"] != out["experiment"].map(ref)
    for col in ("A", "tau_ms", "B"):
        out[col] = pd.to_numeric(out[col], errors="coerce")
    fits = pd.concat(fit_tables, ignore_index=True) if fit_tables else pd.DataFrame()
    lead = ["readout", "lambda_ms"]
    fits = fits[lead + [c for c in fits.columns if c not in lead]]
    return LambdaSensitivity(out[SENSITIVITY_COLUMNS].reset_index(drop=True), fits)


#: Columns of :func:`sensitivity_summary`.
SUMMARY_COLUMNS = ["experiment", "model", "passed_reference", "passed_direct", "lambda_robust", "tau_direct_ms",
                   "lambdas_ms"]


def sensitivity_summary(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per experiment: does its verdict depend on the readout's dynamics?

    Parameters
    ----------
    verdicts : DataFrame
        ``LambdaSensitivity.verdicts``.

    Returns
    -------
    DataFrame
        Columns :data:`SUMMARY_COLUMNS`: the verdict at the reference
        ``lambda`` (``passed_reference``), on the unfiltered mean flow
        (``passed_direct``), ``lambda_robust`` (the same verdict at every
        ``lambda`` of the grid, 0 included), the verdict fit's ``tau`` of the
        mean flow (NaN where the details give none) and the grid as text.
    """
    rows = []
    for (exp, model), g in verdicts.groupby(["experiment", "model"], sort=False):
        direct = g[g["lambda_ms"] == 0.0]
        rows.append({
            "experiment": exp, "model": model,
            "passed_reference": bool(g.loc[~g["verdict_differs"], "passed"].iloc[0]),
            "passed_direct": bool(direct["passed"].iloc[0]) if len(direct) else None,
            "lambda_robust": bool(g["passed"].nunique() == 1),
            "tau_direct_ms": float(direct["tau_ms"].iloc[0]) if len(direct) else float("nan"),
            "lambdas_ms": " ".join(f"{x:g}" for x in sorted(g["lambda_ms"])),
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
