"""Motion track results as rows of the long score table (:mod:`psybench.aggregate.table`).

=====================================  ==============================================
input                                  rows (experiment / metric / direction)
=====================================  ==============================================
Table 1 (experiment, model, passed,    ``<experiment>`` / ``error`` (lower) and
error)                                 ``passed`` (1/0, higher); source: the model's
                                       direction-error figure
per-model fits (experiment, model,     ``<experiment>/<curve>`` / ``gaussian_score``
curve, ..., gaussian_score,            (higher; Gaussian score, Tlapale et al.
direction_deg), optional               2010, RR-7317 eq. 1), rows where it is not NaN;
                                       ``/dir{DDD}`` appended for a direction other than 0
=====================================  ==============================================

Missing values stay missing: an empty or NaN score becomes NaN in ``value`` (never 0).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.aggregate import cells
from psybench.aggregate.table import score_frame
from psybench.motion.criteria.directions import direction_tag

__all__ = ["score_rows"]

log = logging.getLogger(__name__)

_TABLE1_REQUIRED = ("experiment", "model", "passed", "error")
_FITS_REQUIRED = ("experiment", "model", "gaussian_score")


def score_rows(
    table1: str | os.PathLike,
    *,
    fits: Sequence[str | os.PathLike] = (),
    figure: str | None = None,
    track: str = "motion",
    results_root: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Motion track (Tlapale et al. 2010, RR-7317 Table 1) as long-table rows.

    Parameters
    ----------
    table1 : path
        The motion Table 1 (``.csv`` or ``.parquet``) with columns ``experiment,
        model, passed, error``.
    fits : sequence of paths, optional
        Per-model fits tables; each adds ``gaussian_score`` rows (higher is better)
        where the score is not NaN.  A path that does not exist is skipped
        (logged): fits are optional.
    figure : str, optional
        ``source`` of the Table 1 rows, a format string with ``{model}``, relative
        to the results folder (the model's direction-error figure); default the
        Table 1 file relative to ``results_root``.
    track : str
        Track name written to the ``track`` column.
    results_root : path or None
        ``source`` of file rows is the file relative to this folder (None: as given).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~psybench.aggregate.table.SCORE_COLUMNS`: per (model,
        experiment) ``error`` (lower is better; NaN when the experiment could not
        be scored) and ``passed`` (1/0, higher is better; NaN when unknown); per
        (model, experiment, curve) ``gaussian_score``.  No intervals (ci_* NaN);
        params_hash "".

    Raises
    ------
    ScoreTableError
        A required column is missing (the message names file and column), or a
        cell is not a number / boolean.
    """
    df = cells.read_cells(table1)
    cells.require_columns(df, _TABLE1_REQUIRED, table1, "motion Table 1")
    cells.require_filled(df, ("experiment", "model"), table1)
    models = cells.text(df["model"]).to_numpy(dtype=object)
    exps = cells.text(df["experiment"]).to_numpy(dtype=object)
    if figure is None:
        sources = np.full(len(df), cells.relative_source(table1, results_root), dtype=object)
    else:
        sources = np.array([figure.format(model=m) for m in models], dtype=object)
    n = len(df)
    parts = []
    for metric, values, direction in (
        ("error", cells.floats(df["error"], "error", table1), "lower"),
        ("passed", cells.booleans(df["passed"], "passed", table1), "higher"),
    ):
        parts.append(score_frame({"model": models, "track": [track] * n, "experiment": exps,
                                  "metric": [metric] * n, "value": values, "direction": [direction] * n,
                                  "source": sources}, n))
    for f in fits:
        if not Path(f).is_file():
            log.info("motion fits table %s is absent: no gaussian_score rows from it", f)
            continue
        parts.append(_fits_rows(f, track=track, results_root=results_root))
    return pd.concat(parts, ignore_index=True)


def _fits_rows(path, *, track: str, results_root) -> pd.DataFrame:
    df = cells.read_cells(path)
    cells.require_columns(df, _FITS_REQUIRED, path, "motion fits table")
    value = cells.floats(df["gaussian_score"], "gaussian_score", path)
    keep = ~np.isnan(value)
    df, value = df.loc[keep].reset_index(drop=True), value[keep]
    n = len(df)
    exps = cells.text(df["experiment"])
    if "curve" in df.columns:
        curve = cells.text(df["curve"])
        exps = exps.where(curve == "", exps + "/" + curve)
    if "direction_deg" in df.columns:
        # one fit per motion direction: the 0-deg fit keeps the key of single-direction runs
        direction = cells.floats(df["direction_deg"], "direction_deg", path)
        tags = pd.Series([direction_tag(d) if np.isfinite(d) and d != 0 else "" for d in direction], index=exps.index)
        exps = exps.where(tags == "", exps + "/" + tags)
    return score_frame({"model": cells.text(df["model"]).to_numpy(dtype=object), "track": [track] * n,
                        "experiment": exps.to_numpy(dtype=object), "metric": ["gaussian_score"] * n,
                        "value": value, "direction": ["higher"] * n,
                        "source": [cells.relative_source(path, results_root)] * n}, n)
