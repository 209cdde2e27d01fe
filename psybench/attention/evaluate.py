"""The paper's evaluation: saliency rank percentiles, curves and the groups of Table 1.

Shic & Scassellati (2007), sections 4.3, 5.1 and 5.2; the filters come from
:mod:`psybench.attention.tuning` (humans) and :mod:`psybench.attention.controls`
(random controls), the frame split from :func:`psybench.attention.split.pair_frames`.

1. Rank percentile (sec. 5.2) of observer v's gazed cell on the map tuned to u,
   per frame, over the valid cells I (all grid cells)::

       R = (#{i : S(i) < s} + 0.5 * (#{i : S(i) = s} - 1)) / (|I| - 1)

   *Tie rule*: mid-rank, the gazed cell itself excluded, so a gaze location drawn
   uniformly at random scores 50 % in expectation whatever the map (uniform regions
   of equal saliency do not bias the score). ``ties="paper"`` gives the paper's
   ``#{S < s} / |I|`` instead.
2. Curves: the sorted R over test frames read at response percentiles 0..100
   (Fig. 8); per pair (u, v) the median (rp = 50).
3. Groups (Table 1): ``n ma`` (u = v, human), ``n un`` (u != v, humans), ``rf/n``
   (random filters w ~ N(0, I)), ``rs/n`` (filters trained on random-saccade
   scanpaths), ``rp/n`` (trained on random-physiological scanpaths), the last three
   tested on every human, and ``n/iid`` (beyond the paper): every human's filter
   tested on i.i.d. uniform gaze (:data:`IID_SAMPLES` uniformly drawn cells over the
   test frames, seeded),
   which the mid-rank tie rule puts at a mean of 50 % on any map (and a median of 50 %
   where ties are rare, as on noisy movies), a baseline at chance by construction
   next to rf/n; ``n/shift`` (beyond the paper): every human's filter tested on that
   human's own gaze on the test frames, shifted circularly in time by half the test
   frames (more than the split's gap when the test set is longer than twice the gap)
   and on the grid by seeded uniformly drawn circular offsets (rows, columns), a fresh
   one every ``gap`` frames of the split. Over the offsets each gazed cell is uniform on the grid, so the mid-rank rule
   puts its mean at 50 % on any map and any data, with the gaze's own time course
   (fixations, hence correlated frames and an honest spread). Reported ``median`` = mean over pairs
   of the per-pair median R (%) and ``sd`` = standard deviation over pairs, as the
   paper reports "mean percentages with standard deviations" of medians.
4. Ceiling (beyond the paper; Kummerer, Wallis & Bethge 2015, "gold standard"):
   each observer's rank percentile on the regularised, cross-validated density of the
   *other* observers (:func:`psybench.attention.gold_standard.rank_ceilings`) on the
   same test frames; median over frames, mean over observers -> the ``ceiling`` column of every row
   of the (train, test) pair: how far people's mutual agreement reaches on that movie.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.batch_tuning import train_filters, training_points
from psybench.attention.controls import control_points, control_scanpaths, movie_control_filters
from psybench.attention.defaults import (
    DEFAULT_EVALUATION,
    LAGS_MS,
    TIES,
    EvaluationSettings,
)
from psybench.attention.feature_table import FeatureTable
from psybench.attention.gold_standard import rank_ceilings
from psybench.attention.group_rows import IID, RESPONSE_PERCENTILES, SHIFT, pair_tables, shifted_cells
from psybench.attention.metrics import observer_counts
from psybench.attention.movies import MovieData
from psybench.attention.rank_counts import percentiles_from_counts, rank_counts
from psybench.attention.split import pair_frames
from psybench.attention.tuning import gaze_cells, lag_frames
from psybench.progress import Progress

__all__ = ["GROUPS", "RESPONSE_PERCENTILES", "rank_percentiles", "loo_rank_ceiling", "evaluate_pair", "evaluate"]

log = logging.getLogger(__name__)

GROUPS = ("n ma", "n un", "rf/n", "rs/n", "rp/n", "n/iid", "n/shift")


def rank_percentiles(saliency: np.ndarray, cells: np.ndarray, *, ties: str = TIES) -> np.ndarray:
    """Rank percentile (0..1) of gazed cells on per-frame saliency maps.

    Parameters
    ----------
    saliency : ndarray, shape (n, K) or (n, K, U)
        Maps over the K valid cells of n frames (optionally U maps per frame).
    cells : ndarray of int, shape (n,) or (n, d)
        Flat index of the gazed cell per frame (or of d gazed cells per frame).
    ties : {'mid', 'paper'}
        'mid': (lower + (equal - 1) / 2) / (K - 1); 'paper': lower / K.

    Returns
    -------
    ndarray, shape (n,), (n, U), (n, d) or (n, d, U)
    """
    if ties not in ("mid", "paper"):
        raise ValueError(f"ties must be 'mid' or 'paper', got {ties!r}")
    S = np.asarray(saliency)
    squeeze = S.ndim == 2
    if squeeze:
        S = S[..., None]
    c = np.asarray(cells, int)
    many = c.ndim == 2
    lower, equal = rank_counts(S, c if many else c[:, None])  # (n, d, U)
    R = percentiles_from_counts(lower, equal, S.shape[1], ties=ties)
    R = R if many else R[:, 0]
    return R[..., 0] if squeeze else R


def _gaze_arrays(gaze: pd.DataFrame, n_frames: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """subject -> (valid, x, y) indexed by frame."""
    out = {}
    for s, g in gaze.groupby("subject", sort=True):
        valid = np.zeros(n_frames, bool)
        x = np.full(n_frames, np.nan)
        y = np.full(n_frames, np.nan)
        f = g["frame"].to_numpy(int)
        ok = (f >= 0) & (f < n_frames)
        valid[f[ok]] = g["valid"].to_numpy(bool)[ok]
        x[f[ok]] = g["x"].to_numpy(float)[ok]
        y[f[ok]] = g["y"].to_numpy(float)[ok]
        out[str(s)] = (valid & np.isfinite(x) & np.isfinite(y), x, y)
    return out


def _test_ranks(movie: MovieData, humans: pd.DataFrame, frames, filters: np.ndarray, *, lags, L, ties, chunk=None,
                iid_seed=None, iid_filters=0, features: FeatureTable | None = None, shift_seed=None, own=None,
                segment=1):
    """R for every filter (U) and human (V) on the test frames: dict subject -> (n_valid, U).

    With ``iid_seed``, also subject :data:`IID`: ``ceil(IID_SAMPLES / n_frames)``
    uniformly drawn cells per test frame, ranked on the first ``iid_filters`` filters
    only, shape (n_frames * draws, iid_filters). ``features``: the test movie's
    :class:`~psybench.attention.feature_table.FeatureTable` at ``lags`` and ``L``
    (default: streamed from the maps). With ``shift_seed``, also subject
    ``SHIFT + v`` for every human v in ``own`` (subject -> index of v's filter): v's
    gaze on the test frames shifted circularly by half of them in time and by seeded
    uniform circular offsets on the grid (``ceil(IID_SAMPLES / n_frames)`` of them, fresh
    every ``segment`` frames; :func:`~psybench.attention.group_rows.shifted_cells`),
    ranked on v's filter only, shape (n_valid * draws, 1).
    """
    H, W = movie.shape[1:3]
    features = features or FeatureTable(movie.maps, lags=lags, L=L, max_mb=0)
    arrays = _gaze_arrays(humans, movie.shape[0])
    frames = np.asarray(frames, int)
    subjects = list(arrays)
    # every human's gazed cell on every test frame, ranked together (invalid gaze: a cell already ranked, dropped)
    valid = np.zeros((len(frames), len(subjects)), bool)
    cells = np.zeros((len(frames), len(subjects)), int)
    for j, (ok, x, y) in enumerate(arrays.values()):
        valid[:, j] = ok[frames]
        row, col = gaze_cells(x[frames[valid[:, j]]], y[frames[valid[:, j]]], source_size=movie.source_size,
                              grid_shape=(H, W))
        cells[valid[:, j], j] = row * W + col
    cells = np.where(valid, cells, cells.max(1, initial=0)[:, None])
    n_draws = max(1, -(-IID_SAMPLES // max(1, len(frames))))
    shifted = {} if shift_seed is None else shifted_cells(cells, valid, subjects, own, shift_seed, (H, W),
                                                          segment=segment, draws=n_draws)
    res: dict[str, list[np.ndarray]] = {s: [] for s in subjects}
    iid = None
    if iid_seed is not None:
        iid = np.random.default_rng(iid_seed).integers(0, H * W, size=(len(frames), n_draws))
        res[IID] = []
    if chunk is None:  # keep the (frames, cells, filters) block near 16 MB
        chunk = max(1, int(4e6 // max(1, H * W * len(filters))))
    weights = filters.T.astype(np.float32)
    for a in range(0, len(frames), chunk):
        S = features.frames(frames[a : a + chunk]) @ weights  # (n, K, U)
        R = percentiles_from_counts(*rank_counts(S, cells[a : a + chunk]), H * W, ties=ties)  # (n, V, U)
        for j, s in enumerate(subjects):
            ok = valid[a : a + chunk, j]
            if ok.any():
                res[s].append(R[ok, j])
        if iid is not None:
            res[IID].append(S[..., :iid_filters].copy())
        for s, (f, c, ok) in shifted.items():
            ok = ok[a : a + chunk]
            if ok.any():
                R = percentiles_from_counts(*rank_counts(S[ok][..., [f]], c[a : a + chunk][ok]), H * W, ties=ties)
                res.setdefault(SHIFT + s, []).append(R.reshape(-1, 1))
    if iid is not None:  # every frame's draws at once; medians and percentiles ignore the order
        S = np.concatenate(res[IID]) if res[IID] else np.zeros((0, H * W, iid_filters), np.float32)
        res[IID] = [rank_percentiles(S, iid, ties=ties).reshape(-1, iid_filters)]
    return {s: np.concatenate(v) if v else np.zeros((0, filters.shape[0])) for s, v in res.items()}


#: Uniform gaze samples of the i.i.d. control per filter (``ceil(IID_SAMPLES / n_frames)``
#: draws per test frame): the SD of their median is about 1 / (2 sqrt(IID_SAMPLES)) = 0.35 %.
IID_SAMPLES = 20000


def loo_rank_ceiling(movie: MovieData, frames, *, ties: str = TIES) -> float:
    """Leave-one-observer-out ceiling of the rank percentile (%), on ``frames`` of ``movie``.

    The mean over observers of :func:`psybench.attention.gold_standard.rank_ceilings`:
    each observer's median rank percentile on the regularised, cross-validated density
    of the other observers' gaze (never below chance where the others predict
    nothing). NaN with fewer than two observers.
    """
    meds = rank_ceilings(observer_counts(movie, np.asarray(frames, int)), ties=ties)
    return float(np.nanmean(meds)) if np.isfinite(meds).any() else float("nan")


def evaluate_pair(
    train: MovieData,
    test: MovieData,
    *,
    L: int,
    lags_ms: Sequence[float] = LAGS_MS,
    evaluation: EvaluationSettings = DEFAULT_EVALUATION,
    controls: Mapping[str, Sequence[np.ndarray]] | None = None,
    tables: Mapping[str, FeatureTable] | None = None,
    points: Sequence | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train on ``train``'s even frames, test on ``test`` (odd frames if it is the same movie).

    ``evaluation``: the settings (:class:`~psybench.attention.defaults.EvaluationSettings`).
    ``controls`` (from :func:`psybench.attention.controls.movie_control_filters` on the same training movie,
    features and settings) reuses the control filters, which do not depend on the
    test movie. ``tables`` (movie name -> :class:`~psybench.attention.feature_table.FeatureTable`
    of its maps at these lags and L) and ``points`` (the training humans'
    :func:`~psybench.attention.batch_tuning.training_points`) reuse what the caller built once.

    Returns
    -------
    pairs : DataFrame
        One row per (filter, tested human): group, filter, subject, median (%), n_frames.
    curves : DataFrame
        One row per pair and response percentile: group, filter, subject, rp, value (%).
    """
    if train.frames_per_s != test.frames_per_s:
        raise ValueError(f"movies {train.name!r} and {test.name!r} have different frame rates")
    if train.shape[1:] != test.shape[1:]:
        raise ValueError(
            f"movies {train.name!r} and {test.name!r} have different map shapes "
            f"{train.shape[1:]} vs {test.shape[1:]}"
        )
    lags = lag_frames(lags_ms, train.frames_per_s)
    fit, eval_frames, gap = pair_frames(train, test, lags, evaluation)
    tables = dict(tables or {})
    for m in (train, test):
        if m.name not in tables:
            tables[m.name] = FeatureTable(m.maps, lags=lags, L=L)
    humans_train = train.gaze
    subjects = sorted(humans_train["subject"].unique())
    seed = evaluation.seed
    filters = list(train_filters(train, [humans_train[humans_train["subject"] == s] for s in subjects], fit,
                                 seeds=human_seeds(seed, len(subjects)), features=tables[train.name], points=points,
                                 lags=lags, L=L, n_negatives=evaluation.n_negatives,
                                 min_dist_frac=evaluation.min_dist_frac, scatter=evaluation.scatter))
    labels = [("n", s) for s in subjects]
    ctrl = controls
    if ctrl is None:
        ctrl = movie_control_filters(train, L=L, lags_ms=lags_ms, evaluation=evaluation, features=tables[train.name])
    for category in ("rf", "rs", "rp"):
        for j, w in enumerate(ctrl[category]):
            filters.append(w)
            labels.append((category, f"{category}{j:03d}"))
    F = np.stack(filters)
    ranks = _test_ranks(test, test.gaze, eval_frames, F, lags=lags, L=L, ties=evaluation.ties,
                        iid_seed=seed * 7919 + 7,
                        iid_filters=len(subjects), features=tables[test.name],
                        shift_seed=seed * 7919 + 11, own={s: i for i, s in enumerate(subjects)}, segment=gap)
    return pair_tables(ranks, labels)


def human_seeds(seed: int, n: int) -> list[int]:
    """Seeds of the non-attended draws of the ``n`` humans' filters (sorted subjects)."""
    return [seed * 7919 + 100003 + i for i in range(n)]


def evaluate(
    movies: Mapping[str, Mapping[str, MovieData]],
    *,
    models: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    lags_ms: Sequence[float] = LAGS_MS,
    evaluation: EvaluationSettings = DEFAULT_EVALUATION,
    scanpaths: Mapping[str, Mapping[str, Sequence[pd.DataFrame]]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 and the curves for every model (``{"features": label, "L": int}``) and (train, test) pair.

    Parameters
    ----------
    movies : mapping movie -> features label -> MovieData
    models : sequence of mappings with keys ``features`` and ``L``
        One row of Table 1 each: the label of the feature maps (a key of ``movies``
        per movie, written in the ``features`` column) and the neighbourhood side L.
    pairs : sequence of (train movie, test movie)
    evaluation : EvaluationSettings
        The settings of the evaluation and its controls, built once from the
        config's ``attention.evaluation`` (``in_memory_mb`` is the loader's).
    scanpaths : mapping training movie -> control trajectories, optional
        :func:`~psybench.attention.controls.control_scanpaths` of a training movie
        with the same settings (the workflow draws them once per movie in their own
        job); drawn here for the movies missing.

    Returns
    -------
    table1 : DataFrame
        Columns train, test, features, L, ND, group, median, sd, n_pairs, ceiling
        (:func:`loo_rank_ceiling` of the test frames, %).
    curves : DataFrame
        Columns train, test, features, L, group, rp, value (mean over pairs), sd.
    """
    table, curves = [], []
    n_sets, n_per_set, seed, ties = evaluation.n_sets, evaluation.n_per_set, evaluation.seed, evaluation.ties
    scanpaths = dict(scanpaths or {})  # training movie -> control trajectories (feature-independent)
    ceilings: dict[tuple[str, bytes], float] = {}  # (test movie, test frames) -> LOO ceiling
    n_jobs, done, t0 = len(models) * len(pairs), 0, time.perf_counter()
    shown = Progress(n_jobs, "attention evaluation (models x train/test pairs)")
    log.info("Table 1: %d models x %d (train, test) pairs; %d sets x %s trajectories per control category",
             len(models), len(pairs), n_sets, n_per_set or "n_observers")
    points: dict[tuple, dict[str, Any]] = {}  # training movie, lags, grid -> feature-independent training points
    for model in models:
        features, L = model["features"], int(model["L"])
        controls: dict[str, dict] = {}  # training movie -> control filters of this model
        tables: dict[str, FeatureTable] = {}  # movie -> its feature vectors for this model, built once
        for p, (tr, te) in enumerate(pairs):
            for name in (tr, te):
                if name not in movies or features not in movies[name]:
                    raise ValueError(f"evaluate: no {features!r} features for movie {name!r}")
            train, test = movies[tr][features], movies[te][features]
            lags = lag_frames(lags_ms, train.frames_per_s)
            for name in (tr, te):
                if name not in tables:
                    tables[name] = FeatureTable(movies[name][features].maps, lags=lags, L=L)
            if tr not in scanpaths:
                scanpaths[tr] = control_scanpaths(train, train.gaze, n_sets=n_sets, n_per_set=n_per_set, seed=seed)
            fit, held, _gap = pair_frames(train, test, lags, evaluation)
            at = (tr, tuple(lags), train.shape[1:3], train.source_size, fit.tobytes())
            if at not in points:
                points[at] = _training_points(train, lags, scanpaths[tr], n_negatives=evaluation.n_negatives,
                                               min_dist_frac=evaluation.min_dist_frac, seed=seed, frames=fit)
            if tr not in controls:
                controls[tr] = movie_control_filters(train, L=L, lags_ms=lags_ms, evaluation=evaluation,
                                                     scanpaths=scanpaths[tr], features=tables[tr], points=points[at])
            pr, cv = evaluate_pair(train, test, L=L, lags_ms=lags_ms, evaluation=evaluation, controls=controls[tr],
                                   tables=tables, points=points[at]["n"])
            for name in list(tables):  # free the tables no later pair of this model reads
                if all(name not in later for later in pairs[p + 1 :]):
                    del tables[name]
            key = (te, held.tobytes())
            if key not in ceilings:
                ceilings[key] = loo_rank_ceiling(test, held, ties=ties)
            nd = int(train.shape[-1]) * L * L * len(lags_ms)
            for group in GROUPS:
                sub = pr[pr["group"] == group]
                table.append({
                    "train": tr, "test": te, "features": features, "L": L, "ND": nd, "group": group,
                    "median": float(sub["median"].mean()) if len(sub) else np.nan,
                    "sd": float(sub["median"].std(ddof=1)) if len(sub) > 1 else np.nan,
                    "n_pairs": int(len(sub)), "ceiling": ceilings[key],
                })
                c = cv[cv["group"] == group].groupby("rp")["value"]
                sd = c.std(ddof=1)
                for rp, mean in c.mean().items():
                    curves.append({"train": tr, "test": te, "features": features, "L": L, "group": group,
                                   "rp": int(rp), "value": float(mean), "sd": float(sd.get(rp, np.nan))})
            done += 1
            shown.update(note=f"{features} L={L}, {tr} on {te}")
            meds = pr.groupby("group")["median"].mean()
            log.info("[%d/%d] %s L=%d, %s on %s: %s (%.0f s elapsed)", done, n_jobs, features, L, tr, te,
                     ", ".join(f"{g} {meds[g]:.1f}" for g in GROUPS if g in meds), time.perf_counter() - t0)
    return pd.DataFrame(table), pd.DataFrame(curves)


def _training_points(train: MovieData, lags, scanpaths, *, n_negatives, min_dist_frac, seed, frames) -> dict[str, Any]:
    """The training points of the humans ('n') and of the RS and RP controls on a training movie's ``frames``."""
    subjects = sorted(train.gaze["subject"].unique())
    humans = [train.gaze[train.gaze["subject"] == s] for s in subjects]
    settings = dict(n_negatives=n_negatives, min_dist_frac=min_dist_frac)
    return {"n": training_points(train, humans, frames, seeds=human_seeds(seed, len(subjects)), **settings),
            **control_points(train, scanpaths, frames, seed=seed, **settings)}

