"""Score one IntPhys model: join the labels to its predictions (or answer.txt) and write its tables.

This is where the labels (``possible``) and conditions of the evaluated split
meet a model's scores, and nowhere earlier (the models see an
:class:`~psybench.intphys.models.observation.Observation`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from psybench.intphys.answer import read_answer, write_answer
from psybench.intphys.metrics import score_table
from psybench.io.tables import read_table, write_table

__all__ = ["score_model"]


def score_model(
    model: str,
    metadata_path: str | os.PathLike,
    out_scores: str | os.PathLike,
    out_answer: str | os.PathLike,
    *,
    predictions: Sequence[str | os.PathLike] = (),
    answer: str | os.PathLike | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Score one model: from per-shard prediction tables (``movie, p``) or an external answer.txt.

    Writes the results table (:func:`score_table`, CSV + Parquet) and the model's
    answer.txt (for an external answer, its validated, normalised copy).
    """
    meta = read_table(metadata_path)
    if answer is not None:
        scores = read_answer(answer, meta)
    else:
        if not predictions:
            raise ValueError(f"model {model!r}: neither predictions nor an answer file to score")
        df = pd.concat([read_table(p) for p in predictions], ignore_index=True)
        scores = pd.Series(df["p"].to_numpy(float), index=df["movie"].astype(str))
    write_answer(scores, out_answer)
    table = score_table(scores, meta, model=model, n_boot=n_boot, seed=seed)
    write_table(table, out_scores)
    return table
