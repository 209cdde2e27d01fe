"""The Table 1 stage: read the feature stores and gaze tables, evaluate, write the tables and the figure."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from psybench.attention.defaults import IN_MEMORY_MB
from psybench.attention.evaluate import evaluate
from psybench.attention.figures import plot_curves
from psybench.attention.movies import load_movies
from psybench.io.tables import write_table

__all__ = ["run_evaluation"]


def run_evaluation(
    feature_stores: Mapping[str, Mapping[str, str]],
    gaze_tables: Mapping[str, str],
    *,
    table_path: str | os.PathLike,
    curves_path: str | os.PathLike,
    figure_path: str | os.PathLike,
    **kwargs,
) -> pd.DataFrame:
    """Load stores and tables, run :func:`~psybench.attention.evaluate.evaluate`, write table1, curves and figure.

    Parameters
    ----------
    feature_stores : mapping movie -> features label -> store path
    gaze_tables : mapping movie -> gaze table path
    **kwargs
        ``in_memory_mb`` goes to :func:`~psybench.attention.movies.load_movies`, the rest to
        :func:`~psybench.attention.evaluate.evaluate`
        (models, pairs, ...).
    """
    movies = load_movies(feature_stores, gaze_tables, in_memory_mb=kwargs.pop("in_memory_mb", IN_MEMORY_MB))
    table, curves = evaluate(movies, **kwargs)
    write_table(table, table_path)
    write_table(curves, curves_path)
    plot_curves(curves, figure_path)
    return table
