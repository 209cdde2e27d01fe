"""Every cell's feature vector of a movie, computed once and gathered by index.

Shic & Scassellati (2007), sec. 5.2: the feature vector of a point is the base maps
in its ``L x L`` neighbourhood at the past times of the lags
(:func:`psybench.attention.tuning.frame_features`). Table 1 trains ~1000 filters per
model on points of the same movie and tests them on every cell of its frames, so
the same vectors are gathered many times over. :class:`FeatureTable` builds the
vectors of all frames once (when they fit in ``max_mb``) and then serves any set of
points or frames by indexing: the same float32 values as
:func:`~psybench.attention.tuning.feature_vectors` and
:func:`~psybench.attention.tuning.frame_features` (copies, no arithmetic). Movies
whose table would not fit keep the streamed path of those functions, memory bounded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psybench.attention.tuning import feature_vectors, frame_features

__all__ = ["TABLE_MB", "FeatureTable"]

#: Largest table (MB of float32) built in memory; longer movies stream their features.
TABLE_MB = 512.0


class FeatureTable:
    """Feature vectors of a movie's cells, shape (T, H*W, ND), in :func:`frame_features` order.

    Parameters
    ----------
    maps : ndarray or dask array, shape (T, H, W, C)
        Base maps; a Dask array (a movie too long for memory) is never tabled.
    lags : sequence of int
        Lags in frames (:func:`~psybench.attention.tuning.lag_frames`).
    L : int
        Odd neighbourhood side.
    max_mb : float
        Build the table only if it takes at most this many MB.
    """

    def __init__(self, maps, *, lags: Sequence[int], L: int, max_mb: float = TABLE_MB):
        if L < 1 or L % 2 == 0:
            raise ValueError(f"neighbourhood size L must be a positive odd number, got {L!r}")
        self.maps, self.lags, self.L = maps, [int(lag) for lag in lags], int(L)
        T, H, W, C = maps.shape
        self.shape = (T, H, W)
        self.dim = C * L * L * len(self.lags)
        self.first = max(self.lags)  # the first frame with history at every lag
        n = max(0, T - self.first)
        self.table = None
        if isinstance(maps, np.ndarray) and n * H * W * self.dim * 4 <= max_mb * 1e6:
            self.table = np.empty((n, H * W, self.dim), np.float32)
            for a in range(0, n, 64):
                frames = np.arange(self.first + a, self.first + min(n, a + 64))
                self.table[a : a + len(frames)] = frame_features(maps, frames, lags=self.lags, L=L)

    def _check(self, frames: np.ndarray) -> None:
        if frames.size and frames.min() < self.first:
            raise ValueError(f"frame {int(frames.min())} has no history at lag {self.first} frames")
        if frames.size and frames.max() >= self.shape[0]:
            raise ValueError(f"frame {int(frames.max())} is beyond the movie's {self.shape[0]} frames")

    def frames(self, frames) -> np.ndarray:
        """Vectors of every cell of ``frames``, shape (n, H*W, ND) (:func:`frame_features`)."""
        frames = np.asarray(frames, int)
        if self.table is None:
            return frame_features(self.maps, frames, lags=self.lags, L=self.L)
        self._check(frames)
        return self.table[frames - self.first]

    def points(self, frames, rows, cols) -> np.ndarray:
        """Vectors at points (frame, row, col), shape (n, ND) (:func:`feature_vectors`)."""
        frames = np.asarray(frames, int)
        if self.table is None:
            return feature_vectors(self.maps, frames, rows, cols, lags=self.lags, L=self.L)
        if frames.size == 0:
            raise ValueError("feature_vectors: no points given")
        self._check(frames)
        _T, H, W = self.shape
        rows, cols = np.asarray(rows, int), np.asarray(cols, int)
        if rows.min() < 0 or rows.max() >= H or cols.min() < 0 or cols.max() >= W:
            raise ValueError(f"points outside the {H}x{W} grid")
        flat = ((frames - self.first) * H + rows) * W + cols
        return self.table.reshape(-1, self.dim)[flat]
