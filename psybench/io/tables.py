"""Tidy tables as CSV (for people and spreadsheets) plus Parquet (typed, for code).

Both files are written to a temporary name and renamed into place. Values are
written in full precision and in a fixed row and column order, so two runs of
the same config give byte-identical CSVs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from psybench.io.atomic import atomic_output

__all__ = ["write_table", "read_table"]


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, parquet: bool = True) -> Path:
    """Write ``df`` to ``path`` (``.csv``) and, by default, ``path`` with ``.parquet``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; its index is not written.
    path : path-like
        The CSV path; must end in ``.csv``.
    parquet : bool
        Also write the Parquet sibling.
    """
    path = Path(path)
    if path.suffix != ".csv":
        raise ValueError(f"table path {path} must end in .csv (a .parquet sibling is written next to it)")
    with atomic_output(path) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
    if parquet:
        with atomic_output(path.with_suffix(".parquet")) as tmp:
            df.to_parquet(tmp, index=False)
    return path


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a table written by :func:`write_table` (Parquet if present, else CSV)."""
    path = Path(path)
    pq = path.with_suffix(".parquet")
    if pq.exists():
        return pd.read_parquet(pq)
    if not path.exists():
        raise FileNotFoundError(f"table {path} does not exist")
    return pd.read_csv(path)
