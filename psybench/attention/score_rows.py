"""Attention track results as rows of the long score table (:mod:`psybench.aggregate.table`).

===================================  ==================================================
input                                rows (experiment / metric / direction)
===================================  ==================================================
metrics table (model, metric,        as given (experiment default ``all``, or
value, direction, ...)               ``<train>_on_<test>``); direction from the file, or
                                     the metric's sense in
                                     :data:`psybench.attention.metrics.METRIC_DIRECTIONS`
Table 1 (train, test, features, L,   ``<train>_on_<test>`` / ``median_rp_<group>``
ND, group, median, sd)               (median saliency rank percentile of gaze, %,
                                     higher; Shic & Scassellati 2007, sec. 5.2 and
                                     Table 1); model = ``features``, params_hash of
                                     ``{"L": L}``
===================================  ==================================================
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from psybench.aggregate import cells
from psybench.aggregate.table import score_frame
from psybench.attention.metrics import METRIC_DIRECTIONS
from psybench.provenance import params_hash

__all__ = ["score_rows"]

_METRICS_REQUIRED = ("model", "metric", "value")
_TABLE1_REQUIRED = ("train", "test", "features", "L", "group", "median")


def _metric_key(name: str) -> str:
    """Spelling-free metric name: "AUC-Judd", "auc_judd" and "auc judd" are one metric."""
    return "_".join(name.lower().replace("-", " ").replace("_", " ").split())


_KNOWN_DIRECTIONS = {_metric_key(k): v for k, v in METRIC_DIRECTIONS.items()}


def _experiment(df: pd.DataFrame) -> np.ndarray:
    """Experiment of each metrics row: its ``experiment`` column, else ``<train>_on_<test>``.

    The attention track scores every model on each (train movie, test movie)
    pair, so without the pair in the key two rows of one model and metric would
    collide.
    """
    if "experiment" in df.columns:
        return cells.optional_text(df, "experiment", "all").to_numpy(dtype=object)
    if {"train", "test"} <= set(df.columns):
        return (df["train"].astype(str) + "_on_" + df["test"].astype(str)).to_numpy(dtype=object)
    return np.full(len(df), "all", dtype=object)


def _metrics_rows(path, *, track: str, results_root) -> pd.DataFrame:
    df = cells.read_cells(path)
    cells.require_columns(df, _METRICS_REQUIRED, path, "attention metrics table")
    cells.require_filled(df, ("model", "metric"), path)
    n = len(df)
    metric = cells.text(df["metric"])
    if "direction" in df.columns:
        direction = cells.text(df["direction"]).str.lower()
    else:
        direction = pd.Series([""] * n, dtype=object)
    for i in range(n):
        if direction.iloc[i] == "":
            known = _KNOWN_DIRECTIONS.get(_metric_key(metric.iloc[i]))
            if known is None:
                raise cells.ScoreTableError(
                    f"{path}: row {i} (model {df['model'].iloc[i]!r}, metric {metric.iloc[i]!r}) has no "
                    f"'direction' and the metric's sense is unknown; add a direction column "
                    f"('lower' or 'higher'); known metrics: {sorted(METRIC_DIRECTIONS)}"
                )
            direction.iloc[i] = known
    default_source = cells.relative_source(path, results_root)
    return _with_data(df, score_frame({
        "model": cells.text(df["model"]).to_numpy(dtype=object),
        "params_hash": cells.optional_text(df, "params_hash").to_numpy(dtype=object),
        "track": [track] * n,
        "experiment": _experiment(df),
        "metric": metric.to_numpy(dtype=object),
        "value": cells.floats(df["value"], "value", path),
        "direction": direction.to_numpy(dtype=object),
        "ci_low": cells.optional_floats(df, "ci_low", path),
        "ci_high": cells.optional_floats(df, "ci_high", path),
        "source": cells.optional_text(df, "source", default_source).to_numpy(dtype=object),
    }, n))


def _table1_rows(path, *, track: str, results_root, figure: str | None) -> pd.DataFrame:
    df = cells.read_cells(path)
    cells.require_columns(df, _TABLE1_REQUIRED, path, "attention Table 1")
    cells.require_filled(df, ("train", "test", "features", "group"), path)
    n = len(df)
    L = cells.floats(df["L"], "L", path)
    if np.isnan(L).any():
        raise cells.ScoreTableError(f"{path}: column 'L' is empty in row {int(np.flatnonzero(np.isnan(L))[0])}")
    hashes = [params_hash({"L": int(v)}) for v in L]
    exps = (cells.text(df["train"]) + "_on_" + cells.text(df["test"])).to_numpy(dtype=object)
    metric = ["median_rp_" + cells.slug(g) for g in cells.text(df["group"])]
    source = figure if figure is not None else cells.relative_source(path, results_root)
    return _with_data(df, score_frame({
        "model": cells.text(df["features"]).to_numpy(dtype=object),
        "params_hash": np.asarray(hashes, dtype=object),
        "track": [track] * n,
        "experiment": exps,
        "metric": np.asarray(metric, dtype=object),
        "value": cells.floats(df["median"], "median", path),
        "direction": ["higher"] * n,
        "source": [source] * n,
    }, n))


def _with_data(df: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the table's ``data`` column (recorded / synthetic, :mod:`psybench.attention.data_kind`),
    "n/a" where the table has none: an extra column of the long table, after its schema's."""
    rows["data"] = cells.optional_text(df, "data", "n/a").to_numpy(dtype=object) if "data" in df.columns else "n/a"
    return rows


def score_rows(
    *,
    metrics: str | os.PathLike | None = None,
    table1: str | os.PathLike | None = None,
    table1_figure: str | None = None,
    track: str = "attention",
    results_root: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Attention track (Shic & Scassellati 2007) as long-table rows.

    Parameters
    ----------
    metrics : path, optional
        Long metrics table (:func:`psybench.attention.metrics.run_metrics`) with
        required columns ``model, metric, value`` and optional ``direction``
        ("lower"/"higher"; when absent or empty, the metric's sense in
        :data:`~psybench.attention.metrics.METRIC_DIRECTIONS`, matched ignoring
        case, "-" and "_", else an error naming file, row and metric),
        ``experiment`` (default ``all``, or ``<train>_on_<test>`` from ``train``
        and ``test`` columns), ``params_hash``, ``ci_low``, ``ci_high``, ``source``
        (default: this file).
    table1 : path, optional
        Table 1 (:func:`psybench.attention.evaluate.evaluate`): columns ``train,
        test, features, L, group, median`` (required), ``ND, sd, n_pairs``
        (ignored).  One row per (feature model, L, train/test pair, group) ->
        metric ``median_rp_<group>`` (mean over observer pairs of the median
        saliency rank percentile of gaze, %, higher is better; ``n ma`` ->
        ``n_ma``, ``rf/n`` -> ``rf_n``), experiment ``<train>_on_<test>``, model =
        ``features``, params_hash = :func:`~psybench.provenance.params_hash` of
        ``{"L": L}``.  ``sd`` (a spread over pairs, not an interval) is not turned
        into ci_low/ci_high, which stay NaN.
    table1_figure : str, optional
        ``source`` of the Table 1 rows (e.g. the curves figure, relative to the
        results folder); default the table file itself.
    track : str
        Track name.
    results_root : path or None
        Default ``source`` paths are relative to this folder (None: as given).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~psybench.aggregate.table.SCORE_COLUMNS`.
    """
    if metrics is None and table1 is None:
        raise ValueError("attention score_rows: give metrics=, table1= or both")
    parts = []
    if metrics is not None:
        parts.append(_metrics_rows(metrics, track=track, results_root=results_root))
    if table1 is not None:
        parts.append(_table1_rows(table1, track=track, results_root=results_root, figure=table1_figure))
    return pd.concat(parts, ignore_index=True)
