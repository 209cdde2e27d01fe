"""IntPhys metrics (Riochet et al. 2018, IntPhys V1.0, "Evaluation metric").

Relative error rate, over the N quadruplets S_i of a condition::

    L_R = 1/N sum_i 1[ sum_j P(Pos_i^j) < sum_j P(Imp_i^j) ]

The official scorer used this strict ``<`` and therefore gave a constant
submission L_R = 0 (a bug reported by the IntPhys maintainers). ``L_R`` here counts a
tie as 0.5 (the public baselines' ``(mean(pos > imp) + mean(pos >= imp)) / 2``
for sums); the strict variant is reported too, labelled ``L_R_strict``.

Absolute error rate ``L_A = 1 - AUC`` over all movies of the condition, possible
movies being the positive class; AUC is the Mann-Whitney statistic with ties
counted 0.5 (equal to ``sklearn.metrics.roc_auc_score``).

Both are reported per block x visibility x motion x n_objects and for every
coarser grouping (a factor marked ``"all"``), down to overall, with percentile
bootstrap intervals over quadruplets (seeded). A quadruplet whose conditions are
unknown (NA) counts only in the groupings that do not split by the unknown
factors (per block, overall): there is no "unknown" condition.

Intervals are reported only for groups of at least :data:`MIN_QUADRUPLETS_CI`
quadruplets (NaN bounds below): a percentile bootstrap of a mean over n items
takes at most n + 1 distinct values for 0/1 errors and is degenerate for n = 1
(a zero-width "interval"); its coverage falls short for small n (Efron &
Tibshirani 1993, An Introduction to the Bootstrap, ch. 13-14). The threshold 8
is a convention fixed here before any data, not fitted to scores.

The answer.txt format lives in :mod:`psybench.intphys.answer` and the scoring of
one model's files in :mod:`psybench.intphys.scores`; their names are re-exported
here for existing imports.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from psybench.intphys import METRICS as _DECLARED
from psybench.intphys.answer import AnswerFormatError, as_scores, read_answer, write_answer

__all__ = [
    "AnswerFormatError",
    "FACTORS",
    "quadruplet_table",
    "relative_error",
    "absolute_error",
    "score_table",
    "write_answer",
    "read_answer",
    "score_model",  # noqa: F822 (module __getattr__, lazily, to avoid a circular import)
]

FACTORS = ("block", "visibility", "motion", "n_objects")
METRICS = tuple(m.name for m in _DECLARED)  # declared with labels and units in psybench.intphys
#: Fewest quadruplets of a group for a bootstrap interval (see the module docstring).
MIN_QUADRUPLETS_CI = 8


def quadruplet_table(scores, metadata: pd.DataFrame) -> pd.DataFrame:
    """One row per quadruplet: its conditions and the summed P of possible / impossible runs.

    Parameters
    ----------
    scores : mapping or Series, movie id -> P(movie)
    metadata : DataFrame
        Columns ``movie, quadruplet, possible`` and the :data:`FACTORS`.

    Returns
    -------
    DataFrame
        Columns ``quadruplet, block, visibility, motion, n_objects, pos_sum, imp_sum``.
    """
    s = as_scores(scores)
    meta = metadata.set_index("movie")
    missing = meta.index.difference(s.index)
    if len(missing):
        raise ValueError(f"no score for {len(missing)} movie(s), e.g. {list(missing[:3])}")
    if meta["possible"].isna().any():
        bad = meta.index[meta["possible"].isna()][:3]
        raise ValueError(f"metadata has no 'possible' label for movies {list(bad)} (test split?): cannot score")
    df = meta.assign(p=s.reindex(meta.index).to_numpy(), possible=meta["possible"].astype(bool),
                     n_objects=pd.to_numeric(meta["n_objects"]).astype("Int64"))
    rows = []
    for q, g in df.groupby("quadruplet", sort=True):
        conds = g[list(FACTORS)].drop_duplicates()
        if len(conds) != 1:
            raise ValueError(f"quadruplet {q} mixes conditions {conds.to_dict('records')} in its metadata")
        n_pos, n_imp = int(g["possible"].sum()), int((~g["possible"]).sum())
        if n_pos == 0 or n_imp == 0:
            raise ValueError(f"quadruplet {q} has {n_pos} possible and {n_imp} impossible movies; need both")
        rows.append({"quadruplet": q, **conds.iloc[0].to_dict(),
                     "pos_sum": float(g.loc[g["possible"], "p"].sum()),
                     "imp_sum": float(g.loc[~g["possible"], "p"].sum())})
    return pd.DataFrame(rows)


def relative_error(pos_sum: np.ndarray, imp_sum: np.ndarray, *, strict: bool = False) -> np.ndarray:
    """Per-quadruplet L_R error: 1 if sum P(Pos) < sum P(Imp); a tie is 0 (strict) or 0.5."""
    pos_sum, imp_sum = np.asarray(pos_sum, float), np.asarray(imp_sum, float)
    err = (pos_sum < imp_sum).astype(float)
    if not strict:
        err += 0.5 * (pos_sum == imp_sum)
    return err


def _weighted_auc(values: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUC (ties 0.5) for each row of movie ``weights`` (shape (B, n))."""
    uniq, inv = np.unique(values, return_inverse=True)
    B, n_u = weights.shape[0], len(uniq)
    offs = (np.arange(B)[:, None] * n_u + inv[None, :])
    pos = np.bincount(offs[:, positive].ravel(), weights[:, positive].ravel(), B * n_u).reshape(B, n_u)
    neg = np.bincount(offs[:, ~positive].ravel(), weights[:, ~positive].ravel(), B * n_u).reshape(B, n_u)
    neg_below = np.cumsum(neg, axis=1) - neg
    u = (pos * (neg_below + 0.5 * neg)).sum(axis=1)
    denom = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, u / denom, np.nan)


def absolute_error(p: np.ndarray, possible: np.ndarray) -> float:
    """L_A = 1 - AUC, possible movies positive, ties counted 0.5."""
    p = np.asarray(p, float)
    possible = np.asarray(possible, bool)
    return float(1.0 - _weighted_auc(p, possible, np.ones((1, p.size)))[0])


def _group_scores(qt: pd.DataFrame, movies: pd.DataFrame, *, n_boot: int, ci: float, rng,
                  min_ci: int = MIN_QUADRUPLETS_CI) -> list[dict]:
    n = len(qt)
    er = relative_error(qt["pos_sum"], qt["imp_sum"])
    es = relative_error(qt["pos_sum"], qt["imp_sum"], strict=True)
    qidx = pd.Index(qt["quadruplet"]).get_indexer(movies["quadruplet"])
    p = movies["p"].to_numpy(float)
    pos = movies["possible"].to_numpy(bool)
    point = {"L_R": er.mean(), "L_R_strict": es.mean(), "L_A": absolute_error(p, pos)}
    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    out = {}
    if n_boot > 0 and n >= min_ci:
        draws = rng.integers(0, n, size=(n_boot, n))
        counts = np.zeros((n_boot, n))
        np.add.at(counts, (np.arange(n_boot)[:, None], draws), 1.0)
        boots = {
            "L_R": counts @ er / n,
            "L_R_strict": counts @ es / n,
            "L_A": 1.0 - _weighted_auc(p, pos, counts[:, qidx]),
        }
        for k, b in boots.items():
            out[k] = (float(np.nanquantile(b, lo_q)), float(np.nanquantile(b, hi_q)))
    else:
        out = {k: (math.nan, math.nan) for k in METRICS}
    return [{"metric": k, "value": float(point[k]), "ci_low": out[k][0], "ci_high": out[k][1],
             "n_quadruplets": n} for k in METRICS]


def score_table(
    scores,
    metadata: pd.DataFrame,
    *,
    model: str,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    min_ci: int = MIN_QUADRUPLETS_CI,
) -> pd.DataFrame:
    """L_R, L_R_strict and L_A per condition and every coarser grouping.

    Parameters
    ----------
    scores : mapping or Series, movie id -> P(movie) in [0, 1]
    metadata : DataFrame
        Ingest metadata of the evaluated split (``movie, quadruplet, possible`` + factors).
    model : str
        Written to the ``model`` column.
    n_boot : int
        Bootstrap resamples of quadruplets (0: no interval, NaN bounds).
    ci : float
        Central interval mass (percentile bootstrap).
    seed : int
        Seed of the bootstrap; each group draws from its own stream derived from it.
    min_ci : int
        Fewest quadruplets of a group for an interval (NaN bounds below).

    Returns
    -------
    DataFrame
        Columns ``model, block, visibility, motion, n_objects, metric, value,
        ci_low, ci_high, n_quadruplets``; dropped factors read ``"all"``.
    """
    qt = quadruplet_table(scores, metadata)
    s = as_scores(scores)
    movies = metadata[["movie", "quadruplet", "possible"]].assign(
        p=s.reindex(metadata["movie"].astype(str)).to_numpy(), possible=metadata["possible"].astype(bool))
    rows = []
    gid = 0
    for r in range(len(FACTORS), -1, -1):
        for keep in itertools.combinations(FACTORS, r):
            # dropna: a quadruplet with unknown conditions stays out of the groupings that split by them
            groups = qt.groupby(list(keep), sort=True, dropna=True) if keep else [((), qt)]
            for key, g in groups:
                key = key if isinstance(key, tuple) else (key,)
                label = {f: "all" for f in FACTORS}
                label.update({f: str(v) for f, v in zip(keep, key)})
                mv = movies[movies["quadruplet"].isin(g["quadruplet"])]
                rng = np.random.default_rng([seed, gid])
                gid += 1
                for row in _group_scores(g.reset_index(drop=True), mv, n_boot=n_boot, ci=ci, rng=rng,
                                         min_ci=min_ci):
                    rows.append({"model": model, **label, **row})
    cols = ["model", *FACTORS, "metric", "value", "ci_low", "ci_high", "n_quadruplets"]
    return pd.DataFrame(rows, columns=cols)
