"""Generalisation of the motion verdicts: experiments re-run at other contrasts, speeds, frame rates, scales.

A verdict that holds only at the stimuli a model was built on measures the stimulus
set. The generalisation runs re-render the selected experiments with one
nuisance changed at a time (``motion.generalisation``: Michelson contrast, speed in
deg/s, display frame rate, display scale in px/deg), each run with its own display mapping written into its
own stores, and score them with the same criteria (:mod:`psybench.motion.scores`).
They are held out: **no model parameter, criterion or threshold may be tuned on
them.** The main run supplies the baseline level of each nuisance.

Two further rows go past the paper (Wallace, Stone & Masson 2005, J Neurophysiol
93:2279-2293: the diamonds' direction error is larger and slower at low contrast and
at high speed): :func:`dependence_rows`.

Output, :data:`GENERALISATION_COLUMNS`: one row per model x experiment x nuisance x
level, ``passed`` and ``error`` as in Table 1, then ``baseline`` (the main run's level),
``variant`` (the run's name, ``""`` for the baseline), ``A_deg``, ``tau_ms`` (the
fitted initial bias and time constant of a decay criterion), ``details`` (JSON: the
source score table, the directions and the criterion's named ``checks``), then
``verdict_changed`` (the verdict differs from the same model's baseline cell, pass or
fail) and ``cause`` (what the data show decided it,
:mod:`psybench.motion.generalisation_changes`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.io.tables import read_csv_checked, write_table
from psybench.motion.criteria import CRITERIA_DEFAULTS, merge_criteria
from psybench.motion.generalisation_changes import CHANGE_COLUMNS, verdict_changes
from psybench.motion.generalisation_set import NUISANCES, baseline_level, generalisation_variants

__all__ = [
    "DEPENDENCE",
    "GENERALISATION_COLUMNS",
    "NUISANCES",
    "baseline_level",
    "dependence_rows",
    "generalisation_table",
    "generalisation_variants",
    "write_generalisation",
]

GENERALISATION_COLUMNS = ["model", "experiment", "nuisance", "level", "passed", "error",
                          "baseline", "variant", "A_deg", "tau_ms", "details", *CHANGE_COLUMNS]

#: Rows past the paper: experiment name -> (nuisance, sign of d(A, tau)/d(level) in people).
#: Wallace, Stone & Masson 2005: the diamonds' direction error is larger and decays more
#: slowly at low contrast (sign -1 against contrast) and at high speed (sign +1 against speed).
DEPENDENCE: dict[str, tuple[str, int]] = {
    "diamonds_contrast_dependence": ("contrast", -1),
    "diamonds_speed_dependence": ("speed_deg_s", +1),
}

def _fit_value(details: Mapping[str, Any], key: str) -> float:
    value = details.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


def _checks(details: Mapping[str, Any]) -> dict[str, Any]:
    """The criterion's named checks and the direction they were taken at (empty when not recorded)."""
    checks = details.get("checks")
    if not isinstance(checks, Mapping):
        return {}
    direction = details.get("decisive_direction_deg", 0.0)
    return {"checks": dict(checks), "checks_direction_deg": float(direction if direction is not None else 0.0) % 360.0}


def _read_scores(path: str | os.PathLike) -> pd.DataFrame:
    try:
        df = read_csv_checked(path)
    except Exception as exc:
        raise ValueError(f"cannot read score table {path}: {exc}") from exc
    missing = [c for c in ("experiment", "model", "passed", "error", "details") if c not in df.columns]
    if missing:
        raise ValueError(f"score table {path} lacks column(s) {missing}")
    return df


def _baseline_row(row: pd.Series, directions: Sequence[float], path) -> dict[str, Any] | None:
    """The main run's result at the generalisation directions (None when it lacks one of them)."""
    details = json.loads(row["details"])
    by_dir = {float(d["direction_deg"]) % 360.0: d for d in details.get("by_direction", [])}
    if not by_dir:  # a score table of a single-direction run without per-direction details
        by_dir = {0.0: {"passed": bool(row["passed"]), "error": row["error"], **details}}
    wanted = [float(d) % 360.0 for d in directions]
    if any(d not in by_dir for d in wanted):
        return None
    picked = [by_dir[d] for d in wanted]
    errors = [float(p["error"]) if p.get("error") is not None else math.nan for p in picked]
    first = picked[0]
    checks = _checks(details)
    if checks and [checks["checks_direction_deg"]] != wanted:
        checks = {}  # the main run's checks are those of another direction
    return {"passed": all(bool(p["passed"]) for p in picked),
            "error": max(errors) if all(math.isfinite(e) for e in errors) else math.nan,
            "A_deg": _fit_value(first, "A"), "tau_ms": _fit_value(first, "tau_ms"),
            "details": json.dumps({"directions_deg": wanted, "source": str(path), **checks}, sort_keys=True)}


def generalisation_table(
    main_scores: Sequence[str | os.PathLike],
    variant_scores: Mapping[str, Sequence[str | os.PathLike]],
    config: Mapping[str, Any],
) -> pd.DataFrame:
    """The generalisation table: every model's verdicts at every level of every nuisance.

    Parameters
    ----------
    main_scores : sequence of paths
        The main run's per-model score tables (the baseline level).
    variant_scores : mapping
        Variant name (of :func:`generalisation_variants`) -> that run's per-model
        score tables.
    config : mapping
        The validated workflow config (levels, experiments, directions, baselines).

    Returns
    -------
    DataFrame
        Columns :data:`GENERALISATION_COLUMNS`; rows by nuisance, experiment, model,
        level (the baseline among them, ``baseline`` True), then the rows of
        :func:`dependence_rows`. ``A_deg`` and ``tau_ms`` are those of the first
        generalisation direction.
    """
    variants = generalisation_variants(config)
    unknown = sorted(set(variant_scores) - set(variants))
    if unknown:
        raise ValueError(f"generalisation scores for unknown variant(s) {unknown}; expected {sorted(variants)}")
    gen = config["motion"].get("generalisation") or {}
    directions = list(gen.get("directions_deg") or [0.0])
    rows = []
    for nuisance in NUISANCES:
        experiments = list((gen.get(nuisance) or {}).get("experiments") or [])
        if not (gen.get(nuisance) or {}).get("levels"):
            continue
        for path in main_scores:
            df = _read_scores(path)
            for _, r in df[df["experiment"].isin(experiments)].iterrows():
                base = _baseline_row(r, directions, path)
                if base is not None:
                    rows.append({"model": r["model"], "experiment": r["experiment"], "nuisance": nuisance,
                                 "level": baseline_level(config, nuisance, r["experiment"]), "baseline": True,
                                 "variant": "", **base})
        for name, meta in variants.items():
            if meta["nuisance"] != nuisance:
                continue
            for path in variant_scores.get(name, ()):
                df = _read_scores(path)
                for _, r in df[df["experiment"].isin(meta["experiments"])].iterrows():
                    details = json.loads(r["details"])
                    rows.append({"model": r["model"], "experiment": r["experiment"], "nuisance": nuisance,
                                 "level": meta["level"], "passed": bool(r["passed"]), "error": float(r["error"]),
                                 "baseline": False, "variant": name,
                                 "A_deg": _fit_value(details, "A"), "tau_ms": _fit_value(details, "tau_ms"),
                                 "details": json.dumps({"directions_deg": directions, "source": str(path),
                                                        **_checks(details)}, sort_keys=True)})
    table = pd.DataFrame(rows, columns=GENERALISATION_COLUMNS[:-len(CHANGE_COLUMNS)])
    if len(table):
        order = {n: i for i, n in enumerate(NUISANCES)}
        table = table.assign(_n=table["nuisance"].map(order)).sort_values(
            ["_n", "experiment", "model", "level"], kind="stable").drop(columns="_n")
    criteria = merge_criteria(config["motion"].get("criteria"))
    out = pd.concat([table, dependence_rows(table, a_min_deg=criteria["diamonds"]["a_min_deg"])],
                    ignore_index=True)
    out["passed"] = out["passed"].astype(bool)
    out["baseline"] = out["baseline"].astype(bool)
    out = verdict_changes(out, criteria)
    return out[GENERALISATION_COLUMNS]


def dependence_rows(table: pd.DataFrame, *, a_min_deg: float = CRITERIA_DEFAULTS["diamonds"]["a_min_deg"]
                    ) -> pd.DataFrame:
    """Contrast and speed dependence of the diamonds' error (Wallace, Stone & Masson 2005).

    Rule
    ----
    For each model, the diamonds' fitted initial bias ``A`` and time constant
    ``tau`` at every level of the nuisance (baseline included), in increasing
    level. People's error is larger and slower at low contrast and at high
    speed, so between consecutive levels ``A`` and ``tau`` must both fall with
    contrast and both rise with speed (:data:`DEPENDENCE`). **Pass** iff every
    such comparison holds, over at least two levels. A comparison counts as not
    holding when a value is missing (no fit) or when either level shows no
    initial bias toward the vector average (``A < a_min_deg``, the diamonds'
    own threshold: there is no error whose size or speed could be compared).

    Continuous error (graded, in [0, 1]): the fraction of comparisons that do not
    hold; NaN when fewer than two levels exist.

    Returns
    -------
    DataFrame
        Columns :data:`GENERALISATION_COLUMNS`, one row per model and dependence
        (experiment ``diamonds_contrast_dependence`` / ``diamonds_speed_dependence``,
        ``level`` NaN, ``details`` the series and the comparisons).
    """
    rows = []
    for name, (nuisance, sign) in DEPENDENCE.items():
        sub = table[(table["experiment"] == "diamonds") & (table["nuisance"] == nuisance)]
        for model, g in sub.groupby("model", sort=False):
            g = g.sort_values("level")
            levels = g["level"].to_numpy(dtype=float)
            comparisons = []
            biased = g["A_deg"].to_numpy(dtype=float) >= a_min_deg
            for key in ("A_deg", "tau_ms"):
                v = g[key].to_numpy(dtype=float)
                for i in range(len(v) - 1):
                    ok = bool(np.isfinite(v[i]) and np.isfinite(v[i + 1]) and sign * (v[i + 1] - v[i]) > 0
                              and biased[i] and biased[i + 1])
                    comparisons.append({"quantity": key, "from_level": levels[i], "to_level": levels[i + 1],
                                        "holds": ok})
            n = len(comparisons)
            passed = bool(len(levels) >= 2 and all(c["holds"] for c in comparisons))
            error = float(sum(not c["holds"] for c in comparisons) / n) if n else float("nan")
            details = {"rule": f"A and tau {'fall' if sign < 0 else 'rise'} with {nuisance} "
                               "(Wallace, Stone & Masson 2005), A >= a_min_deg at every level",
                       "a_min_deg": a_min_deg,
                       "levels": levels.tolist(),
                       "A_deg": [None if not np.isfinite(x) else float(x) for x in g["A_deg"]],
                       "tau_ms": [None if not np.isfinite(x) else float(x) for x in g["tau_ms"]],
                       "comparisons": comparisons}
            rows.append({"model": model, "experiment": name, "nuisance": nuisance, "level": float("nan"),
                         "passed": passed, "error": error, "baseline": False, "variant": "",
                         "A_deg": float("nan"), "tau_ms": float("nan"),
                         "details": json.dumps(details, sort_keys=True)})
    return pd.DataFrame(rows, columns=GENERALISATION_COLUMNS[:-len(CHANGE_COLUMNS)])


def write_generalisation(
    main_scores: Sequence[str | os.PathLike],
    variant_scores: Mapping[str, Sequence[str | os.PathLike]],
    config: Mapping[str, Any],
    out_csv: str | os.PathLike,
) -> pd.DataFrame:
    """:func:`generalisation_table` written as CSV + Parquet (``results/aggregate/motion_generalisation.csv``)."""
    table = generalisation_table(main_scores, variant_scores, config)
    write_table(table, out_csv)
    return table

