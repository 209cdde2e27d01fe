"""The one tidy long table of every score, and its pivot into error vectors.

Every track ends in scores; the aggregate stage gathers them in one long table,
one row per (model, parameter set, track, experiment, metric), with columns
:data:`SCORE_COLUMNS`:

``model``        registered model name
``params_hash``  :func:`psybench.provenance.params_hash` of the model's parameters
                 ("" when a model runs with one parameter set only)
``track``        "motion", "attention", "physics", ...
``experiment``   experiment or condition within the track
``metric``       name of the score
``value``        the number; empty/NaN = missing (never 0)
``direction``    "lower" or "higher": which is better
``ci_low``       lower end of the interval around value (NaN if none)
``ci_high``      upper end (NaN if none)
``source``       relative path of the file/figure the number comes from

:func:`error_matrix` pivots that table into the (entries x criteria) matrix of
error vectors ``v(a)`` of Cabezas & Trujillo (2011), A non-linear quantitative evaluation
approach for disparity estimation, VISAPP, sec. 3.1 (a criterion = track/experiment/metric,
like the paper's image x region), keeping missing values missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.aggregate.cells import ScoreTableError, read_cells, text
from psybench.aggregate.criteria import TABLE_DIRECTIONS
from psybench.aggregate.labels import annotate, entry_labels, headline_criteria, in_model
from psybench.io.tables import read_table, write_table

__all__ = [
    "SCORE_COLUMNS",
    "KEY_COLUMNS",
    "ScoreTableError",
    "SAMPLE_COLUMNS",
    "score_frame",
    "read_scores",
    "concat_scores",
    "write_scores",
    "write_samples",
    "criterion_name",
    "entry_labels",
    "error_matrix",
    "leaderboard",
]

SCORE_COLUMNS = [
    "model",
    "params_hash",
    "track",
    "experiment",
    "metric",
    "value",
    "direction",
    "ci_low",
    "ci_high",
    "source",
]
#: Columns of the per-item samples behind one score (e.g. one IntPhys quadruplet's
#: relative error), bootstrapped into ranks with ties.
SAMPLE_COLUMNS = ["model", "params_hash", "track", "experiment", "metric", "item", "value"]
#: Columns that identify one score; a key appears at most once in the long table.
KEY_COLUMNS = ["model", "params_hash", "track", "experiment", "metric"]
_TEXT_COLUMNS = ["model", "params_hash", "track", "experiment", "metric", "direction", "source"]
_NUMERIC_COLUMNS = ["value", "ci_low", "ci_high"]
_REQUIRED_TEXT = ["model", "track", "metric"]
_MISSING_TOKENS = {"", "nan", "NaN", "NA", "N/A", "n/a", "null", "NULL", "None", "<NA>"}
_CRITERION_SEP = "/"


def criterion_name(track: str, experiment: str, metric: str) -> str:
    """Criterion identifier ``"track/experiment/metric"`` (empty parts are skipped)."""
    return _CRITERION_SEP.join(p for p in (track, experiment, metric) if p)


def _numeric(s: pd.Series, column: str, where: str) -> pd.Series:
    if pd.api.types.is_numeric_dtype(s):
        return s.astype(float)
    raw = s.astype(object).where(s.notna(), "")
    raw = raw.map(lambda v: str(v).strip())
    missing = raw.isin(_MISSING_TOKENS)
    num = pd.to_numeric(raw.where(~missing, "nan"), errors="coerce")
    bad = num.isna() & ~missing
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ScoreTableError(
            f"{where}: column {column!r} has non-numeric value {raw.iloc[i]!r} in row {i} "
            "(write numbers; leave the cell empty for a missing value)"
        )
    return num.astype(float)


def _validate(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Check one frame against :data:`SCORE_COLUMNS`; return it normalised."""
    if not isinstance(df, pd.DataFrame):
        raise ScoreTableError(f"{where}: expected a pandas DataFrame, got {type(df).__name__}")
    for c in SCORE_COLUMNS:
        if c not in df.columns:
            raise ScoreTableError(f"{where}: missing column {c!r} (a score table needs columns {SCORE_COLUMNS})")
    out = df.reset_index(drop=True).copy()
    for c in _TEXT_COLUMNS:
        out[c] = text(out[c]).astype(str)  # missing as "" (pandas 3 would otherwise write 'nan')
    for c in _NUMERIC_COLUMNS:
        out[c] = _numeric(out[c], c, where)
    for c in _REQUIRED_TEXT:
        empty = out[c] == ""
        if empty.any():
            raise ScoreTableError(f"{where}: column {c!r} is empty in row {int(np.flatnonzero(empty.to_numpy())[0])}")
    out["direction"] = out["direction"].str.lower()
    bad = ~out["direction"].isin(list(TABLE_DIRECTIONS))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ScoreTableError(
            f"{where}: column 'direction' is {out['direction'].iloc[i]!r} in row {i} "
            f"(model {out['model'].iloc[i]!r}, metric {out['metric'].iloc[i]!r}); use 'lower' or 'higher'"
        )
    out["_origin"] = where
    return out


def read_scores(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate one score table (``.csv`` or ``.parquet``).

    CSV cells are read as text first, so a hash made of digits keeps its leading
    zeros, and an empty cell is a missing value (never 0).

    Raises
    ------
    ScoreTableError
        The file cannot be parsed, or lacks a column (the message names both).
    """
    return concat_scores({str(Path(path)): read_cells(path)})


def concat_scores(
    frames: Mapping[str, pd.DataFrame] | Iterable[pd.DataFrame | str | os.PathLike | tuple[str, pd.DataFrame]],
) -> pd.DataFrame:
    """Validate and concatenate score tables into the one long table.

    Parameters
    ----------
    frames : mapping {name: DataFrame} or iterable
        Items of the iterable may be DataFrames (named ``frame <i>`` in errors),
        paths of ``.csv``/``.parquet`` files (read with :func:`read_scores`), or
        ``(name, DataFrame)`` pairs.  Names (usually file paths) appear in error
        messages.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SCORE_COLUMNS` (then any extra columns), text columns as
        strings with "" for missing, ``value``/``ci_low``/``ci_high`` as float
        with NaN for missing, ``direction`` lower-cased; sorted by
        :data:`KEY_COLUMNS`.

    Raises
    ------
    ScoreTableError
        A missing column (message names the column and the file), a bad
        direction or number, an empty model/track/metric, or the same key
        (model, params_hash, track, experiment, metric) twice (names both files).
    """
    items: list[tuple[str, pd.DataFrame]] = []
    if isinstance(frames, pd.DataFrame):
        frames = [frames]
    if isinstance(frames, Mapping):
        items = [(str(k), v) for k, v in frames.items()]
    else:
        for i, f in enumerate(frames):
            if isinstance(f, (str, os.PathLike)):
                items.append((str(f), read_scores(f)))
            elif isinstance(f, tuple) and len(f) == 2:
                items.append((str(f[0]), f[1]))
            else:
                items.append((f"frame {i}", f))
    if not items:
        raise ScoreTableError("no score tables to concatenate")
    parts = [_validate(df, where) for where, df in items]
    long = pd.concat(parts, ignore_index=True)
    dup = long.duplicated(KEY_COLUMNS, keep=False)
    if dup.any():
        first = long.loc[dup].iloc[0]
        key = {c: first[c] for c in KEY_COLUMNS}
        same = (long[KEY_COLUMNS] == pd.Series(key)).all(axis=1)
        origins = sorted(set(long.loc[same, "_origin"]))
        raise ScoreTableError(f"score {key} appears more than once (in {', '.join(origins)})")
    extras = [c for c in long.columns if c not in SCORE_COLUMNS and c != "_origin"]
    long = long[SCORE_COLUMNS + extras]
    return long.sort_values(KEY_COLUMNS, kind="stable").reset_index(drop=True)


def score_frame(columns: Mapping[str, Any], n: int) -> pd.DataFrame:
    """A frame of ``n`` score rows with columns :data:`SCORE_COLUMNS` in order.

    ``columns`` maps column names to sequences of length ``n``; a text column not
    given is "" and a numeric one (value, ci_low, ci_high) NaN.  Text columns are
    object arrays, numeric ones float.  Each track's ``score_rows`` module builds its
    rows with this and writes them with :func:`write_scores`.
    """
    data = {c: columns.get(c, [""] * n if c not in _NUMERIC_COLUMNS else np.full(n, np.nan))
            for c in SCORE_COLUMNS}
    return pd.DataFrame({c: (np.asarray(v, dtype=object) if c not in _NUMERIC_COLUMNS
                             else np.asarray(v, dtype=float)) for c, v in data.items()}, columns=SCORE_COLUMNS)


def write_scores(
    frames: pd.DataFrame | Mapping[str, pd.DataFrame] | Iterable[pd.DataFrame | str | os.PathLike],
    path: str | os.PathLike,
    *,
    algorithms: Mapping[str, str] | None = None,
    settings: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Validate and concatenate score rows (:func:`concat_scores`), then write CSV + Parquet.

    ``algorithms`` / ``settings`` (optional) add the readable ``algorithm`` and
    ``setting`` columns (:func:`psybench.aggregate.labels.annotate`).

    The one writer of long score tables: a track's own rows (the workflow's
    ``<track>_score_rows`` rules) and their concatenation (``aggregate_scores``)
    both go through it.

    Returns
    -------
    pandas.DataFrame
        The table as written.
    """
    long_df = concat_scores(frames)
    if algorithms is not None or settings is not None:
        long_df = annotate(long_df, algorithms=algorithms, settings=settings)
    write_table(long_df, path)
    return long_df


def write_samples(
    frames: Sequence[pd.DataFrame | str | os.PathLike], path: str | os.PathLike
) -> pd.DataFrame:
    """Concatenate per-item sample tables (frames, or paths read with ``read_table``) and write them.

    Columns :data:`SAMPLE_COLUMNS` in order; no frames give an empty table with
    those columns.
    """
    parts = [f if isinstance(f, pd.DataFrame) else read_table(f) for f in frames]
    if parts:
        samples = pd.concat(parts, ignore_index=True)[SAMPLE_COLUMNS]
    else:
        samples = pd.DataFrame(columns=SAMPLE_COLUMNS)
    write_table(samples, path)
    return samples


def error_matrix(
    long_df: pd.DataFrame,
    *,
    criteria: Sequence[str] | None = None,
    track: str | None = None,
    model: str | None = None,
    values: str = "value",
) -> tuple[pd.DataFrame, list[str]]:
    """Pivot the long table into error vectors: entries x criteria.

    Parameters
    ----------
    long_df : pandas.DataFrame
        The long table (:func:`concat_scores` output, or any frame with
        :data:`SCORE_COLUMNS`; it is validated again).
    criteria : sequence of str, optional
        Criteria to keep, named ``"track/experiment/metric"``
        (:func:`criterion_name`), in the order wanted.  Default: every criterion
        present (after the ``track`` filter) but the 0/1 verdicts, sorted
        (:func:`psybench.aggregate.labels.headline_criteria`).
    track : str, optional
        Keep one track only (a per-track leaderboard); default all tracks (the
        cross-track leaderboard).
    model : str, optional
        Intra-technique evaluation (Cabezas & Trujillo 2011, sec. 3.3): keep this model only
        (or the models whose optional ``algorithm`` column names it); its parameter sets
        become the entries (:func:`psybench.aggregate.labels.entry_labels`).
        Default: inter-technique, entries are models (``model@params_hash``, or ``model
        setting`` where the optional ``setting`` column names the parameter set, for a
        model present with several parameter sets).
    values : str
        Column to pivot: ``"value"`` (default), ``"ci_low"``, ``"ci_high"`` or
        ``"source"`` (for links from each number to its figure).

    Returns
    -------
    matrix : pandas.DataFrame, shape (n_entries, n_criteria)
        Index ``entry`` (sorted), one column per criterion; a score absent from
        the long table, or present with an empty value, is NaN.
    directions : list of str
        ``"min"`` (lower is better) or ``"max"`` per column, for
        :func:`psybench.aggregate.pareto.pareto_fronts`.

    Raises
    ------
    ScoreTableError
        Unknown track/model/criterion (the message lists what exists), or one
        criterion declared both "lower" and "higher".
    """
    if values not in ("value", "ci_low", "ci_high", "source"):
        raise ValueError(f"values={values!r} must be one of 'value', 'ci_low', 'ci_high', 'source'")
    long_df = concat_scores({"long table": long_df})
    if track is not None:
        tracks = sorted(set(long_df["track"]))
        if track not in tracks:
            raise ScoreTableError(f"track {track!r} has no scores (tracks present: {tracks})")
        long_df = long_df[long_df["track"] == track]
    if model is not None:
        keep = in_model(long_df, model)
        if not keep.any():
            raise ScoreTableError(f"model {model!r} has no scores (models present: {sorted(set(long_df['model']))})")
        long_df = long_df[keep]
    long_df = long_df.assign(
        criterion=[criterion_name(*t) for t in zip(long_df["track"], long_df["experiment"], long_df["metric"])],
        entry=entry_labels(long_df, intra=model is not None).to_numpy(),
    )
    present = sorted(set(long_df["criterion"]))
    if criteria is None:
        criteria = headline_criteria(present)
        long_df = long_df[long_df["criterion"].isin(criteria)]
    else:
        criteria = list(criteria)
        for c in criteria:
            if c not in present:
                raise ScoreTableError(f"criterion {c!r} has no scores (criteria present: {present})")
        long_df = long_df[long_df["criterion"].isin(criteria)]
    if not criteria:
        raise ScoreTableError("no criteria to compare: the long table is empty after filtering")
    directions = []
    for c in criteria:
        d = sorted(set(long_df.loc[long_df["criterion"] == c, "direction"]))
        if len(d) != 1:
            raise ScoreTableError(f"criterion {c!r} is declared with directions {d}; it needs exactly one")
        directions.append(TABLE_DIRECTIONS[d[0]])
    dup = long_df.duplicated(["entry", "criterion"], keep=False)
    if dup.any():
        row = long_df.loc[dup].iloc[0]
        raise ScoreTableError(f"entry {row['entry']!r} has criterion {row['criterion']!r} more than once")
    matrix = long_df.pivot(index="entry", columns="criterion", values=values)
    matrix = matrix.reindex(index=sorted(matrix.index), columns=criteria)
    matrix.index.name = "entry"
    matrix.columns.name = None
    if values != "source":
        matrix = matrix.astype(float)
    return matrix, directions


def leaderboard(
    long_df: pd.DataFrame,
    *,
    track: str | None = None,
    criteria: Sequence[str] | None = None,
    model: str | None = None,
    epsilon: Any = None,
    missing: str = "ignore",
) -> pd.DataFrame:
    """Pareto fronts and average rank of the entries of a long score table.

    :func:`error_matrix` followed by :func:`psybench.aggregate.pareto.pareto_table`.

    Parameters
    ----------
    long_df : pandas.DataFrame
        Long score table.
    track, criteria, model
        As in :func:`error_matrix` (per-track or cross-track; inter- or
        intra-technique).
    epsilon : None, float or mapping {criterion: eps}
        Dominance tolerance per criterion (Cabezas & Trujillo 2011, sec. 5), in the criterion's
        units.
    missing : {"ignore", "raise"}
        ``"ignore"`` (default here, because a model not run on one experiment is
        common): a pair of entries is compared on the criteria both have, and the
        average rank is over the criteria an entry has (``n_ranked``).
        ``"raise"``: any missing score is an error.

    Returns
    -------
    pandas.DataFrame
        :func:`~psybench.aggregate.pareto.pareto_table` columns with label column
        ``entry``; ``attrs`` holds ``criteria``, ``directions``, ``epsilon`` and
        ``missing``.
    """
    from psybench.aggregate.pareto import pareto_table

    matrix, directions = error_matrix(long_df, criteria=criteria, track=track, model=model)
    table = pareto_table(
        matrix,
        criteria=list(matrix.columns),
        directions=directions,
        epsilon=epsilon,
        missing=missing,
    )
    table.attrs.update(
        criteria=list(matrix.columns),
        directions=directions,
        epsilon=epsilon if not isinstance(epsilon, np.ndarray) else epsilon.tolist(),
        missing=missing,
    )
    return table
