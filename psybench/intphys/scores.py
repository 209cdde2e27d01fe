"""Score one IntPhys model: join the labels to its predictions (or answer.txt) and write its tables.

This is where the labels (``possible``) and conditions of the evaluated split
meet a model's scores, and nowhere earlier (the models see an
:class:`~psybench.intphys.models.observation.Observation`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import pandas as pd

from psybench.intphys.answer import answer_ids, read_answer, write_answer
from psybench.intphys.metrics import FACTORS, MIN_QUADRUPLETS_CI, score_table
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
    min_ci: int = MIN_QUADRUPLETS_CI,
) -> pd.DataFrame:
    """Score one model: from per-shard prediction tables (``movie, p``) or an external answer.txt.

    Writes the results table (:func:`score_table`, CSV + Parquet) and the model's
    answer.txt (for an external answer, its validated, normalised copy) with the
    ids the official scorer reads (:func:`psybench.intphys.answer.answer_ids`). A split
    without labels (the released test set: no status.json) is not scored: the
    answer.txt (the submission) is written and kept, the results table has its
    columns and no rows, and a message on stderr says why.

    Raises
    ------
    ValueError
        When some movies of the split are labelled and others are not.
    """
    meta = read_table(metadata_path)
    if answer is not None:
        scores = read_answer(answer, meta)
    else:
        if not predictions:
            raise ValueError(f"model {model!r}: neither predictions nor an answer file to score")
        df = pd.concat([read_table(p) for p in predictions], ignore_index=True)
        scores = pd.Series(df["p"].to_numpy(float), index=df["movie"].astype(str))
    write_answer(scores, out_answer, metadata=meta)
    ids = answer_ids(meta)
    short = meta.loc[meta["split"].astype(str) != "train", "movie"].astype(str)
    short = short[(ids.reindex(short).to_numpy() == short.to_numpy())].tolist()
    if short:
        print(f"model {model!r}: {len(short)} movie(s) of {out_answer} keep the short id <block>/<index>/<run> "
              f"(e.g. {short[0]}): no descriptive folder name nor conditions (status.json, intphys.conditions) "
              "give their visibility; the official scorer selects visible and occluded scenes by those words in "
              "the id", file=sys.stderr)
    labelled = meta["possible"].notna()
    if not labelled.any():
        print(f"model {model!r}: scoring skipped, {metadata_path} has no labels ('possible': the split has no "
              f"status.json, as in the released test set); {out_answer} is the submission", file=sys.stderr)
        table = pd.DataFrame(columns=["model", *FACTORS, "metric", "value", "ci_low", "ci_high", "n_quadruplets"])
        write_table(table, out_scores)
        return table
    if not labelled.all():
        bad = meta.loc[~labelled, "movie"].astype(str).tolist()
        raise ValueError(f"{metadata_path}: movies {bad[:6]} have no label while others have: cannot score a "
                         "partly labelled split")
    table = score_table(scores, meta, model=model, n_boot=n_boot, seed=seed, min_ci=min_ci)
    write_table(table, out_scores)
    return table
