"""Score an IntPhys submission (``answer.txt``) against a labelled tree, without ingesting its frames.

What ``psybench score-answer`` runs. The labels and conditions come from the tree
as the ingest stage reads them (:func:`psybench.intphys.ingest.movie_metadata`:
status.json, else the folder name, else a condition table), the answer is read and
checked as ``psybench validate-answer`` checks it
(:func:`psybench.intphys.answer.read_answer`), and the scores are the workflow's
(:func:`psybench.intphys.metrics.score_table`: L_R, L_R_strict and L_A per
condition, Riochet et al. 2018, sec. 3.2). Only labelled splits can be scored
locally: the released dev set; the test set's labels are withheld, its answers are
scored by submission to the IntPhys server (validate them first).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from psybench.intphys.answer import read_answer
from psybench.intphys.ingest.status import tree_metadata
from psybench.intphys.metrics import MIN_QUADRUPLETS_CI, score_table

__all__ = ["tree_metadata", "score_answer"]


def score_answer(
    answer: str | os.PathLike,
    root: str | os.PathLike,
    split: str = "dev",
    *,
    model: str | None = None,
    conditions: str | os.PathLike | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    min_ci: int = MIN_QUADRUPLETS_CI,
) -> pd.DataFrame:
    """Score a submission against the labels of ``root/<split>``.

    Parameters
    ----------
    answer : path-like
        ``answer.txt``: one ``<movie id> <P(possible)>`` line per movie, ids as the
        official scorer reads them (:func:`psybench.intphys.answer.answer_ids`) or
        the short ``<block>/<index>/<run>`` of older files.
    root, split, conditions
        As :func:`tree_metadata`.
    model : str, optional
        The ``model`` column (default: the answer's folder name).
    n_boot, seed, min_ci
        Bootstrap of the intervals, as the workflow's ``intphys.n_boot``,
        ``intphys.seed`` and ``intphys.min_quadruplets_ci``.

    Returns
    -------
    pandas.DataFrame
        :func:`psybench.intphys.metrics.score_table`'s rows.

    Raises
    ------
    ValueError
        The split has no labels (the released test set: submit the answer
        instead), or only some movies have one.
    psybench.intphys.answer.AnswerFormatError
        A bad answer line, naming file and line.
    """
    meta = tree_metadata(root, split, conditions=conditions)
    where = Path(root) / split
    labelled = meta["possible"].notna()
    if not labelled.any():
        raise ValueError(f"{where} has no labels (no 'possible' in its status.json files, as in the released test "
                         "split): it can only be scored by submitting the answer to the IntPhys server; check it "
                         "first with psybench validate-answer")
    if not labelled.all():
        bad = meta.loc[~labelled, "movie"].astype(str).tolist()
        raise ValueError(f"{where}: movies {bad[:6]} have no label while others have: cannot score a partly "
                         "labelled split")
    scores = read_answer(answer, meta, require_all=True)
    name = model or Path(answer).resolve().parent.name
    return score_table(scores, meta, model=name, n_boot=n_boot, seed=seed, min_ci=min_ci)
