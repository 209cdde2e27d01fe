"""Intuitive-physics track results as rows of the long score table, and the per-item samples.

* :func:`score_rows`: each model's ``scores.csv`` (:func:`psybench.intphys.metrics.score_table`:
  model, block, visibility, motion, n_objects, metric, value, ci_low, ci_high) ->
  experiment ``<block>/<visibility>/<motion>/<n_objects>`` (coarser groupings read
  ``all``), metrics ``L_R``, ``L_R_strict``, ``L_A`` (error rates, lower is better;
  Riochet et al. 2018, sec. 3).
* :func:`sample_rows`: each model's per-quadruplet relative error, the items behind
  the ranks with statistical ties (:func:`psybench.aggregate.ranks.ranks_with_ties`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

from psybench.aggregate import cells
from psybench.aggregate.table import SAMPLE_COLUMNS, score_frame
from psybench.intphys.metrics import FACTORS, quadruplet_table, read_answer, relative_error
from psybench.io.tables import read_table

__all__ = ["score_rows", "sample_rows"]

_REQUIRED = ("model", *FACTORS, "metric", "value")


def score_rows(
    scores: Sequence[str | os.PathLike] | str | os.PathLike,
    *,
    track: str = "intphys",
    results_root: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Intuitive-physics track (Riochet et al. 2018, IntPhys, sec. 3) as long-table rows.

    Parameters
    ----------
    scores : path or sequence of paths
        Per-model scores tables written by
        :func:`psybench.intphys.metrics.score_table`: columns ``model, block,
        visibility, motion, n_objects, metric, value`` (required) and ``ci_low,
        ci_high, n_quadruplets`` (optional).
    track : str
        Track name.
    results_root : path or None
        ``source`` = the scores file relative to this folder (None: as given).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~psybench.aggregate.table.SCORE_COLUMNS`; ``experiment`` =
        ``"<block>/<visibility>/<motion>/<n_objects>"`` (a coarser grouping reads
        ``all`` in the dropped factors, ``all/all/all/all`` = overall); metrics
        ``L_R``, ``L_R_strict``, ``L_A`` as in the file, all error rates (lower is
        better); intervals from the file's bootstrap (NaN if absent).
    """
    if isinstance(scores, (str, os.PathLike)):
        scores = [scores]
    parts = []
    for path in scores:
        df = cells.read_cells(path)
        cells.require_columns(df, _REQUIRED, path, "IntPhys scores table")
        cells.require_filled(df, ("model", "metric"), path)
        n = len(df)
        factors = [cells.optional_text(df, f, "all") for f in FACTORS]
        exps = factors[0].str.cat(factors[1:], sep="/")
        parts.append(score_frame({
            "model": cells.text(df["model"]).to_numpy(dtype=object),
            "track": [track] * n,
            "experiment": exps.to_numpy(dtype=object),
            "metric": cells.text(df["metric"]).to_numpy(dtype=object),
            "value": cells.floats(df["value"], "value", path),
            "direction": ["lower"] * n,
            "ci_low": cells.optional_floats(df, "ci_low", path),
            "ci_high": cells.optional_floats(df, "ci_high", path),
            "source": [cells.relative_source(path, results_root)] * n,
        }, n))
    if not parts:
        return score_frame({}, 0)
    return pd.concat(parts, ignore_index=True)


def sample_rows(
    answers: Mapping[str, str | os.PathLike],
    metadata: str | os.PathLike,
    *,
    track: str = "intphys",
) -> pd.DataFrame:
    """Per-quadruplet L_R errors of every IntPhys model, the items behind tied ranks.

    Parameters
    ----------
    answers : mapping model -> answer.txt
        The official-format answer file of each model.
    metadata : path
        The evaluation split's metadata table.
    track : str
        Track name.

    Returns
    -------
    DataFrame
        Columns :data:`~psybench.aggregate.table.SAMPLE_COLUMNS`: one row per
        model and quadruplet, experiment ``all/all/all/all``, metric ``L_R``, value
        the quadruplet's relative error (1, 0.5 for a tie, or 0). Their mean is the
        model's overall L_R; :func:`psybench.aggregate.ranks.ranks_with_ties`
        bootstraps them (paired over quadruplets) so that models whose L_R cannot
        be told apart share a rank. An unlabelled split (test set) has none.
    """
    meta = read_table(metadata)
    frames = []
    if meta["possible"].isna().all():  # unlabelled (released test set): nothing to score
        answers = {}
    for model, path in sorted(answers.items()):
        qt = quadruplet_table(read_answer(path, meta), meta)
        frames.append(pd.DataFrame({
            "model": model,
            "params_hash": "",
            "track": track,
            "experiment": "all/all/all/all",
            "metric": "L_R",
            "item": qt["quadruplet"].astype(str).to_numpy(),
            "value": relative_error(qt["pos_sum"].to_numpy(), qt["imp_sum"].to_numpy()),
        }))
    cols = SAMPLE_COLUMNS
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
