"""IntPhys metrics (Riochet et al. 2018, IntPhys V1.0, "Evaluation metric") and the answer.txt format.

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
bootstrap intervals over quadruplets (seeded).
"""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from psybench.io.atomic import atomic_output

__all__ = [
    "AnswerFormatError",
    "FACTORS",
    "quadruplet_table",
    "relative_error",
    "absolute_error",
    "score_table",
    "write_answer",
    "read_answer",
    "score_model",
]

FACTORS = ("block", "visibility", "motion", "n_objects")
METRICS = ("L_R", "L_R_strict", "L_A")


class AnswerFormatError(ValueError):
    """An answer.txt is malformed; the message names the file, line number and text."""


def _as_series(scores) -> pd.Series:
    if isinstance(scores, pd.DataFrame):
        scores = scores.set_index("movie")["p"]
    s = pd.Series(scores, dtype=float)
    s.index = s.index.astype(str)
    return s


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
    s = _as_series(scores)
    meta = metadata.set_index("movie")
    missing = meta.index.difference(s.index)
    if len(missing):
        raise ValueError(f"no score for {len(missing)} movie(s), e.g. {list(missing[:3])}")
    if meta["possible"].isna().any():
        bad = meta.index[meta["possible"].isna()][:3]
        raise ValueError(f"metadata has no 'possible' label for movies {list(bad)} (test split?): cannot score")
    df = meta.assign(p=s.reindex(meta.index).to_numpy(), possible=meta["possible"].astype(bool))
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


def _group_scores(qt: pd.DataFrame, movies: pd.DataFrame, *, n_boot: int, ci: float, rng) -> list[dict]:
    n = len(qt)
    er = relative_error(qt["pos_sum"], qt["imp_sum"])
    es = relative_error(qt["pos_sum"], qt["imp_sum"], strict=True)
    qidx = pd.Index(qt["quadruplet"]).get_indexer(movies["quadruplet"])
    p = movies["p"].to_numpy(float)
    pos = movies["possible"].to_numpy(bool)
    point = {"L_R": er.mean(), "L_R_strict": es.mean(), "L_A": absolute_error(p, pos)}
    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    out = {}
    if n_boot > 0:
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

    Returns
    -------
    DataFrame
        Columns ``model, block, visibility, motion, n_objects, metric, value,
        ci_low, ci_high, n_quadruplets``; dropped factors read ``"all"``.
    """
    qt = quadruplet_table(scores, metadata)
    s = _as_series(scores)
    movies = metadata[["movie", "quadruplet", "possible"]].assign(
        p=s.reindex(metadata["movie"].astype(str)).to_numpy(), possible=metadata["possible"].astype(bool))
    rows = []
    gid = 0
    for r in range(len(FACTORS), -1, -1):
        for keep in itertools.combinations(FACTORS, r):
            groups = qt.groupby(list(keep), sort=True) if keep else [((), qt)]
            for key, g in groups:
                key = key if isinstance(key, tuple) else (key,)
                label = {f: "all" for f in FACTORS}
                label.update({f: str(v) for f, v in zip(keep, key)})
                mv = movies[movies["quadruplet"].isin(g["quadruplet"])]
                rng = np.random.default_rng([seed, gid])
                gid += 1
                for row in _group_scores(g.reset_index(drop=True), mv, n_boot=n_boot, ci=ci, rng=rng):
                    rows.append({"model": model, **label, **row})
    cols = ["model", *FACTORS, "metric", "value", "ci_low", "ci_high", "n_quadruplets"]
    return pd.DataFrame(rows, columns=cols)


def write_answer(scores, path: str | os.PathLike) -> Path:
    """Write the official ``answer.txt``: one ``<movie id> <score>`` line per movie, sorted.

    Scores are written with 10 significant digits (``O1/0001/1 0.9751``).
    """
    s = _as_series(scores).sort_index()
    bad = s[~np.isfinite(s.to_numpy()) | (s < 0) | (s > 1)]
    if len(bad):
        raise ValueError(f"scores must be in [0, 1]; movie {bad.index[0]!r} has {bad.iloc[0]!r}")
    path = Path(path)
    with atomic_output(path) as tmp, open(tmp, "w") as fh:
        for movie, v in s.items():
            fh.write(f"{movie} {v:.10g}\n")
    return path


def read_answer(path: str | os.PathLike, metadata: pd.DataFrame, *, require_all: bool = True) -> pd.Series:
    """Read and validate an ``answer.txt`` against the split's metadata.

    Parameters
    ----------
    path : path-like
    metadata : DataFrame
        Columns ``movie`` and ``quadruplet``.
    require_all : bool
        Every movie of the metadata must be scored (the official rule).

    Returns
    -------
    pandas.Series
        movie id -> score.

    Raises
    ------
    AnswerFormatError
        Naming the file, the line number and its text: a line that is not
        ``<movie> <score>``, an unknown movie, a score that is not a number or
        lies outside [0, 1], a duplicate movie, an incomplete quadruplet.
    """
    path = Path(path)
    known = dict(zip(metadata["movie"].astype(str), metadata["quadruplet"].astype(str)))
    seen: dict[str, tuple[int, float]] = {}
    with open(path) as fh:
        for no, line in enumerate(fh, start=1):
            text = line.rstrip("\n")
            if not text.strip():
                continue
            where = f"{path}, line {no} ({text!r})"
            parts = text.split()
            if len(parts) != 2:
                raise AnswerFormatError(f"{where}: expected '<block>/<index>/<run> <score>'")
            movie, raw = parts
            if movie not in known:
                raise AnswerFormatError(f"{where}: unknown movie {movie!r}")
            try:
                v = float(raw)
            except ValueError:
                raise AnswerFormatError(f"{where}: score {raw!r} is not a number") from None
            if not (0.0 <= v <= 1.0):  # also rejects NaN
                raise AnswerFormatError(f"{where}: score {raw} is outside [0, 1]")
            if movie in seen:
                raise AnswerFormatError(f"{where}: duplicate movie {movie!r}, already on line {seen[movie][0]}")
            seen[movie] = (no, v, text)
    by_q: dict[str, list[str]] = {}
    for m, q in known.items():
        by_q.setdefault(q, []).append(m)
    for q, ms in sorted(by_q.items()):
        got = [m for m in ms if m in seen]
        if got and len(got) != len(ms):
            no, _, text = min(seen[m] for m in got)
            lacking = sorted(set(ms) - set(got))
            raise AnswerFormatError(f"{path}, line {no} ({text!r}): incomplete quadruplet {q}, lacking {lacking}")
    if require_all and len(seen) != len(known):
        lacking = sorted(set(known) - set(seen))
        raise AnswerFormatError(f"{path}: {len(lacking)} movie(s) not scored, e.g. {lacking[:4]}")
    return pd.Series({m: v for m, (_, v, _) in seen.items()}, dtype=float).sort_index()


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
    from psybench.io.tables import read_table, write_table

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
