"""Fisher filters of many trajectories at once: the batched trainer of Table 1's filters.

Shic & Scassellati (2007), sections 4.2, 5.1 and 5.2. Every filter of a control
category (``rs``, ``rp``: hundreds of synthetic scanpaths) and every human's filter
is Fisher's discriminant of one trajectory's attended and non-attended points
(:mod:`psybench.attention.tuning`). Trained one by one, the work is a Python loop of
small gathers and small matrix products; here a category is trained as batched
linear algebra:

1. the training points of every trajectory (:func:`~psybench.attention.tuning.sample_training_set`,
   each with its own seed, so the same points as one by one) are gathered in one
   :func:`~psybench.attention.tuning.feature_vectors` call per batch;
2. trajectories with the same number of attended points are stacked, shape
   ``(B, n, D)``, and their class scatter matrices computed as one stacked product
   ``(B, D, n) @ (B, n, D)``;
3. the ``B`` systems ``(S_W + ridge I) w = m_a - m_o`` are solved by one batched
   ``np.linalg.solve``.

Each step runs the same floating-point operations, in the same order, as
:func:`psybench.attention.tuning.fisher_filter` on one trajectory (a stack of one),
so the filters are the same to the bit (:func:`~psybench.attention.tuning.fisher_filters`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from psybench.attention.defaults import MIN_DIST_FRAC, N_NEGATIVES, SCATTER
from psybench.attention.feature_table import FeatureTable
from psybench.attention.movies import MovieData
from psybench.attention.tuning import fisher_filters, sample_training_set

__all__ = ["BATCH_MB", "training_points", "train_filters"]

#: Memory of one batch's float64 training vectors (MB): bounds the stacked arrays.
BATCH_MB = 64.0


def training_points(
    movie: MovieData,
    trajectories: Sequence[pd.DataFrame],
    frames,
    *,
    seeds: Sequence[int],
    n_negatives: int = N_NEGATIVES,
    min_dist_frac: float = MIN_DIST_FRAC,
) -> list[tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]:
    """The attended and non-attended points of every trajectory (:func:`~psybench.attention.tuning.sample_training_set`
    with its seed): they depend on the gaze, the grid and the seed, not on the features, so one draw
    serves every model trained on the same movie."""
    if len(seeds) != len(trajectories):
        raise ValueError(f"train_filters: {len(trajectories)} trajectories but {len(seeds)} seeds")
    H, W = movie.shape[1:3]
    return [
        sample_training_set(g, frames, source_size=movie.source_size, grid_shape=(H, W), n_negatives=n_negatives,
                            min_dist_frac=min_dist_frac, seed=int(s))
        for g, s in zip(trajectories, seeds)
    ]


def train_filters(
    movie: MovieData,
    trajectories: Sequence[pd.DataFrame],
    frames,
    *,
    seeds: Sequence[int],
    lags: Sequence[int],
    L: int,
    n_negatives: int = N_NEGATIVES,
    min_dist_frac: float = MIN_DIST_FRAC,
    scatter: str = SCATTER,
    batch_mb: float = BATCH_MB,
    features: FeatureTable | None = None,
    points: Sequence | None = None,
) -> np.ndarray:
    """The Fisher filter of every trajectory on ``frames`` of ``movie``, trained in batches.

    Same filters as :func:`psybench.attention.tuning.train_filter` on each
    trajectory with its seed.

    Parameters
    ----------
    movie : MovieData
        Base maps, shape (T, H, W, C).
    trajectories : sequence of DataFrame
        One per-frame gaze table (:data:`psybench.attention.gaze.FRAME_COLUMNS`) per filter.
    frames : ndarray of int
        Training frames.
    seeds : sequence of int
        Seed of each trajectory's non-attended draws.
    features : FeatureTable, optional
        The movie's feature vectors at ``lags`` and ``L``, built once by the caller
        (default: gathered from the maps, streamed).
    points : sequence, optional
        :func:`training_points` of these trajectories, frames and seeds, drawn once by the caller.

    Returns
    -------
    ndarray, shape (len(trajectories), D), D = C L^2 len(lags)
    """
    if points is None:
        points = training_points(movie, trajectories, frames, seeds=seeds, n_negatives=n_negatives,
                                 min_dist_frac=min_dist_frac)
    elif len(points) != len(trajectories):
        raise ValueError(f"train_filters: {len(trajectories)} trajectories but {len(points)} sets of points")
    if features is None:
        features = FeatureTable(movie.maps, lags=lags, L=L, max_mb=0)
    D = features.dim
    out = np.zeros((len(points), D))
    n_att = np.array([len(pos[0]) for pos, _ in points], int)
    for n0 in np.unique(n_att):  # equal class sizes stack without padding
        idx = np.flatnonzero(n_att == n0)
        per = max(1, int(batch_mb * 1e6 // (8 * D * n0 * (1 + n_negatives))))
        for a in range(0, len(idx), per):
            sel = idx[a : a + per]
            cls = [[np.concatenate([points[i][c][k] for i in sel]) for k in range(3)] for c in (0, 1)]
            Xa = features.points(*cls[0]).reshape(len(sel), n0, D)
            Xo = features.points(*cls[1]).reshape(len(sel), -1, D)
            out[sel] = fisher_filters(Xa, Xo, scatter=scatter)
    return out
