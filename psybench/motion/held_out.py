"""Held-out verdicts of the bio-inspired motion models: every failing cell, and why.

The benchmark's goal past the paper asks of a bio-inspired model, its parameters fixed before the
generalisation table was computed, that it pass every experiment at every motion
direction (Table 1, ``motion_table1.csv``) and across the generalisation table
(``motion_generalisation.csv``: other contrasts, speeds and frame rates, and the
contrast and speed dependence of the diamonds' error past the paper, Wallace,
Stone & Masson 2005). :func:`held_out_verdicts` reads both tables of a run and
lists, for each bio-inspired model, every cell it fails and every generalisation cell
whose verdict differs from the model's baseline (pass or fail, with the table's
``cause``), each with a one-line
"why" derived from the tables themselves (the per-direction verdicts and errors,
the fitted ``A`` and ``tau`` of a decay criterion against the criterion's bounds,
the failed comparisons of a dependence row) and, where the tables cannot say
more, a pointer to the model's section of ``docs/models.md``. It computes no
verdict: every pass/fail comes from the tables.

A model is bio-inspired when its algorithm is one of psybench's own of kind
``"stream"`` (:func:`psybench.motion.models.bio_inspired_models`: ``simoncelli_heeger``,
``tlapale_v1mt``), whatever name the config gives it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from psybench.motion import EXPERIMENT_LABELS, EXPERIMENTS
from psybench.motion.criteria.thresholds import merge_criteria
from psybench.motion.generalisation import DEPENDENCE

__all__ = ["held_out_verdicts", "held_out_section", "model_figures"]

# What each experiment's continuous error measures (psybench.motion.criteria, per module).
_ERROR_MEANS = {
    "barberpole": "mean distance (deg) of the final direction from the ocular-following range",
    "diamonds": "late |half-differential error| (deg) plus the shortfall of the initial bias",
    "dashed_bars": "late |direction error| (deg) plus the shortfall of the initial bias",
    "grating_size": "summed excess over the growth, saturation and decline bounds (fraction of the peak)",
    "integration": "shrinkage of the integration area from the early to the next window (octaves)",
}
_DECAY = ("diamonds", "dashed_bars")
_DIR_COL = re.compile(r"passed_dir(\d+)(?:p(\d+))?")


def model_figures(model: str, experiment: str = "") -> list[dict[str, str]]:
    """The motion figures of ``model`` (paths relative to the results folder; rules/motion.smk)."""
    figs = [{"label": "direction-error curves", "path": f"motion/figures/{model}_direction_error.png"},
            {"label": "flow fields", "path": f"motion/figures/{model}_flow.png"}]
    if experiment == "barberpole":
        figs.append({"label": "barber-pole directions", "path": "motion/figures/barberpole_directions.png"})
    return figs


def _g(x: float) -> str:
    return f"{x:.3g}" if isinstance(x, (int, float)) and math.isfinite(x) else "n/a"


def _bounds(experiment: str, c: Mapping[str, Mapping[str, float]]) -> str:
    """The criterion's pass bounds in words (psybench.motion.criteria.thresholds, with the run's overrides)."""
    if experiment in _DECAY:
        b = c[experiment]
        return (f"A >= {_g(b['a_min_deg'])} deg, |B| <= {_g(b['b_max_deg'])} deg, "
                f"{_g(b['tau_min_ms'])} <= tau <= {_g(b['tau_max_ms'])} ms, R2 >= {_g(b['r2_min'])}")
    if experiment == "barberpole":
        b = c["barberpole"]
        return (f"final direction inside the ocular-following range (+/- {_g(b['range_tol_deg'])} deg), "
                f"non-decreasing in aspect ratio (tol {_g(b['monotonic_tol_deg'])} deg), square aperture "
                f"within {_g(b['square_tol_deg'])} deg of the grating normal")
    if experiment == "grating_size":
        b = c["grating_size"]
        return (f"early response ({_g(b['window_ms'])} ms from onset) grows >= {_g(b['growth_min'])}, last step "
                f"<= {_g(b['saturation_tol'])}, decline <= {_g(b['decline_max'])} of the peak")
    if experiment == "integration":
        return (f"integration area ({_g(c['grating_size']['area_fraction'])} of the peak) does not shrink "
                "with time (Barthelemy et al. 2006)")
    return ""


def _directions(row: pd.Series, prefix: str = "") -> list[dict[str, Any]]:
    out = []
    for col in row.index:
        m = _DIR_COL.fullmatch(col)
        if m and pd.notna(row[col]):
            angle = float(f"{m.group(1)}.{m.group(2) or 0}")
            err = row.get(col.replace("passed_", "error_"), math.nan)
            out.append({"direction_deg": angle, "passed": bool(row[col]), "error": float(err)})
    return out


def _table1_why(dirs: list[dict[str, Any]], error: float, docs: str) -> str:
    """Why a Table 1 cell fails, from its per-direction verdicts (the bounds are quoted beside it)."""
    fail = [d for d in dirs if not d["passed"]]
    ok = [d for d in dirs if d["passed"]]
    at = "; ".join(f"{d['direction_deg']:g} deg: error {_g(d['error'])}" for d in fail)
    if fail and ok:
        good = "; ".join(f"{d['direction_deg']:g} deg: error {_g(d['error'])}" for d in ok)
        return f"fails at {at}, passes at {good}: the verdict depends on the direction of motion"
    if fail:
        return f"fails at every direction ({at}); see {docs}"
    return f"fails the rule (error {_g(error)}); see {docs}"


def _table1_cells(rows: pd.DataFrame, c: Mapping, docs: str) -> list[dict[str, Any]]:
    cells = []
    for _, r in rows.iterrows():
        exp = str(r["experiment"])
        dirs = _directions(r)
        if not bool(r["passed"]):
            bounds = _bounds(exp, c)
            cells.append({"experiment": exp, "label": EXPERIMENT_LABELS.get(exp, exp), "error": float(r["error"]),
                          "directions": dirs, "bound": bounds, "error_means": _ERROR_MEANS.get(exp, ""),
                          "why": _table1_why(dirs, float(r["error"]), docs),
                          "figures": model_figures(str(r["model"]), exp)})
        ip = r.get("integration_passed", math.nan)
        if pd.notna(ip) and not bool(ip):
            bounds = _bounds("integration", c)
            err = float(r["integration_error"])
            cells.append({"experiment": f"{exp} (integration area, separately reported)",
                          "label": "Integration area grows with time", "error": err, "directions": [],
                          "bound": bounds, "error_means": _ERROR_MEANS["integration"],
                          "why": f"the integration area shrinks by {_g(err)} octaves from the early window to the "
                                 f"next (must not shrink); see {docs}",
                          "figures": model_figures(str(r["model"]), exp)})
    return cells


def _dependence_why(details: Mapping[str, Any], nuisance: str, sign: int) -> str:
    a_min = details.get("a_min_deg", math.nan)
    levels = details.get("levels") or []
    if len(levels) < 2:
        return f"fewer than two {nuisance} levels: no dependence can be measured"
    series = {"A_deg": details.get("A_deg") or [], "tau_ms": details.get("tau_ms") or []}
    value = {}
    for key, vals in series.items():
        for lv, v in zip(levels, vals):
            value[(key, lv)] = math.nan if v is None else float(v)
    people = "larger and slower at low contrast" if nuisance == "contrast" else "larger and slower at high speed"
    parts = []
    for cmp in details.get("comparisons") or []:
        if cmp["holds"]:
            continue
        key, lo, hi = cmp["quantity"], cmp["from_level"], cmp["to_level"]
        name = "A" if key == "A_deg" else "tau"
        unit = "deg" if key == "A_deg" else "ms"
        v_lo, v_hi = value.get((key, lo), math.nan), value.get((key, hi), math.nan)
        a_lo, a_hi = value.get(("A_deg", lo), math.nan), value.get(("A_deg", hi), math.nan)
        if not (math.isfinite(v_lo) and math.isfinite(v_hi)):
            parts.append(f"{name} not fitted at {nuisance} {_g(lo)} or {_g(hi)}")
        elif sign * (v_hi - v_lo) <= 0:
            rel = "<" if v_lo < v_hi else (">" if v_lo > v_hi else "=")
            parts.append(f"{name} at {nuisance} {_g(lo)} = {_g(v_lo)} {unit} {rel} {name} at {_g(hi)} = "
                         f"{_g(v_hi)} {unit}")
        else:
            low = [f"{_g(lv)}" for lv, a in ((lo, a_lo), (hi, a_hi)) if not (math.isfinite(a) and a >= a_min)]
            parts.append(f"{name} in the right order from {_g(lo)} to {_g(hi)} but no initial bias "
                         f"(A < {_g(a_min)} deg) at {nuisance} {', '.join(low)}")
    return (f"{nuisance} dependence unlike people's ({people}; Wallace, Stone & Masson 2005): "
            + "; ".join(parts))


def _level_why(r: pd.Series, c: Mapping, base: pd.DataFrame, docs: str) -> str:
    exp, nuisance = str(r["experiment"]), str(r["nuisance"])
    b = base[(base["experiment"] == exp) & (base["nuisance"] == nuisance)]
    ref = ""
    if len(b) and not bool(r["baseline"]):
        br = b.iloc[0]
        ref = (f"; at the baseline {nuisance} {_g(float(br['level']))} it "
               f"{'passes' if bool(br['passed']) else 'fails too'} (error {_g(float(br['error']))})")
    if exp in _DECAY:
        k = c[exp]
        A, tau = float(r["A_deg"]), float(r["tau_ms"])
        out = []
        if math.isfinite(A) and A < k["a_min_deg"]:
            out.append(f"A = {_g(A)} deg < {_g(k['a_min_deg'])} (no initial bias)")
        if math.isfinite(tau) and not k["tau_min_ms"] <= tau <= k["tau_max_ms"]:
            out.append(f"tau = {_g(tau)} ms outside [{_g(k['tau_min_ms'])}, {_g(k['tau_max_ms'])}]")
        if not (math.isfinite(A) and math.isfinite(tau)):
            out.append("no exponential fitted")
        if not out:
            out.append(f"A = {_g(A)} deg and tau = {_g(tau)} ms within bounds, so |B| > {_g(k['b_max_deg'])} deg "
                       f"or R2 < {_g(k['r2_min'])} (not in this table; see the variant's score table and {docs})")
        return "; ".join(out) + " (first generalisation direction)" + ref
    return f"error {_g(float(r['error']))} ({_bounds(exp, c)}){ref}; see {docs}"


def _generalisation_cells(rows: pd.DataFrame, c: Mapping, docs: str) -> list[dict[str, Any]]:
    cells = []
    base = rows[rows["baseline"].astype(bool)]
    changed = (rows["verdict_changed"].fillna(False).astype(bool) if "verdict_changed" in rows.columns
               else pd.Series(False, index=rows.index))
    for i, r in rows[~rows["passed"].astype(bool) | changed].iterrows():
        exp, nuisance = str(r["experiment"]), str(r["nuisance"])
        change = str(r.get("cause") or "") if bool(changed[i]) else ""
        if bool(r["passed"]):  # passes where the baseline fails: flagged with the table's cause
            cells.append({"experiment": exp, "nuisance": nuisance, "level": _g(float(r["level"])), "passed": True,
                          "error": float(r["error"]), "why": "passes here", "changed": change,
                          "figures": model_figures(str(r["model"]), exp)})
            continue
        if exp in DEPENDENCE:
            details = json.loads(r["details"]) if isinstance(r["details"], str) and r["details"] else {}
            why = _dependence_why(details, nuisance, DEPENDENCE[exp][1])
            level = "all levels"
        else:
            why = _level_why(r, c, base, docs)
            level = f"{_g(float(r['level']))}{' (baseline)' if bool(r['baseline']) else ''}"
        cells.append({"experiment": exp, "nuisance": nuisance, "level": level, "passed": False,
                      "error": float(r["error"]), "why": why, "changed": change,
                      "figures": model_figures(str(r["model"]), "diamonds" if exp in DEPENDENCE else exp)})
    return cells


def held_out_verdicts(
    table1: pd.DataFrame,
    generalisation: pd.DataFrame | None,
    models: Mapping[str, str],
    *,
    criteria: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Every failing cell of the bio-inspired models in Table 1 and the generalisation table, with why.

    Parameters
    ----------
    table1 : DataFrame
        ``motion_table1.csv`` (:func:`psybench.motion.table1.table1`): columns
        ``experiment, model, passed, error`` and, when the run has them,
        ``passed_dir{DDD}``, ``error_dir{DDD}``, ``integration_passed``,
        ``integration_error``.
    generalisation : DataFrame or None
        ``motion_generalisation.csv`` (:func:`psybench.motion.generalisation.generalisation_table`);
        None when the run has no generalisation table.
    models : mapping {str: str}
        Bio-inspired model name -> its algorithm (:func:`bio_inspired_models`), in
        the order to list them.
    criteria : mapping, optional
        The run's ``motion.criteria`` overrides: the bounds quoted are those the run used.

    Returns
    -------
    list of dict, one per model
        ``model``, ``algorithm``, ``docs`` (its section of docs/models.md),
        ``table1`` and ``generalisation`` (failing cells: experiment, per-direction
        verdicts and errors or nuisance and level, error, why, figure paths relative
        to the results folder), ``n_table1`` / ``n_generalisation`` (cells checked),
        ``passes_all`` (True only if the model has rows in both tables and fails none).

    Raises
    ------
    ValueError
        A table lacking a column this needs, naming it.
    """
    need = {"table1": (table1, ("experiment", "model", "passed", "error")),
            "generalisation": (generalisation, ("model", "experiment", "nuisance", "level", "passed", "error",
                                                "baseline", "A_deg", "tau_ms", "details"))}
    for what, (df, cols) in need.items():
        missing = [col for col in cols if df is not None and col not in df.columns]
        if missing:
            raise ValueError(f"motion {what} table lacks column(s) {missing}")
    c = merge_criteria(criteria)
    out = []
    for model, algorithm in models.items():
        docs = f"docs/models.md, section {algorithm}"
        t1 = table1[table1["model"] == model]
        gen = generalisation[generalisation["model"] == model] if generalisation is not None else None
        cells1 = _table1_cells(t1, c, docs)
        cells2 = _generalisation_cells(gen, c, docs) if gen is not None else []
        out.append({"model": model, "algorithm": algorithm, "docs": docs, "table1": cells1,
                    "generalisation": cells2, "n_table1": len(t1), "n_generalisation": 0 if gen is None else len(gen),
                    "passes_all": bool(len(t1) and gen is not None and len(gen) and not cells1 and not cells2)})
    return out


def held_out_section(
    table1, generalisation=None, models: Mapping[str, str] | None = None, *, criteria: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The report's held-out section from a run's table files: :func:`held_out_verdicts` and where they came from.

    Parameters
    ----------
    table1, generalisation : path-like
        ``motion_table1.csv`` and ``motion_generalisation.csv`` (None: the run has none).
    models, criteria
        As in :func:`held_out_verdicts`.

    Returns
    -------
    dict
        ``{"table1": path, "generalisation": path or None, "bounds": {experiment: str},
        "models": [...]}`` (``bounds``: each criterion's pass bounds in words, the run's),
        what :func:`psybench.report.site.render_site` takes as ``motion_held_out``.
    """
    from psybench.io.tables import read_table

    c = merge_criteria(criteria)
    return {"table1": table1, "generalisation": generalisation,
            "bounds": {e: _bounds(e, c) for e in (*EXPERIMENTS, "integration")},
            "models": held_out_verdicts(read_table(table1), read_table(generalisation) if generalisation else None,
                                        models or {}, criteria=criteria)}
