"""Whether a row's gaze was recorded from people or drawn by the synthetic observers: the ``data`` column.

Every attention table (``table1.csv``, ``curves.csv``, ``metrics.csv``) and the
attention rows of the long score table carry a ``data`` column so that a number
computed on synthetic gaze (the default run's seeded observers,
:mod:`psybench.attention.gaze.observers`) is never read as a result on people:
``recorded`` when every movie of the row's (train, test) pair has recorded gaze
(``attention.movies.<movie>.gaze``), ``synthetic`` when every one has synthetic
observers (``observers``), ``recorded+synthetic`` for a pair of one of each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # planning the workflow imports this module: no pandas import at run time
    import pandas as pd

__all__ = ["RECORDED", "SYNTHETIC", "movie_data", "pair_data", "with_data_column"]

RECORDED = "recorded"
SYNTHETIC = "synthetic"


def movie_data(movies: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """movie -> ``recorded`` (its entry has ``gaze`` files) or ``synthetic`` (``observers``)."""
    return {str(m): RECORDED if (spec or {}).get("gaze") is not None else SYNTHETIC for m, spec in movies.items()}


def pair_data(data: Mapping[str, str], train: str, test: str) -> str:
    """The ``data`` of a (train, test) pair from each movie's (:func:`movie_data`)."""
    kinds = sorted({data[str(train)], data[str(test)]})
    return "+".join(kinds)


def with_data_column(table: pd.DataFrame, data: Mapping[str, str] | None) -> pd.DataFrame:
    """``table`` with a last column ``data`` (from its ``train`` and ``test`` columns).

    ``data``: movie -> kind (:func:`movie_data`); None leaves the table as it is.

    Raises
    ------
    ValueError
        For a movie of the table missing from ``data``.
    """
    if data is None or table.empty:
        return table
    missing = sorted((set(table["train"].astype(str)) | set(table["test"].astype(str))) - set(data))
    if missing:
        raise ValueError(f"attention tables: movie(s) {missing} have no gaze kind (recorded or synthetic)")
    kinds = [pair_data(data, tr, te) for tr, te in zip(table["train"], table["test"])]
    out = table.drop(columns="data", errors="ignore")
    out["data"] = kinds  # last: the columns before it keep their places
    return out
