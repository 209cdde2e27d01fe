"""Tidy tables as CSV (for people and spreadsheets) plus Parquet (typed, for code).

Both files are written to a temporary name and renamed into place. Values are
written in full precision and in a fixed row and column order, so two runs of
the same config give byte-identical CSVs.

A rule declares the CSV as its input; the Parquet sibling is read instead only
while it still holds the same table: it records the SHA-256 of the CSV it was
written with (Parquet key-value metadata ``psybench.csv_sha256``), and
:func:`read_table` reads the CSV, the declared file, when the CSV has changed since
(edited by hand, or a writer killed between the two renames).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from psybench.io.atomic import atomic_output
from psybench.io.filecheck import check_table, record_table

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["write_table", "read_table", "read_csv_checked", "CSV_DIGEST_KEY"]

CSV_DIGEST_KEY = b"psybench.csv_sha256"


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = Path(path)
    if path.suffix != ".csv":
        raise ValueError(f"table path {path} must end in .csv (a .parquet sibling is written next to it)")
    with atomic_output(path) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
        digest = _file_sha256(tmp)
    if parquet:
        table = pa.Table.from_pandas(df, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), CSV_DIGEST_KEY: digest.encode()})
        with atomic_output(path.with_suffix(".parquet")) as tmp:
            pq.write_table(table, tmp)
    record_table(path, parquet)
    return path


def _parquet_matches(parquet: Path, csv: Path) -> bool:
    """Whether ``parquet`` was written with the CSV now at ``csv`` (its recorded digest matches)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        meta = pq.read_schema(parquet).metadata or {}
    except (OSError, pa.ArrowException):
        return False  # unreadable Parquet: the CSV is the declared table
    recorded = meta.get(CSV_DIGEST_KEY)
    return recorded is not None and recorded.decode() == _file_sha256(csv)


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a table written by :func:`write_table`: the file named, its typed Parquet sibling if unchanged.

    Parameters
    ----------
    path : path-like
        The CSV (what a rule declares as input) or a ``.parquet`` file. For a CSV,
        the Parquet sibling is read (exact dtypes) if it records this CSV's SHA-256;
        otherwise the CSV itself, so an edited CSV is what the reader gets.

    Raises
    ------
    FileNotFoundError
        Naming the missing table.
    psybench.io.filecheck.FileCheckError
        The table's files differ from what :func:`write_table` wrote (a half CSV,
        a garbage Parquet), naming the file.
    """
    import pandas as pd
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"table {path} does not exist")
    check_table(path.with_suffix(".csv"))  # both files, when written by write_table
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    sibling = path.with_suffix(".parquet")
    if sibling.exists() and _parquet_matches(sibling, path):
        return pd.read_parquet(sibling)
    return pd.read_csv(path)


def read_csv_checked(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """``pandas.read_csv`` of a table, after checking its files against their manifest (if it has one).

    For readers that want the CSV's own parsing (``dtype=str`` ...); raises
    :class:`psybench.io.filecheck.FileCheckError` naming a changed file.
    """
    import pandas as pd
    check_table(path)
    return pd.read_csv(path, **kwargs)
