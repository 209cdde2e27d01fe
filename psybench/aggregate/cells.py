"""Cells of a track's result table: text, numbers and booleans, read with errors that name the place.

Every track turns its own result tables into rows of the long score table
(:mod:`psybench.aggregate.table`) in a ``psybench.<track>.score_rows`` module; these
are the helpers those converters share. Tables are read with every cell as text
(an empty cell is a missing value, never 0), and each helper checks one thing: a
missing column, an empty key cell or a non-numeric score raises
:class:`~psybench.aggregate.table.ScoreTableError` naming the file, the column and
the row.
(:class:`ScoreTableError` lives here so that :mod:`psybench.aggregate.table` can read
files with :func:`read_cells` too.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.io.filecheck import check_table

__all__ = [
    "ScoreTableError",
    "read_cells",
    "require_columns",
    "require_filled",
    "text",
    "floats",
    "booleans",
    "optional_floats",
    "optional_text",
    "relative_source",
    "slug",
]



class ScoreTableError(ValueError):
    """A score table is malformed; the message names the file (or frame) and column."""


_TRUE = {"true", "1", "yes", "y", "t", "pass", "passed", "✔"}
_FALSE = {"false", "0", "no", "n", "f", "fail", "failed", "✘"}


def read_cells(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV (all cells as text, empty = missing) or Parquet table; errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise ScoreTableError(f"{path}: no such file")
    try:
        check_table(path.with_suffix(".csv"))  # a table written by psybench: its files as written
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as exc:  # parser errors of several kinds: report them with the file name
        raise ScoreTableError(f"{path}: cannot be read as a table ({type(exc).__name__}: {exc})") from exc


def require_columns(df: pd.DataFrame, columns: Iterable[str], path: str | os.PathLike, what: str) -> None:
    """Raise naming the file and the first of ``columns`` that ``df`` lacks (``what`` names the table)."""
    for c in columns:
        if c not in df.columns:
            raise ScoreTableError(
                f"{path}: missing column {c!r} (a {what} needs columns {list(columns)}; "
                f"the file has {list(df.columns)})"
            )


def text(s: pd.Series) -> pd.Series:
    """Stripped strings, "" for a missing cell."""
    out = s.astype(object).where(s.notna(), "")
    return out.map(lambda v: str(v).strip())


def floats(s: pd.Series, column: str, path: str | os.PathLike) -> np.ndarray:
    """Numbers; empty/NaN/NA cells -> NaN; anything else non-numeric is an error naming file and column."""
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=float, na_value=np.nan)
    raw = text(s)
    missing = raw.str.lower().isin({"", "nan", "na", "n/a", "null", "none", "<na>"})
    num = pd.to_numeric(raw.where(~missing, "nan"), errors="coerce")
    bad = num.isna() & ~missing
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ScoreTableError(f"{path}: column {column!r} has non-numeric value {raw.iloc[i]!r} in row {i}")
    return num.to_numpy(dtype=float)


def booleans(s: pd.Series, column: str, path: str | os.PathLike) -> np.ndarray:
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


def optional_floats(df: pd.DataFrame, column: str, path) -> np.ndarray:
    """:func:`floats` of ``column``, or all NaN when the table has no such column."""
    return floats(df[column], column, path) if column in df.columns else np.full(len(df), np.nan)


def optional_text(df: pd.DataFrame, column: str, default: str = "") -> pd.Series:
    """:func:`text` of ``column`` with empty cells as ``default``, or ``default`` throughout when absent."""
    if column not in df.columns:
        return pd.Series([default] * len(df), index=df.index, dtype=object)
    t = text(df[column])
    return t.where(t != "", default)


def require_filled(df: pd.DataFrame, columns: Sequence[str], path) -> None:
    """Raise naming the file, column and row of the first empty cell of ``columns``."""
    for c in columns:
        empty = text(df[c]) == ""
        if empty.any():
            raise ScoreTableError(f"{path}: column {c!r} is empty in row {int(np.flatnonzero(empty.to_numpy())[0])}")


def relative_source(path: str | os.PathLike, results_root: str | os.PathLike | None) -> str:
    """``path`` relative to ``results_root`` (POSIX separators); unchanged if outside it or no root."""
    p = Path(path)
    if results_root is None:
        return p.as_posix()
    try:
        return Path(os.path.relpath(p.resolve(), Path(results_root).resolve())).as_posix()
    except ValueError:
        return p.as_posix()


def slug(label: str) -> str:
    """``label`` with every run of characters outside ``[A-Za-z0-9_.-]`` as one "_"."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "x"
