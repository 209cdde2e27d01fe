"""A user's condition table: conditions for movies whose status.json and folder name give none.

Sources in order (Riochet et al. 2018, IntPhys V1.0, "Dev and Test": 2
visibilities x 3 motions x 3 object counts = 18 conditions per block): the
status.json keys, the descriptive quadruplet folder name, then this table
(config key ``intphys.conditions``). It fills only the movies the first two
sources leave without conditions, and never overrides them.

CSV columns: ``movie`` (``O1/0001/1``, or a quadruplet ``O1/0001`` for its four
runs), ``block``, ``visibility`` (visible | occluded), ``motion`` (static |
dynamic_1 | dynamic_2), ``n_objects`` (1-3).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from psybench.intphys.ingest.layout import IntPhysFormatError

__all__ = ["CONDITION_COLUMNS", "read_condition_table", "apply_condition_table"]

CONDITION_COLUMNS = ("movie", "block", "visibility", "motion", "n_objects")
_ALLOWED = {"visibility": ("visible", "occluded"), "motion": ("static", "dynamic_1", "dynamic_2")}


def read_condition_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read and check a condition table (columns :data:`CONDITION_COLUMNS`).

    Raises
    ------
    IntPhysFormatError
        Naming the file (and line) of a missing column, an unknown value or a
        repeated movie.
    """
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise IntPhysFormatError(f"condition table {path} (config key intphys.conditions) does not exist") from None
    missing = [c for c in CONDITION_COLUMNS if c not in df.columns]
    if missing:
        raise IntPhysFormatError(
            f"condition table {path} lacks column(s) {missing}; expected {list(CONDITION_COLUMNS)}"
        )
    for i, row in df.iterrows():
        where = f"condition table {path}, line {i + 2}"
        for col, allowed in _ALLOWED.items():
            if row[col] not in allowed:
                raise IntPhysFormatError(f"{where}: {col} {row[col]!r} is not one of {allowed}")
        if not row["n_objects"].isdigit() or not 1 <= int(row["n_objects"]) <= 3:
            raise IntPhysFormatError(f"{where}: n_objects {row['n_objects']!r} is not 1, 2 or 3")
        if not row["movie"].startswith(f"{row['block']}/"):
            raise IntPhysFormatError(f"{where}: movie {row['movie']!r} is not in block {row['block']!r}")
    dup = df["movie"][df["movie"].duplicated()]
    if len(dup):
        raise IntPhysFormatError(f"condition table {path}: movie {dup.iloc[0]!r} appears twice")
    return df.assign(n_objects=df["n_objects"].astype(int))


def apply_condition_table(metadata: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Fill the conditions of movies that have none from ``table``; ``condition_source`` = ``"table"``."""
    out = metadata.copy()
    by_key = table.set_index("movie")
    todo = out["visibility"].isna() & (out["split"] != "train")
    for i in out.index[todo]:
        key = next((k for k in (out.at[i, "movie"], out.at[i, "quadruplet"]) if k in by_key.index), None)
        if key is None:
            continue
        row = by_key.loc[key]
        out.loc[i, ["visibility", "motion"]] = [row["visibility"], row["motion"]]
        out.at[i, "n_objects"] = int(row["n_objects"])
        out.at[i, "condition_source"] = "table"
    return out
