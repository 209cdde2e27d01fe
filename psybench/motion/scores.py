"""Score one motion model: route its readouts to the experiments' criteria, collect the tables.

Each readout's stimulus attributes (``experiment``) route it to the criterion of
its experiment (:mod:`psybench.motion.criteria`, Tlapale et al. 2010, RR-7317
Table 1); the result is one score row per experiment and one fit row per fitted
curve (RR-7317 sec. 4.2).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.io.tables import write_table
from psybench.motion import EXPERIMENTS
from psybench.motion.criteria import CRITERIA_DEFAULTS, SCORERS, merge_criteria
from psybench.motion.criteria.directions import _column_order, combine_directions, motion_direction
from psybench.motion.fits import VERDICT_FIT_COLUMNS
from psybench.motion.literature import load_literature
from psybench.motion.readout_dynamics import DEFAULT_LAMBDAS_MS, lambda_sensitivity
from psybench.motion.readouts import load_readout

__all__ = [
    "CRITERIA_DEFAULTS",
    "EXPERIMENTS",
    "SCORE_COLUMNS",
    "FIT_COLUMNS",
    "load_model_readouts",
    "lambda_sensitivity_stores",
    "merge_criteria",
    "score_model",
    "score_model_stores",
    "write_scores",
]

SCORE_COLUMNS = ["experiment", "model", "passed", "error", "details"]
FIT_COLUMNS = [
    "experiment", "model", "curve", "family", "t_onset_ms",
    # NaN with fit_reason when the fit sits at a bound or leaves a parameter unidentified
    # (psybench.motion.fits.status); ar1_at_cap: the SEs hold only at the autocorrelation cap
    "A", "tau_ms", "B", "se_A", "se_tau", "se_B", "fit_reason", "ar1_phi", "ar1_at_cap",
    "r2", "rmse", "n", "converged", "aic", "bic",
    # gaussian_score (RR-7317 eq. 1) is NaN with gaussian_score_reason "no published SD" when none exists
    "gaussian_score", "n_lit_params", "gaussian_score_reason", "selected", "delta_bic",
    "double_A1", "double_tau1_ms", "double_A2", "double_tau2_ms", "double_B", "double_r2", "double_converged",
    "si_A", "si_B", "si_t0", "si_tau", "si_r2", "direction_deg",
    *VERDICT_FIT_COLUMNS,  # the fit the verdict uses (one or two exponentials by BIC)
]


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
        As returned by :func:`psybench.motion.literature.load_literature`.

    Returns
    -------
    scores : DataFrame
        Columns :data:`SCORE_COLUMNS` (``details`` a dict), one row per experiment
        present, in the order of :data:`EXPERIMENTS`; then ``n_directions``,
        ``passed_dir{DDD}`` and ``error_dir{DDD}`` per motion direction (the
        experiment is scored at each direction separately and ``passed`` only if
        it passes at every one; ``error`` is the largest, see
        :func:`psybench.motion.criteria.directions.combine_directions`), and
        ``integration_passed``, ``integration_error`` (grating size only: the
        separately reported growth of the integration area with time).
    fits : DataFrame
        Columns :data:`FIT_COLUMNS`, one row per fitted curve and direction.
    """
    crit = merge_criteria(criteria)
    groups: dict[str, dict[float, dict[str, Any]]] = {}
    for name, data in readouts.items():
        data = _as_readout(name, data)
        exp = data["stimulus"].get("experiment")
        if exp not in SCORERS:
            raise ValueError(f"stimulus {name!r}: experiment {exp!r} is not one of {list(EXPERIMENTS)}")
        groups.setdefault(exp, {}).setdefault(motion_direction(data["stimulus"]), {})[name] = data
    rows, fits = [], []
    for exp in EXPERIMENTS:
        if exp not in groups:
            continue
        per_direction = []
        for direction in sorted(groups[exp]):
            row, fit_rows = SCORERS[exp](model, groups[exp][direction], crit, literature)
            per_direction.append((direction, row))
            fits.extend({**f, "direction_deg": direction} for f in fit_rows)
        rows.append(combine_directions(per_direction))
    columns = SCORE_COLUMNS + sorted({c for r in rows for c in r} - set(SCORE_COLUMNS), key=_column_order)
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(fits, columns=FIT_COLUMNS)


def load_model_readouts(readout_paths: Sequence[str | os.PathLike]) -> tuple[str, dict[str, dict[str, Any]]]:
    """One model's readout stores, loaded once (:func:`psybench.motion.readouts.load_readout`).

    Returns
    -------
    model : str
        The stores' ``model.name`` attribute ("" if they have none).
    readouts : dict
        Stimulus name (its ``stimulus.name``, else the store's name) -> readout dict.

    Raises
    ------
    ValueError
        If the stores belong to several models.
    """
    readouts, models = {}, set()
    for p in readout_paths:
        data = load_readout(p)
        readouts[data["stimulus"].get("name") or Path(p).name.removesuffix(".zarr")] = data
        models.add(str((data.get("model") or {}).get("name", "")))
    if len(models) != 1:
        raise ValueError(f"readout stores belong to several models {sorted(models)}; score one model at a time")
    return models.pop(), readouts


def write_scores(scores: pd.DataFrame, fits: pd.DataFrame, scores_out: str | os.PathLike,
                 fits_out: str | os.PathLike) -> tuple[Path, Path]:
    """Write :func:`score_model`'s two tables (``details`` as a JSON string)."""
    scores = scores.copy()
    scores["details"] = scores["details"].map(lambda d: json.dumps(d, sort_keys=True))
    return write_table(scores, scores_out), write_table(fits, fits_out)


def score_model_stores(
    readout_paths: Sequence[str | os.PathLike],
    scores_out: str | os.PathLike,
    fits_out: str | os.PathLike,
    *,
    criteria: Mapping[str, Any] | None = None,
    literature_path: str | os.PathLike | None = None,
    sensitivity_out: tuple[str | os.PathLike, str | os.PathLike] | None = None,
) -> tuple[Path, Path]:
    """Score one model's readout stores and write its score and fit tables.

    The model name is read from the stores' ``model.name`` attribute (all stores
    must agree). ``scores_out`` gets columns ``experiment, model, passed, error,
    details`` with ``details`` a JSON string; ``fits_out`` the fits table.
    ``sensitivity_out`` (verdicts, fits), if given, also gets the two tables of
    :func:`lambda_sensitivity_stores` from the same
    readouts, loaded once, with these scores as its verdicts at the readouts' own
    lambda (that lambda scored once).
    """
    stored_name, readouts = load_model_readouts(readout_paths)
    model = stored_name or Path(readout_paths[0]).parent.name
    literature = load_literature(literature_path) if literature_path else None
    scores, fits = score_model(model, readouts, criteria=criteria, literature=literature)
    if sensitivity_out is not None:
        verdicts, lambda_fits = lambda_sensitivity(
            stored_name, readouts, score_model, criteria=criteria, literature=literature,
            reference_scores=(scores, fits) if stored_name == model else None,
        )
        write_table(verdicts, sensitivity_out[0])
        write_table(lambda_fits, sensitivity_out[1])
    return write_scores(scores, fits, scores_out, fits_out)


def lambda_sensitivity_stores(
    readout_paths: Sequence[str | os.PathLike],
    verdicts_out: str | os.PathLike,
    fits_out: str | os.PathLike,
    *,
    lambdas_ms: Sequence[float] = DEFAULT_LAMBDAS_MS,
    criteria: Mapping[str, Any] | None = None,
    literature_path: str | os.PathLike | None = None,
) -> tuple[Path, Path]:
    """:func:`psybench.motion.readout_dynamics.lambda_sensitivity` of one model's readout stores, written as two tables.

    ``verdicts_out`` gets :data:`psybench.motion.readout_dynamics.SENSITIVITY_COLUMNS`; ``fits_out`` the fits at
    every ``lambda`` (:func:`score_model`'s fits table
    after ``readout`` and ``lambda_ms``). The model name is the stores'
    ``model.name`` (they must agree).
    """
    model, readouts = load_model_readouts(readout_paths)
    literature = load_literature(literature_path) if literature_path else None
    verdicts, fits = lambda_sensitivity(model, readouts, score_model, lambdas_ms=lambdas_ms,
                                        criteria=criteria, literature=literature)
    return write_table(verdicts, verdicts_out), write_table(fits, fits_out)
