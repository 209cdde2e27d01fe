"""The random controls of Table 1 and their trajectories (Shic & Scassellati 2007, sec. 5.1).

Three categories of filters, each tested on every human like the humans' own filters:

* ``rf`` -- random filters, directions w ~ N(0, I) (no training);
* ``rs`` -- Fisher filters trained on random-saccade scanpaths
  (:func:`psybench.attention.gaze.random_saccade_scanpaths`);
* ``rp`` -- Fisher filters trained on random-physiological scanpaths
  (:func:`psybench.attention.gaze.random_physiological_scanpaths`).

``n_sets`` (5) synthetic sets per random category; a set is one parameter setting
(jump rate for RS, spill fraction for RP) holding ``n_per_set`` scanpaths (default:
as many as there are humans).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from psybench.attention.batch_tuning import train_filters, training_points
from psybench.attention.defaults import (
    DEFAULT_EVALUATION,
    LAGS_MS,
    MIN_DIST_FRAC,
    N_NEGATIVES,
    N_SETS,
    SEED,
    EvaluationSettings,
)
from psybench.attention.feature_table import FeatureTable
from psybench.attention.gaze.synthetic import random_physiological_scanpaths, random_saccade_scanpaths
from psybench.attention.movies import MovieData
from psybench.attention.split import fit_frames
from psybench.attention.tuning import lag_frames

__all__ = ["RS_JUMP_RATES_HZ", "RP_SPILLS", "control_scanpaths", "control_trajectories", "control_points",
           "control_filters", "movie_control_filters"]

#: Jump rates (per second) of the five random-saccade sets: they span human saccade
#: rates (about 3 per second) from slow to fast scanning.
RS_JUMP_RATES_HZ = (1.0, 2.0, 3.0, 4.0, 5.0)
RP_SPILLS = (0.01, 0.02, 0.05, 0.1, 0.2)


def control_scanpaths(
    movie: MovieData,
    humans: pd.DataFrame,
    *,
    n_sets: int = N_SETS,
    n_per_set: int | None = None,
    seed: int = SEED,
) -> dict[str, list[pd.DataFrame]]:
    """The synthetic trajectories of the random controls (sec. 5.1): {'rs': [...], 'rp': [...]}.

    One per-frame gaze table per set. RS sets vary the jump rate over
    :data:`RS_JUMP_RATES_HZ` (per-frame probability ``rate / frames_per_s``, so a set
    means the same at any frame rate), RP sets the spill fraction over
    :data:`RP_SPILLS` (both cycled when ``n_sets`` > 5); RP draws its statistics from
    the human per-frame tracks of ``movie``. They depend on the movie only, not on
    the features, so :func:`psybench.attention.evaluate.evaluate` draws them once per training movie.
    """
    subjects = sorted(humans["subject"].unique())
    n_per_set = n_per_set or len(subjects)
    T = movie.shape[0]
    tracks = [humans[humans["subject"] == s].sort_values("frame")[["x", "y"]].to_numpy(float) for s in subjects]
    out: dict[str, list[pd.DataFrame]] = {"rs": [], "rp": []}
    for k in range(n_sets):
        rate = RS_JUMP_RATES_HZ[k % len(RS_JUMP_RATES_HZ)]
        out["rs"].append(random_saccade_scanpaths(
            T, source_size=movie.source_size, frames_per_s=movie.frames_per_s, seed=seed * 1000 + 100 + k,
            n=n_per_set, jump_prob=min(1.0, rate / movie.frames_per_s), movie=movie.name, subject_prefix=f"rs{k}_",
        ))
        out["rp"].append(random_physiological_scanpaths(
            tracks, T, source_size=movie.source_size, frames_per_s=movie.frames_per_s, seed=seed * 1000 + 200 + k,
            n=n_per_set, spill=RP_SPILLS[k % len(RP_SPILLS)], movie=movie.name, subject_prefix=f"rp{k}_",
        ))
    return out


def control_trajectories(
    scanpaths: Mapping[str, Sequence[pd.DataFrame]], *, seed: int = SEED
) -> dict[str, tuple[list[pd.DataFrame], list[int]]]:
    """The trajectories of the RS and RP controls, one table each, with the seed of their
    non-attended draws: {'rs': (tables, seeds), 'rp': (tables, seeds)}."""
    out = {}
    for name in ("rs", "rp"):
        tables, seeds = [], []
        for k, table in enumerate(scanpaths[name]):
            for j, (_subject, g) in enumerate(table.groupby("subject", sort=True)):
                tables.append(g)
                seeds.append(seed * 7919 + 31 * k + j + (0 if name == "rs" else 17))
        out[name] = (tables, seeds)
    return out


def control_points(
    movie: MovieData,
    scanpaths: Mapping[str, Sequence[pd.DataFrame]],
    frames,
    *,
    seed: int = SEED,
    n_negatives: int = N_NEGATIVES,
    min_dist_frac: float = MIN_DIST_FRAC,
) -> dict[str, list]:
    """The training points of every RS and RP trajectory (:func:`psybench.attention.batch_tuning.training_points`):
    feature-independent, so drawn once for every model trained on ``movie``."""
    return {
        name: training_points(movie, tables, frames, seeds=seeds, n_negatives=n_negatives, min_dist_frac=min_dist_frac)
        for name, (tables, seeds) in control_trajectories(scanpaths, seed=seed).items()
    }


def control_filters(
    movie: MovieData,
    humans: pd.DataFrame,
    frames,
    *,
    lags,
    L: int,
    evaluation: EvaluationSettings = DEFAULT_EVALUATION,
    scanpaths: Mapping[str, Sequence[pd.DataFrame]] | None = None,
    features: FeatureTable | None = None,
    points: Mapping[str, Sequence] | None = None,
) -> dict[str, list[np.ndarray]]:
    """Filters of the random controls (sec. 5.1): {'rf': [...], 'rs': [...], 'rp': [...]}.

    ``evaluation``: the settings (sets, trajectories per set, negatives, their
    distance, seed, scatter). RF: ``n_sets x n_per_set`` directions w ~ N(0, I). RS and RP: one Fisher filter
    per trajectory of :func:`control_scanpaths` (pass ``scanpaths`` to reuse them),
    trained exactly as the humans' filters, all of a category at once
    (:func:`psybench.attention.batch_tuning.train_filters`). ``features``: the movie's
    :class:`~psybench.attention.feature_table.FeatureTable`; ``points``: :func:`control_points`
    of the same scanpaths, frames and settings (both optional, shared between models).
    """
    subjects = sorted(humans["subject"].unique())
    n_sets, seed = evaluation.n_sets, evaluation.seed
    n_per_set = evaluation.n_per_set or len(subjects)
    C = movie.shape[-1]
    D = C * L * L * len(lags)
    rng = np.random.default_rng([seed, 1])
    out: dict[str, list[np.ndarray]] = {"rf": [], "rs": [], "rp": []}
    for _ in range(n_sets * n_per_set):
        w = rng.normal(size=D)
        out["rf"].append(w / np.linalg.norm(w))
    if scanpaths is None:
        scanpaths = control_scanpaths(movie, humans, n_sets=n_sets, n_per_set=n_per_set, seed=seed)
    trajectories = control_trajectories(scanpaths, seed=seed)
    for name, (tables, seeds) in trajectories.items():  # all filters of a category in one batched training
        out[name] = list(train_filters(movie, tables, frames, seeds=seeds, lags=lags, L=L,
                                       n_negatives=evaluation.n_negatives, min_dist_frac=evaluation.min_dist_frac,
                                       scatter=evaluation.scatter, features=features,
                                       points=None if points is None else points[name]))
    return out


def movie_control_filters(
    train: MovieData,
    *,
    L: int,
    lags_ms: Sequence[float] = LAGS_MS,
    evaluation: EvaluationSettings = DEFAULT_EVALUATION,
    scanpaths: Mapping[str, Sequence[pd.DataFrame]] | None = None,
    features: FeatureTable | None = None,
    points: Mapping[str, Sequence] | None = None,
) -> dict[str, list[np.ndarray]]:
    """:func:`control_filters` of a training movie on its training frames
    (:func:`psybench.attention.split.fit_frames`)."""
    lags = lag_frames(lags_ms, train.frames_per_s)
    return control_filters(train, train.gaze, fit_frames(train, lags, evaluation), lags=lags, L=L,
                           evaluation=evaluation, scanpaths=scanpaths, features=features, points=points)

