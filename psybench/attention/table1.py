"""The Table 1 stage: read the feature stores and gaze tables, evaluate, write the tables and the figure.

In the workflow the evaluation is three kinds of job (Shic & Scassellati 2007,
sec. 5.1-5.2, :mod:`psybench.attention.evaluate`):

1. :func:`run_control_scanpaths`, per training movie: the random controls'
   trajectories (they depend on the movie and its human gaze, not on the features);
2. :func:`run_evaluation_parts`, per training movie: for each model row (features, L),
   the humans' and controls' filters trained once, tested on every test movie
   paired with that training movie, written as one part per row
   (:func:`run_evaluation_part`: one row alone);
3. :func:`gather_evaluation`: the parts in the order of the models and pairs,
   written as ``table1``, ``curves`` and their figure -- the same tables as
   :func:`run_evaluation` in one process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from psybench.attention.controls import control_scanpaths
from psybench.attention.data_kind import with_data_column
from psybench.attention.defaults import DEFAULT_EVALUATION, EvaluationSettings
from psybench.attention.evaluate import evaluate
from psybench.attention.figures import plot_curves
from psybench.attention.movies import load_movie, load_movies
from psybench.io.tables import read_table, write_table

__all__ = ["run_evaluation", "run_control_scanpaths", "read_control_scanpaths", "run_evaluation_part",
           "run_evaluation_parts", "gather_evaluation"]

CONTROL_CATEGORIES = ("rs", "rp")


def run_evaluation(
    feature_stores: Mapping[str, Mapping[str, str]],
    gaze_tables: Mapping[str, str],
    *,
    table_path: str | os.PathLike,
    curves_path: str | os.PathLike,
    figure_path: str | os.PathLike,
    evaluation: EvaluationSettings | Mapping[str, Any] = DEFAULT_EVALUATION,
    **kwargs,
) -> pd.DataFrame:
    """Load stores and tables, run :func:`~psybench.attention.evaluate.evaluate`, write table1, curves and figure.

    Parameters
    ----------
    feature_stores : mapping movie -> features label -> store path
    gaze_tables : mapping movie -> gaze table path
    evaluation : EvaluationSettings or mapping
        The settings (or the ``attention.evaluation`` section they are built from);
        its ``in_memory_mb`` goes to :func:`~psybench.attention.movies.load_movies`,
        the whole to :func:`~psybench.attention.evaluate.evaluate`.
    **kwargs
        The rest of :func:`~psybench.attention.evaluate.evaluate` (models, pairs, lags_ms, ...).
    """
    evaluation = EvaluationSettings.from_config(evaluation)
    movies = load_movies(feature_stores, gaze_tables, in_memory_mb=evaluation.in_memory_mb)
    table, curves = evaluate(movies, evaluation=evaluation, **kwargs)
    write_table(table, table_path)
    write_table(curves, curves_path)
    plot_curves(curves, figure_path)
    return table


def run_control_scanpaths(
    movie: str,
    feature_store: str | os.PathLike,
    gaze_table: str | os.PathLike,
    *,
    out: str | os.PathLike,
    evaluation: EvaluationSettings | Mapping[str, Any] = DEFAULT_EVALUATION,
) -> pd.DataFrame:
    """Draw the random controls' trajectories of a training movie and write them as one table.

    The feature store only gives the movie's frame count, rate and gaze frame size.
    Output columns: the per-frame gaze columns, ``category`` (rs, rp) and ``set``
    (0 .. n_sets - 1), drawn with ``evaluation``'s n_sets, n_per_set and seed (the
    settings, or the ``attention.evaluation`` section they are built from).
    """
    evaluation = EvaluationSettings.from_config(evaluation)
    m = load_movie(movie, feature_store, gaze_table, decode=False)
    paths = control_scanpaths(m, m.gaze, n_sets=evaluation.n_sets, n_per_set=evaluation.n_per_set,
                              seed=evaluation.seed)
    table = pd.concat([t.assign(category=c, set=k) for c in CONTROL_CATEGORIES for k, t in enumerate(paths[c])],
                      ignore_index=True)
    write_table(table, out)
    return table


def read_control_scanpaths(path: str | os.PathLike) -> dict[str, list[pd.DataFrame]]:
    """The trajectories written by :func:`run_control_scanpaths`: {'rs': [set tables], 'rp': [...]}."""
    table = read_table(path)
    missing = {"category", "set", "subject", "frame", "x", "y", "valid"} - set(table.columns)
    if missing:
        raise ValueError(f"control scanpaths table {os.fspath(path)} lacks column(s) {sorted(missing)}")
    return {
        c: [g.drop(columns=["category", "set"]).reset_index(drop=True)
            for _k, g in table[table["category"] == c].groupby("set", sort=True)]
        for c in CONTROL_CATEGORIES
    }


def run_evaluation_part(
    feature_stores: Mapping[str, str],
    gaze_tables: Mapping[str, str],
    *,
    scanpaths: str | os.PathLike,
    model: Mapping[str, Any],
    train: str,
    pairs: Sequence[Sequence[str]],
    table_path: str | os.PathLike,
    curves_path: str | os.PathLike,
    lags_ms: Sequence[float],
    evaluation: EvaluationSettings | Mapping[str, Any] = DEFAULT_EVALUATION,
) -> pd.DataFrame:
    """Table 1 rows and curves of one model row on the (train, test) pairs of one training movie.

    Parameters
    ----------
    feature_stores : mapping movie -> this model's feature store
    gaze_tables : mapping movie -> gaze table path
    scanpaths : path of the training movie's :func:`run_control_scanpaths` table
    model : mapping with keys ``features`` (model name) and ``L``
    train : the training movie; only the pairs training on it are evaluated (once each)
    """
    part = {**model, "table": table_path, "curves": curves_path}
    return run_evaluation_parts({model["features"]: feature_stores}, gaze_tables, scanpaths=scanpaths, parts=[part],
                                train=train, pairs=pairs, lags_ms=lags_ms, evaluation=evaluation)


def run_evaluation_parts(
    feature_stores: Mapping[str, Mapping[str, str]],
    gaze_tables: Mapping[str, str],
    *,
    scanpaths: str | os.PathLike,
    parts: Sequence[Mapping[str, Any]],
    train: str,
    pairs: Sequence[Sequence[str]],
    lags_ms: Sequence[float],
    evaluation: EvaluationSettings | Mapping[str, Any] = DEFAULT_EVALUATION,
) -> pd.DataFrame:
    """The parts of every model row trained on one movie, in one process; each part's files as
    :func:`run_evaluation_part` writes them alone.

    What does not depend on the features is done once for all rows: reading the
    control scanpaths and the gaze, drawing the training points, the ceilings.

    Parameters
    ----------
    feature_stores : mapping model name -> movie -> feature store
    gaze_tables : mapping movie -> gaze table path
    scanpaths : path of the training movie's :func:`run_control_scanpaths` table
    parts : sequence of mappings with keys features (model name), L, table, curves (output paths)
    train : the training movie; only the pairs training on it are evaluated (once each)
    evaluation : the settings, or the config's ``attention.evaluation`` section they are built from

    Returns
    -------
    DataFrame
        The rows of every part, in the order of ``parts``.
    """
    evaluation = EvaluationSettings.from_config(evaluation)
    tests = list(dict.fromkeys(te for tr, te in pairs if tr == train))
    if not tests:
        raise ValueError(f"attention.pairs has no pair training on movie {train!r}")
    movies = dict.fromkeys([train, *tests])
    for p in parts:
        if p["features"] not in feature_stores:
            raise ValueError(f"no feature stores of model {p['features']!r} for its evaluation part")
    stores = {m: {p["features"]: feature_stores[p["features"]][m] for p in parts} for m in movies}
    loaded = load_movies(stores, gaze_tables, in_memory_mb=evaluation.in_memory_mb)
    models = [{"features": p["features"], "L": int(p["L"])} for p in parts]
    table, curves = evaluate(loaded, models=models, pairs=[(train, te) for te in tests], lags_ms=lags_ms,
                             evaluation=evaluation, scanpaths={train: read_control_scanpaths(scanpaths)})
    for p, m in zip(parts, models):
        rows = (table["features"] == m["features"]) & (table["L"] == m["L"])
        write_table(table[rows].reset_index(drop=True), p["table"])
        rows = (curves["features"] == m["features"]) & (curves["L"] == m["L"])
        write_table(curves[rows].reset_index(drop=True), p["curves"])
    return table


def gather_evaluation(
    parts: Sequence[Mapping[str, Any]],
    *,
    models: Sequence[Mapping[str, Any]],
    pairs: Sequence[Sequence[str]],
    table_path: str | os.PathLike,
    curves_path: str | os.PathLike,
    figure_path: str | os.PathLike,
    data: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Join the parts of :func:`run_evaluation_part` into table1, curves and their figure.

    Rows come in the order of :func:`~psybench.attention.evaluate.evaluate`: model
    rows, then (train, test) pairs as configured.

    Parameters
    ----------
    parts : sequence of mappings with keys features, L, train, table, curves (paths)
    data : mapping movie -> 'recorded' or 'synthetic', optional
        Each movie's gaze kind (:func:`psybench.attention.data_kind.movie_data`): the
        tables get a last column ``data``.
    """
    read = {(p["features"], int(p["L"]), p["train"]): (read_table(p["table"]), read_table(p["curves"])) for p in parts}
    tables, curves = [], []
    for model in models:
        for tr, te in pairs:
            key = (model["features"], int(model["L"]), tr)
            if key not in read:
                raise ValueError(f"no evaluation part for model {key[0]!r} L={key[1]} trained on {tr!r}")
            t, c = read[key]
            tables.append(t[t["test"] == te])
            curves.append(c[c["test"] == te])
    table = with_data_column(pd.concat(tables, ignore_index=True), data)
    curve_table = with_data_column(pd.concat(curves, ignore_index=True), data)
    write_table(table, table_path)
    write_table(curve_table, curves_path)
    plot_curves(curve_table, figure_path)
    return table
