"""Each track's result as its paper prints it, for the top of the track's report page.

Laid out from the run's tables, never computed here (every verdict and number comes
from the files), with a row per model the tables hold (a user's model included) and
people's row from what the run keeps:

* **Motion** (Tlapale et al. 2010, INRIA RR-7317, Table 1): a pass/fail matrix,
  models x experiments, from ``motion_table1.csv``; each cell shows the verdict and
  the error, its per-direction verdicts on hover and below, and the diamonds' verdict
  at each frame rate of ``motion_generalisation.csv`` where the run has one. People's
  row: the ``people`` rows of Table 1 when the run scored them, else each criterion's
  human behaviour and its source (:data:`psybench.report.human.MOTION_TARGETS`) with
  the bounds the run used.
* **Attention** (Shic & Scassellati 2007, IJCV 73(2), Table 1): models x groups, the
  median rank percentile of each group (mean over the run's train/test pairs, each
  pair on hover), from ``table1.csv``; people's row is the inter-observer ceiling.
* **IntPhys** (Riochet et al. 2018, arXiv:1803.07616; IntPhys V1.0 benchmark
  description, "Evaluation metric" and "Baseline results", whose figures show the error
  per block and visibility): relative and absolute error rates, L_R / L_A, per block
  and visibility, from the long score table. The human error rates are published as a
  figure only ("Human performance"): people's row says so and holds no number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from psybench.report.human import MOTION_TARGETS, PAPER_TABLE1, human_reference

__all__ = ["motion_table", "attention_table", "attention_metrics", "intphys_table", "PEOPLE"]

#: The model name of people's row in the tables (the motion track's reference observer).
PEOPLE = "people"
_DIR_COL = re.compile(r"passed_dir(\d+)(?:p(\d+))?")


def _num(v: Any, digits: int = 3) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return ""
    return f"{x:.{digits}g}" if math.isfinite(x) else ""


def _ordered_models(models: Sequence[str]) -> list[str]:
    """Models in the table's order, people first (a sweep's and a user's models kept where they are)."""
    seen = list(dict.fromkeys(str(m) for m in models))
    return ([PEOPLE] if PEOPLE in seen else []) + [m for m in seen if m != PEOPLE]


# ---------------------------------------------------------------------------- motion


def _directions(row: pd.Series) -> list[str]:
    out = []
    for col in row.index:
        m = _DIR_COL.fullmatch(col)
        if m and pd.notna(row[col]):
            angle = float(f"{m.group(1)}.{m.group(2) or 0}")
            err = _num(row.get(col.replace("passed_", "error_")))
            out.append(f"{angle:g} deg: {'pass' if bool(row[col]) else 'fail'} (error {err})")
    return out


def _frame_rates(generalisation: pd.DataFrame | None, model: str, experiment: str) -> list[str]:
    if generalisation is None or not {"model", "experiment", "nuisance", "level", "passed", "error"} <= set(
            generalisation.columns):
        return []
    g = generalisation[(generalisation["model"] == model) & (generalisation["experiment"] == experiment)
                       & (generalisation["nuisance"] == "frames_per_s")]
    return [f"{float(r.level):g} frames/s: {'pass' if bool(r.passed) else 'fail'} (error {_num(r.error)})"
            for r in g.sort_values("level").itertuples(index=False)]


def _paper_rows(columns: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """The source paper's own verdicts (Tlapale et al. 2010, RR-7317, Table 1), one row per model it ran."""
    rows = []
    for algorithm, verdicts in PAPER_TABLE1.items():
        cells = []
        for c in columns:
            passed = verdicts.get(c["key"])
            if passed is None:
                cells.append({"passed": None, "text": "–", "title": "not in the paper's Table 1"})
            else:
                cells.append({"passed": bool(passed), "text": "pass" if passed else "FAIL",
                              "title": f"RR-7317 Table 1: {algorithm} {'passes' if passed else 'fails'}"})
        rows.append({"model": f"paper: {algorithm}", "people": False, "paper": True, "cells": cells, "note": ""})
    return rows


def motion_table(table1: pd.DataFrame, generalisation: pd.DataFrame | None = None, *,
                 bounds: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Motion Table 1 as a pass/fail matrix: one row per model (people first), one column per experiment.

    Parameters
    ----------
    table1 : DataFrame
        ``motion_table1.csv`` (:func:`psybench.motion.table1.table1`): ``experiment,
        model, passed, error``, optional ``passed_dir<DDD>``/``error_dir<DDD>`` and
        ``integration_passed``/``integration_error``.
    generalisation : DataFrame, optional
        ``motion_generalisation.csv``: its ``frames_per_s`` rows give the breakdown
        by frame rate.
    bounds : mapping {experiment: str}, optional
        Each criterion's pass bounds in words (the run's, quoted in people's row when
        the run has no ``people`` rows).
    labels : mapping {experiment: str}, optional
        Column titles.

    Returns
    -------
    dict
        ``columns`` (key, label), ``rows`` (model, people, paper, note, cells: passed,
        text, title; after people's row, the paper's own verdict rows
        ``paper: <algorithm>``), ``people_from_data``, ``breakdown`` (the per-direction and
        frame-rate details of every cell with any) and ``bounds`` (each column's
        pass bounds in words).
    """
    missing = [c for c in ("experiment", "model", "passed", "error") if c not in table1.columns]
    if missing:
        raise ValueError(f"motion Table 1 lacks column(s) {missing}")
    labels, bounds = dict(labels or {}), dict(bounds or {})
    experiments = list(dict.fromkeys(table1["experiment"].astype(str)))
    has_integration = "integration_passed" in table1.columns and table1["integration_passed"].notna().any()
    columns = [{"key": e, "label": labels.get(e, e.replace("_", " "))} for e in experiments]
    if has_integration:
        columns.append({"key": "integration", "label": "Integration area (reported separately)"})
    by = {(str(r["model"]), str(r["experiment"])): r for _, r in table1.iterrows()}
    rows, breakdown = [], []
    for model in _ordered_models(table1["model"]):
        cells = []
        for e in experiments:
            r = by.get((model, e))
            if r is None:
                cells.append({"passed": None, "text": "–", "title": "not scored in this run"})
                continue
            details = _directions(r) + _frame_rates(generalisation, model, e)
            verdict = "pass" if bool(r["passed"]) else "FAIL"
            cells.append({"passed": bool(r["passed"]), "text": f"{verdict} {_num(r['error'])}",
                          "title": "; ".join(details) or f"error {_num(r['error'])}"})
            if details:
                breakdown.append({"model": model, "experiment": labels.get(e, e), "details": details})
        if has_integration:
            ri = next((by[(model, e)] for e in experiments if (model, e) in by
                       and pd.notna(by[(model, e)].get("integration_passed"))), None)
            if ri is None:
                cells.append({"passed": None, "text": "–", "title": "not scored in this run"})
            else:
                ok = bool(ri["integration_passed"])
                cells.append({"passed": ok, "text": f"{'pass' if ok else 'FAIL'} {_num(ri['integration_error'])}",
                              "title": "shrinkage of the integration area (octaves); must not shrink"})
        rows.append({"model": model, "people": model == PEOPLE, "paper": False, "cells": cells, "note": ""})
    people_from_data = any(r["people"] for r in rows)
    if not people_from_data:
        ref = human_reference("motion")
        cells = []
        for c in columns:
            target = MOTION_TARGETS.get(c["key"], "")
            bound = bounds.get(c["key"], "")
            cells.append({"passed": None, "text": "pass by definition",
                          "title": f"{target}; pass needs {bound}" if bound else target})
        rows.insert(0, {"model": f"{PEOPLE} (literature)", "people": True, "paper": False, "cells": cells,
                        "note": f"Not scored in this run: the human behaviour each criterion encodes, from "
                                f"{ref.citation}; hover a cell for the finding and its source."})
    rows[1:1] = _paper_rows(columns)
    return {"columns": columns, "rows": rows, "people_from_data": people_from_data, "breakdown": breakdown,
            "bounds": [{"label": c["label"], "bound": bounds[c["key"]]} for c in columns if bounds.get(c["key"])]}


# ---------------------------------------------------------------------------- attention


def _model_name(r: Mapping[str, Any]) -> str:
    L = r.get("L")
    return f"{r['features']} L={int(L)}" if L is not None and pd.notna(L) else str(r["features"])


def _beside_matched(groups: list[str]) -> list[str]:
    """The groups in the table's order, the ``n/shift`` control moved right after ``n ma`` (its chance twin)."""
    if "n ma" not in groups or "n/shift" not in groups:
        return groups
    rest = [g for g in groups if g != "n/shift"]
    at = rest.index("n ma") + 1
    return rest[:at] + ["n/shift"] + rest[at:]


def attention_metrics(metrics: pd.DataFrame) -> list[dict[str, str]]:
    """The attention metrics table as the page shows it: one row per model and metric, mean over pairs.

    ``metrics``: the attention ``metrics.csv`` (:func:`psybench.attention.metrics.run_metrics`):
    ``model, metric, value, direction, train, test, ceiling, chance, of_ceiling``. Each cell is the
    mean over the run's train/test pairs of the file's column (per pair on hover); ``of_ceiling``
    is the file's share of the way from chance (0) to the ceiling (1), empty where the ceiling
    does not beat chance.
    """
    missing = [c for c in ("model", "metric", "value", "train", "test") if c not in metrics.columns]
    if missing:
        raise ValueError(f"attention metrics table lacks column(s) {missing}")
    m = metrics.assign(_pair=[f"{a} on {b}" for a, b in zip(metrics["train"], metrics["test"])])
    rows = []
    for (model, metric), g in m.groupby(["model", "metric"], sort=False):
        row = {"model": str(model), "metric": str(metric),
               "direction": str(g["direction"].iloc[0]) if "direction" in g.columns else ""}
        for col in ("value", "chance", "ceiling", "of_ceiling"):
            v = pd.to_numeric(g[col], errors="coerce") if col in g.columns else pd.Series(float("nan"), g.index)
            row[col] = _num(v.mean(), 3) if v.notna().any() else ""
            row[f"{col}_title"] = "; ".join(f"{p}: {_num(x, 3) or 'n/a'}" for p, x in zip(g["_pair"], v))
        rows.append(row)
    return rows


def attention_table(table1: pd.DataFrame, metrics: pd.DataFrame | None = None) -> dict[str, Any]:
    """Attention Table 1: one row per model (features and L), one column per group, people's row the ceiling.

    Parameters
    ----------
    table1 : DataFrame
        The attention ``table1.csv`` (:func:`psybench.attention.evaluate.evaluate`):
        ``train, test, features, L, group, median, sd`` and ``ceiling``.
    metrics : DataFrame, optional
        The attention ``metrics.csv``: rows of :func:`attention_metrics`.

    Returns
    -------
    dict
        ``groups`` (``n/shift`` beside ``n ma``), ``pairs``, ``rows`` (model, cells: text
        and per-pair title), ``people`` (the ceiling, mean over pairs, per pair on hover;
        None without a ``ceiling`` column), ``shift`` (whether the n/shift control is
        there) and ``metrics`` (:func:`attention_metrics`; empty without them).
    """
    missing = [c for c in ("train", "test", "features", "group", "median") if c not in table1.columns]
    if missing:
        raise ValueError(f"attention Table 1 lacks column(s) {missing}")
    t = table1.assign(_model=[_model_name(r) for r in table1.to_dict("records")],
                      _pair=[f"{a} on {b}" for a, b in zip(table1["train"], table1["test"])])
    groups = _beside_matched(list(dict.fromkeys(t["group"].astype(str))))
    pairs = list(dict.fromkeys(t["_pair"]))
    rows = []
    for model, g in t.groupby("_model", sort=False):
        cells = []
        for grp in groups:
            sel = g[g["group"].astype(str) == grp]
            vals = pd.to_numeric(sel["median"], errors="coerce")
            if not vals.notna().any():
                cells.append({"text": "–", "title": "not in this run"})
                continue
            per_pair = "; ".join(f"{p}: {_num(v, 3)}" for p, v in zip(sel["_pair"], vals))
            cells.append({"text": f"{vals.mean():.1f}", "title": per_pair})
        rows.append({"model": model, "cells": cells})
    people = None
    if "ceiling" in t.columns:
        ceil = t.groupby("_pair", sort=False)["ceiling"].mean()
        if ceil.notna().any():
            people = {"text": f"{ceil.mean():.1f}",
                      "title": "; ".join(f"{p}: {v:.1f}" for p, v in ceil.items() if pd.notna(v))}
    metric_rows = attention_metrics(metrics) if metrics is not None and len(metrics) else []
    return {"groups": groups, "pairs": pairs, "rows": rows, "people": people, "shift": "n/shift" in groups,
            "metrics": metric_rows}


# ---------------------------------------------------------------------------- intphys


def intphys_table(long_df: pd.DataFrame) -> dict[str, Any]:
    """IntPhys L_R / L_A per block and visibility: one row per model, one column per (block, visibility).

    Parameters
    ----------
    long_df : DataFrame
        Long score table rows of the track (``model, track, experiment, metric,
        value``; experiment ``<block>/<visibility>/<motion>/<n_objects>``). The
        cells over every motion and number of objects (``.../all/all``) are shown.

    Returns
    -------
    dict
        ``columns`` (block, visibility, label), ``rows`` (model, cells: L_R and
        L_A texts) and ``people`` (what the paper gives of people, no number).
    """
    d = long_df[(long_df["track"] == "intphys") & long_df["metric"].isin(["L_R", "L_A"])]
    parts = d["experiment"].astype(str).str.split("/", expand=True)
    if d.empty or parts.shape[1] < 4:
        return {"columns": [], "rows": [], "people": ""}
    d = d[(parts[2] == "all") & (parts[3] == "all")].assign(block=parts[0], visibility=parts[1])
    blocks = sorted(set(d["block"]) - {"all"}) + (["all"] if "all" in set(d["block"]) else [])
    vis_order = [v for v in ("visible", "occluded", "all") if v in set(d["visibility"])]
    # per block the two visibilities, and the whole test set; a block over both visibilities is left out
    # (the paper's figures split every block by visibility) so that the table fits a page
    def label(b: str, v: str) -> str:
        if v == "all":
            return "every movie" if b == "all" else f"{b}, both visibilities"
        return f"{'all blocks' if b == 'all' else b} {v}"

    columns = [{"block": b, "visibility": v, "label": label(b, v)}
               for b in blocks for v in vis_order if (b == "all" or v != "all" or len(blocks) == 1)
               and ((d["block"] == b) & (d["visibility"] == v)).any()]
    models = d["model"].astype(str) + d.get("params_hash", pd.Series("", index=d.index)).fillna("").map(
        lambda h: f"@{h}" if h else "")
    d = d.assign(_model=models.to_numpy())
    value = {(m, b, v, k): x for m, b, v, k, x in zip(d["_model"], d["block"], d["visibility"], d["metric"],
                                                       d["value"])}
    rows = []
    for model in _ordered_models(d["_model"]):
        cells = []
        for c in columns:
            lr, la = (value.get((model, c["block"], c["visibility"], k)) for k in ("L_R", "L_A"))
            cells.append({"lr": _num(lr, 2) or "–", "la": _num(la, 2) or "–"})
        rows.append({"model": model, "cells": cells})
    ref = human_reference("intphys")
    people = (f"Published as a figure only ({ref.citation}): people's error rates per block and visibility are "
              "not transcribed, so no number is shown; the paper reports far fewer errors than its baselines, "
              "more on occluded than on visible movies.")
    return {"columns": columns, "rows": rows, "people": people}


# ---------------------------------------------------------------------------- from a run's files


def track_tables(*, motion_table1=None, motion_generalisation=None, motion_bounds: Mapping[str, str] | None = None,
                 attention_table1=None, attention_metrics=None, scores=None) -> dict[str, dict[str, Any]]:
    """The paper's table of each track the run's files hold, ``{track: table}`` (tracks without files left out).

    Parameters
    ----------
    motion_table1, motion_generalisation : path-like, optional
        ``motion_table1.csv`` and ``motion_generalisation.csv``.
    motion_bounds : mapping {experiment: str}, optional
        The run's pass bounds in words (:func:`psybench.motion.held_out.held_out_section`).
    attention_table1 : path-like or DataFrame, optional
        The attention ``table1.csv``.
    attention_metrics : path-like or DataFrame, optional
        The attention ``metrics.csv``, shown under Table 1 with its chance and ceiling columns.
    scores : path-like, optional
        The long score table (``scores_long.csv``): IntPhys rows.
    """
    from psybench.io.tables import read_table
    from psybench.tracks import track_package

    def table(x):
        return x if isinstance(x, pd.DataFrame) else read_table(x)

    out: dict[str, dict[str, Any]] = {}
    if motion_table1:
        labels = getattr(track_package("motion"), "EXPERIMENT_LABELS", {})
        out["motion"] = motion_table(table(motion_table1), table(motion_generalisation) if motion_generalisation
                                     else None, bounds=motion_bounds, labels=labels)
    if attention_table1 is not None and len(table(attention_table1)):
        out["attention"] = attention_table(table(attention_table1), table(attention_metrics)
                                           if attention_metrics is not None else None)
    if scores:
        intphys = intphys_table(table(scores))
        if intphys["rows"]:
            out["intphys"] = intphys
    return out
