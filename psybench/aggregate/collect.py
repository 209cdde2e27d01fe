"""Cross-track collection: every track's result files -> the one long score table.

Each track ends in its own tables; the converters here turn them into rows of the
long table of :mod:`psybench.aggregate.table` (columns :data:`SCORE_COLUMNS`):

=========  ==========================================  ==============================================
track      input                                       rows (experiment / metric / direction)
=========  ==========================================  ==============================================
motion     ``results/aggregate/motion_table1.csv``     ``<experiment>`` / ``error`` (lower) and
           (experiment, model, passed, error)          ``passed`` (1/0, higher); source: the model's
                                                       direction-error figure
motion     ``results/fits/motion/<model>.csv``         ``<experiment>/<curve>`` / ``gaussian_score``
           (optional; experiment, model, curve, ...,   (higher; papers/000 Gaussian score), rows
           gaussian_score)                             where it is not NaN
intphys    ``results/intphys/<model>/scores.csv``      ``<block>/<visibility>/<motion>/<n_objects>``
           (model, block, visibility, motion,          (coarser groupings read "all") / ``L_R``,
           n_objects, metric, value, ci_low, ci_high)  ``L_R_strict``, ``L_A`` (lower; papers/003)
attention  ``results/attention/metrics.csv``           as given (experiment default ``all``);
           (model, metric, value, direction, ...)      direction from the file, or the metric's
                                                       known sense (NSS, AUC, ... higher; KL lower)
attention  ``results/attention/table1.csv``            ``<train>_on_<test>`` / ``median_rp_<group>``
           (train, test, features, L, ND, group,       (median saliency rank percentile of gaze, %,
           median, sd)                                 higher; papers/002 Table 1); model =
                                                       ``features``, params_hash of ``{"L": L}``
=========  ==========================================  ==============================================

Missing values stay missing: an empty or NaN score becomes NaN in ``value`` (never
0), and a model that was not run on an experiment simply has no row; the
aggregates (:func:`psybench.aggregate.table.leaderboard`) state how they treat
NaN.  Required columns are checked per file; a missing one raises
:class:`~psybench.aggregate.table.ScoreTableError` naming the file and the column.
Optional columns (ci_low, ci_high, params_hash, source, experiment, the fits
table as a whole) are filled with missing values when absent.

``source`` is a path relative to the results folder (e.g.
``figures/motion/HS_direction_error.png``), so the HTML report can link every number
to the figure or table it comes from.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.aggregate.table import SCORE_COLUMNS, ScoreTableError, concat_scores
from psybench.provenance import params_hash

__all__ = [
    "TRACK_CONVERTERS",
    "KNOWN_DIRECTIONS",
    "motion_scores",
    "intphys_scores",
    "attention_scores",
    "collect_scores",
    "collect_to_table",
]

log = logging.getLogger(__name__)

#: Sense of the usual saliency / attention metrics when a metrics file gives no
#: ``direction`` column (Bylinskii et al. 2019, "What do different evaluation
#: metrics tell us about saliency models?": KL is a divergence, the rest similarities).
KNOWN_DIRECTIONS = {
    "nss": "higher",
    "auc": "higher",
    "auc_judd": "higher",
    "auc_borji": "higher",
    "sauc": "higher",
    "cc": "higher",
    "sim": "higher",
    "ig": "higher",
    "info_gain": "higher",
    "kl": "lower",
    "kld": "lower",
    "emd": "lower",
    "median_rank_percentile": "higher",
}

_MOTION_TABLE1_REQUIRED = ("experiment", "model", "passed", "error")
_MOTION_FITS_REQUIRED = ("experiment", "model", "gaussian_score")
_INTPHYS_FACTORS = ("block", "visibility", "motion", "n_objects")
_INTPHYS_REQUIRED = ("model", *_INTPHYS_FACTORS, "metric", "value")
_ATTENTION_METRICS_REQUIRED = ("model", "metric", "value")
_ATTENTION_TABLE1_REQUIRED = ("train", "test", "features", "L", "group", "median")
_TRUE = {"true", "1", "yes", "y", "t", "pass", "passed", "✔"}
_FALSE = {"false", "0", "no", "n", "f", "fail", "failed", "✘"}


# ---------------------------------------------------------------------------- helpers


def _read(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV (all cells as text, empty = missing) or Parquet table; errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise ScoreTableError(f"{path}: no such file")
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as exc:  # parser errors of several kinds: report them with the file name
        raise ScoreTableError(f"{path}: cannot be read as a table ({type(exc).__name__}: {exc})") from exc


def _require(df: pd.DataFrame, columns: Iterable[str], path: str | os.PathLike, what: str) -> None:
    for c in columns:
        if c not in df.columns:
            raise ScoreTableError(
                f"{path}: missing column {c!r} (a {what} needs columns {list(columns)}; "
                f"the file has {list(df.columns)})"
            )


def _text(s: pd.Series) -> pd.Series:
    out = s.astype(object).where(s.notna(), "")
    return out.map(lambda v: str(v).strip())


def _float(s: pd.Series, column: str, path: str | os.PathLike) -> np.ndarray:
    """Numbers; empty/NaN/NA cells -> NaN; anything else non-numeric is an error naming file and column."""
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=float, na_value=np.nan)
    raw = _text(s)
    missing = raw.str.lower().isin({"", "nan", "na", "n/a", "null", "none", "<na>"})
    num = pd.to_numeric(raw.where(~missing, "nan"), errors="coerce")
    bad = num.isna() & ~missing
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ScoreTableError(f"{path}: column {column!r} has non-numeric value {raw.iloc[i]!r} in row {i}")
    return num.to_numpy(dtype=float)


def _bool01(s: pd.Series, column: str, path: str | os.PathLike) -> np.ndarray:
    """True/False (or 1/0, yes/no) -> 1.0/0.0; empty -> NaN."""
    out = np.full(len(s), np.nan)
    for i, v in enumerate(s.tolist()):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            continue
        if isinstance(v, (bool, np.bool_)):
            out[i] = float(v)
            continue
        if isinstance(v, (int, float, np.integer, np.floating)) and float(v) in (0.0, 1.0):
            out[i] = float(v)
            continue
        t = str(v).strip().lower()
        if t in ("", "nan", "na", "none", "<na>"):
            continue
        if t in _TRUE:
            out[i] = 1.0
        elif t in _FALSE:
            out[i] = 0.0
        else:
            raise ScoreTableError(f"{path}: column {column!r} has {v!r} in row {i}; expected True/False or 1/0")
    return out


def _optional_float(df: pd.DataFrame, column: str, path) -> np.ndarray:
    return _float(df[column], column, path) if column in df.columns else np.full(len(df), np.nan)


def _optional_text(df: pd.DataFrame, column: str, default: str = "") -> pd.Series:
    if column not in df.columns:
        return pd.Series([default] * len(df), index=df.index, dtype=object)
    t = _text(df[column])
    return t.where(t != "", default)


def _empty_required(df: pd.DataFrame, columns: Sequence[str], path) -> None:
    for c in columns:
        empty = _text(df[c]) == ""
        if empty.any():
            raise ScoreTableError(f"{path}: column {c!r} is empty in row {int(np.flatnonzero(empty.to_numpy())[0])}")


def _frame(rows: dict[str, object], n: int) -> pd.DataFrame:
    data = {c: rows.get(c, [""] * n if c not in ("value", "ci_low", "ci_high") else np.full(n, np.nan))
            for c in SCORE_COLUMNS}
    out = pd.DataFrame({c: (np.asarray(v, dtype=object) if c not in ("value", "ci_low", "ci_high")
                            else np.asarray(v, dtype=float)) for c, v in data.items()}, columns=SCORE_COLUMNS)
    return out


def _rel(path: str | os.PathLike, results_root: str | os.PathLike | None) -> str:
    """``path`` relative to ``results_root`` (POSIX separators); unchanged if outside it."""
    p = Path(path)
    if results_root is None:
        return p.as_posix()
    try:
        return Path(os.path.relpath(p.resolve(), Path(results_root).resolve())).as_posix()
    except ValueError:
        return p.as_posix()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


# ---------------------------------------------------------------------------- motion


def motion_scores(
    table1: str | os.PathLike,
    *,
    fits: Sequence[str | os.PathLike] = (),
    figure: str = "figures/motion/{model}_direction_error.png",
    track: str = "motion",
    results_root: str | os.PathLike | None = "results",
) -> pd.DataFrame:
    """Motion track (papers/000, RR-7317 Table 1) as long-table rows.

    Parameters
    ----------
    table1 : path
        ``results/aggregate/motion_table1.csv`` (or .parquet) with columns
        ``experiment, model, passed, error`` (:func:`psybench.aggregate.motion.table1`).
    fits : sequence of paths, optional
        Per-model fits tables ``results/fits/motion/<model>.csv``
        (:data:`psybench.scores.motion.FIT_COLUMNS`); each adds ``gaussian_score``
        rows (higher is better) where the score is not NaN.  A path that does not
        exist is skipped (logged): fits are optional.
    figure : str
        ``source`` of the Table 1 rows, a format string with ``{model}``, relative
        to the results folder.
    track : str
        Track name written to the ``track`` column.
    results_root : path or None
        ``source`` of the fits rows is the fits file relative to this folder.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SCORE_COLUMNS`: per (model, experiment) ``error`` (lower is
        better; NaN when the experiment could not be scored) and ``passed`` (1/0,
        higher is better; NaN when unknown); per (model, experiment, curve)
        ``gaussian_score``.  No intervals (ci_* NaN); params_hash "".

    Raises
    ------
    ScoreTableError
        A required column is missing (the message names file and column), or a
        cell is not a number / boolean.
    """
    df = _read(table1)
    _require(df, _MOTION_TABLE1_REQUIRED, table1, "motion Table 1")
    _empty_required(df, ("experiment", "model"), table1)
    models = _text(df["model"]).to_numpy(dtype=object)
    exps = _text(df["experiment"]).to_numpy(dtype=object)
    sources = np.array([figure.format(model=m) for m in models], dtype=object)
    n = len(df)
    parts = []
    for metric, values, direction in (
        ("error", _float(df["error"], "error", table1), "lower"),
        ("passed", _bool01(df["passed"], "passed", table1), "higher"),
    ):
        parts.append(_frame({"model": models, "track": [track] * n, "experiment": exps, "metric": [metric] * n,
                             "value": values, "direction": [direction] * n, "source": sources}, n))
    for f in fits:
        if not Path(f).is_file():
            log.info("motion fits table %s is absent: no gaussian_score rows from it", f)
            continue
        parts.append(_motion_fits(f, track=track, results_root=results_root))
    out = pd.concat(parts, ignore_index=True)
    return out


def _motion_fits(path, *, track: str, results_root) -> pd.DataFrame:
    df = _read(path)
    _require(df, _MOTION_FITS_REQUIRED, path, "motion fits table")
    value = _float(df["gaussian_score"], "gaussian_score", path)
    keep = ~np.isnan(value)
    df, value = df.loc[keep].reset_index(drop=True), value[keep]
    n = len(df)
    exps = _text(df["experiment"])
    if "curve" in df.columns:
        curve = _text(df["curve"])
        exps = exps.where(curve == "", exps + "/" + curve)
    return _frame({"model": _text(df["model"]).to_numpy(dtype=object), "track": [track] * n,
                   "experiment": exps.to_numpy(dtype=object), "metric": ["gaussian_score"] * n, "value": value,
                   "direction": ["higher"] * n, "source": [_rel(path, results_root)] * n}, n)


# ---------------------------------------------------------------------------- intphys


def intphys_scores(
    scores: Sequence[str | os.PathLike] | str | os.PathLike,
    *,
    track: str = "intphys",
    results_root: str | os.PathLike | None = "results",
) -> pd.DataFrame:
    """Intuitive-physics track (papers/003, IntPhys) as long-table rows.

    Parameters
    ----------
    scores : path or sequence of paths
        ``results/intphys/<model>/scores.csv`` written by
        :func:`psybench.intphys.metrics.score_table`: columns ``model, block,
        visibility, motion, n_objects, metric, value`` (required) and ``ci_low,
        ci_high, n_quadruplets`` (optional).
    track : str
        Track name.
    results_root : path or None
        ``source`` = the scores file relative to this folder.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SCORE_COLUMNS`; ``experiment`` =
        ``"<block>/<visibility>/<motion>/<n_objects>"`` (a coarser grouping reads
        ``all`` in the dropped factors, ``all/all/all/all`` = overall); metrics
        ``L_R``, ``L_R_strict``, ``L_A`` as in the file, all error rates (lower is
        better); intervals from the file's bootstrap (NaN if absent).
    """
    if isinstance(scores, (str, os.PathLike)):
        scores = [scores]
    parts = []
    for path in scores:
        df = _read(path)
        _require(df, _INTPHYS_REQUIRED, path, "IntPhys scores table")
        _empty_required(df, ("model", "metric"), path)
        n = len(df)
        factors = [_optional_text(df, f, "all") for f in _INTPHYS_FACTORS]
        exps = factors[0].str.cat(factors[1:], sep="/")
        parts.append(_frame({
            "model": _text(df["model"]).to_numpy(dtype=object),
            "track": [track] * n,
            "experiment": exps.to_numpy(dtype=object),
            "metric": _text(df["metric"]).to_numpy(dtype=object),
            "value": _float(df["value"], "value", path),
            "direction": ["lower"] * n,
            "ci_low": _optional_float(df, "ci_low", path),
            "ci_high": _optional_float(df, "ci_high", path),
            "source": [_rel(path, results_root)] * n,
        }, n))
    if not parts:
        return _frame({}, 0)
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------------------- attention


def _attention_experiment(df: pd.DataFrame) -> np.ndarray:
    """Experiment of each metrics row: its ``experiment`` column, else ``<train>_on_<test>``.

    The attention track scores every model on each (train movie, test movie)
    pair, so without the pair in the key two rows of one model and metric would
    collide.
    """
    if "experiment" in df.columns:
        return _optional_text(df, "experiment", "all").to_numpy(dtype=object)
    if {"train", "test"} <= set(df.columns):
        return (df["train"].astype(str) + "_on_" + df["test"].astype(str)).to_numpy(dtype=object)
    return np.full(len(df), "all", dtype=object)


def _attention_metrics(path, *, track: str, results_root) -> pd.DataFrame:
    df = _read(path)
    _require(df, _ATTENTION_METRICS_REQUIRED, path, "attention metrics table")
    _empty_required(df, ("model", "metric"), path)
    n = len(df)
    metric = _text(df["metric"])
    if "direction" in df.columns:
        direction = _text(df["direction"]).str.lower()
    else:
        direction = pd.Series([""] * n, dtype=object)
    for i in range(n):
        if direction.iloc[i] == "":
            known = KNOWN_DIRECTIONS.get(metric.iloc[i].lower())
            if known is None:
                raise ScoreTableError(
                    f"{path}: row {i} (model {df['model'].iloc[i]!r}, metric {metric.iloc[i]!r}) has no "
                    f"'direction' and the metric's sense is unknown; add a direction column "
                    f"('lower' or 'higher'); known metrics: {sorted(KNOWN_DIRECTIONS)}"
                )
            direction.iloc[i] = known
    default_source = _rel(path, results_root)
    return _frame({
        "model": _text(df["model"]).to_numpy(dtype=object),
        "params_hash": _optional_text(df, "params_hash").to_numpy(dtype=object),
        "track": [track] * n,
        "experiment": _attention_experiment(df),
        "metric": metric.to_numpy(dtype=object),
        "value": _float(df["value"], "value", path),
        "direction": direction.to_numpy(dtype=object),
        "ci_low": _optional_float(df, "ci_low", path),
        "ci_high": _optional_float(df, "ci_high", path),
        "source": _optional_text(df, "source", default_source).to_numpy(dtype=object),
    }, n)


def _attention_table1(path, *, track: str, results_root, figure: str | None) -> pd.DataFrame:
    df = _read(path)
    _require(df, _ATTENTION_TABLE1_REQUIRED, path, "attention Table 1")
    _empty_required(df, ("train", "test", "features", "group"), path)
    n = len(df)
    L = _float(df["L"], "L", path)
    if np.isnan(L).any():
        raise ScoreTableError(f"{path}: column 'L' is empty in row {int(np.flatnonzero(np.isnan(L))[0])}")
    hashes = [params_hash({"L": int(v)}) for v in L]
    exps = (_text(df["train"]) + "_on_" + _text(df["test"])).to_numpy(dtype=object)
    metric = ["median_rp_" + _slug(g) for g in _text(df["group"])]
    source = figure if figure is not None else _rel(path, results_root)
    return _frame({
        "model": _text(df["features"]).to_numpy(dtype=object),
        "params_hash": np.asarray(hashes, dtype=object),
        "track": [track] * n,
        "experiment": exps,
        "metric": np.asarray(metric, dtype=object),
        "value": _float(df["median"], "median", path),
        "direction": ["higher"] * n,
        "source": [source] * n,
    }, n)


def attention_scores(
    *,
    metrics: str | os.PathLike | None = None,
    table1: str | os.PathLike | None = None,
    table1_figure: str | None = None,
    track: str = "attention",
    results_root: str | os.PathLike | None = "results",
) -> pd.DataFrame:
    """Attention track (papers/002) as long-table rows.

    Parameters
    ----------
    metrics : path, optional
        ``results/attention/metrics.csv``: long rows with required columns
        ``model, metric, value`` and optional ``direction`` ("lower"/"higher";
        when absent or empty, :data:`KNOWN_DIRECTIONS` by metric name, else an
        error naming file, row and metric), ``experiment`` (default ``all``),
        ``params_hash``, ``ci_low``, ``ci_high``, ``source`` (default: this file).
    table1 : path, optional
        ``results/attention/table1.csv`` (:func:`psybench.attention.evaluate.evaluate`):
        columns ``train, test, features, L, group, median`` (required), ``ND, sd,
        n_pairs`` (ignored).  One row per (feature model, L, train/test pair,
        group) -> metric ``median_rp_<group>`` (mean over observer pairs of the
        median saliency rank percentile of gaze, %, higher is better; ``n ma`` ->
        ``n_ma``, ``rf/n`` -> ``rf_n``), experiment ``<train>_on_<test>``, model =
        ``features``, params_hash = :func:`~psybench.provenance.params_hash` of
        ``{"L": L}``.  ``sd`` (a spread over pairs, not an interval) is not
        turned into ci_low/ci_high, which stay NaN.
    table1_figure : str, optional
        ``source`` of the Table 1 rows (e.g. the Fig. 8-style curves figure,
        relative to the results folder); default the table file itself.
    track : str
        Track name.
    results_root : path or None
        Default ``source`` paths are relative to this folder.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SCORE_COLUMNS`.
    """
    if metrics is None and table1 is None:
        raise ValueError("attention_scores: give metrics=, table1= or both")
    parts = []
    if metrics is not None:
        parts.append(_attention_metrics(metrics, track=track, results_root=results_root))
    if table1 is not None:
        parts.append(_attention_table1(table1, track=track, results_root=results_root, figure=table1_figure))
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------------------- all tracks


def _motion_entry(spec, results_root):
    if isinstance(spec, (str, os.PathLike)):
        return motion_scores(spec, results_root=results_root)
    spec = _known(dict(spec), "motion", ("table1", "fits", "figure"))
    if "table1" not in spec:
        raise ValueError(f"paths_by_track['motion'] needs key 'table1' (got keys {sorted(spec)})")
    return motion_scores(spec.pop("table1"), results_root=results_root, **spec)


def _intphys_entry(spec, results_root):
    if isinstance(spec, Mapping):
        spec = dict(spec)
        if "scores" not in spec:
            raise ValueError(f"paths_by_track['intphys'] needs key 'scores' (got keys {sorted(spec)})")
        _known(spec, "intphys", ("scores",))
        spec = spec["scores"]
    return intphys_scores(spec, results_root=results_root)


def _attention_entry(spec, results_root):
    if isinstance(spec, (str, os.PathLike)):
        spec = {"metrics": spec}
    spec = dict(spec)
    return attention_scores(results_root=results_root, **_known(spec, "attention", ("metrics", "table1",
                                                                                     "table1_figure")))


def _known(spec: dict, track: str, keys: Sequence[str]) -> dict:
    unknown = sorted(set(spec) - set(keys))
    if unknown:
        raise ValueError(f"paths_by_track[{track!r}] has unknown key(s) {unknown}; known: {sorted(keys)}")
    return {k: v for k, v in spec.items() if v is not None}


#: Converter per track name used by :func:`collect_scores`.
TRACK_CONVERTERS = {"motion": _motion_entry, "intphys": _intphys_entry, "attention": _attention_entry}


def collect_scores(
    paths_by_track: Mapping[str, object],
    *,
    results_root: str | os.PathLike | None = "results",
) -> pd.DataFrame:
    """Collect every track's result files into the one validated long table.

    Parameters
    ----------
    paths_by_track : mapping {track: spec}
        ``"motion"``: path of motion_table1.csv, or ``{"table1": path, "fits":
        [paths], "figure": "figures/motion/{model}_direction_error.png"}``.
        ``"intphys"``: a path or list of paths of ``<model>/scores.csv``, or
        ``{"scores": [...]}``.
        ``"attention"``: path of metrics.csv, or ``{"metrics": path, "table1":
        path, "table1_figure": "..."}``.
        ``"scores"`` (any other name is an error): already long-format tables
        (a path or list of paths with :data:`SCORE_COLUMNS`, e.g. a user's
        external results), appended as they are.
        A track whose spec is None or empty is skipped (not configured).
    results_root : path or None
        Folder ``source`` paths are relative to.

    Returns
    -------
    pandas.DataFrame
        :func:`psybench.aggregate.table.concat_scores` output: columns
        :data:`SCORE_COLUMNS`, sorted by key.  Missing values stay NaN here
        (nothing is imputed or dropped; an experiment a model was not run on has
        no row at all); each aggregate states its own treatment of NaN.

    Raises
    ------
    ValueError
        Unknown track name or spec key.
    ScoreTableError
        A file lacks a required column (names file and column), holds a
        non-numeric score, or two files give the same score key (names both).
    """
    frames: dict[str, pd.DataFrame] = {}
    for track, spec in paths_by_track.items():
        if spec is None or (isinstance(spec, (list, tuple, dict)) and len(spec) == 0):
            continue
        if track == "scores":
            paths = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
            for p in paths:
                frames[str(p)] = _read(p)
            continue
        if track not in TRACK_CONVERTERS:
            raise ValueError(
                f"paths_by_track has unknown track {track!r}; known: {sorted(TRACK_CONVERTERS) + ['scores']}"
            )
        frames[f"track {track}"] = TRACK_CONVERTERS[track](spec, results_root)
    if not frames:
        raise ValueError("collect_scores: no track has result files (paths_by_track is empty)")
    return concat_scores(frames)


def collect_to_table(
    paths_by_track: Mapping[str, object],
    out_csv: str | os.PathLike,
    *,
    results_root: str | os.PathLike | None = "results",
) -> pd.DataFrame:
    """:func:`collect_scores`, then write the long table as CSV + Parquet (``write_table``)."""
    from psybench.io.tables import write_table

    long_df = collect_scores(paths_by_track, results_root=results_root)
    write_table(long_df, out_csv)
    return long_df


def intphys_samples(
    answers: Mapping[str, str | os.PathLike],
    metadata: str | os.PathLike,
    *,
    track: str = "intphys",
) -> pd.DataFrame:
    """Per-quadruplet L_R errors of every IntPhys model, the items behind tied ranks.

    Parameters
    ----------
    answers : mapping model -> answer.txt
        The official-format answer file of each model (``results/intphys/<model>/answer.txt``).
    metadata : path
        The evaluation split's metadata table (``results/intphys/metadata/<split>.csv``).

    Returns
    -------
    DataFrame
        Columns :data:`psybench.report.leaderboard.SAMPLE_COLUMNS`: one row per model
        and quadruplet, experiment ``all/all/all/all``, metric ``L_R``, value the
        quadruplet's relative error (1, 0.5 for a tie, or 0). Their mean is the
        model's overall L_R; :func:`psybench.aggregate.ranks.ranks_with_ties`
        bootstraps them (paired over quadruplets) so that models whose L_R cannot
        be told apart share a rank.
    """
    from psybench.intphys.metrics import quadruplet_table, read_answer, relative_error
    from psybench.io.tables import read_table

    meta = read_table(metadata)
    frames = []
    for model, path in sorted(answers.items()):
        qt = quadruplet_table(read_answer(path, meta), meta)
        frames.append(pd.DataFrame({
            "model": model,
            "params_hash": "",
            "track": track,
            "experiment": "all/all/all/all",
            "metric": "L_R",
            "item": qt["quadruplet"].astype(str).to_numpy(),
            "value": relative_error(qt["pos_sum"].to_numpy(), qt["imp_sum"].to_numpy()),
        }))
    cols = ["model", "params_hash", "track", "experiment", "metric", "item", "value"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
