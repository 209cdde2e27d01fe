"""Per-individual tuning: feature vectors, training points and Fisher's discriminant.

Shic & Scassellati (2007), sections 4.2 and 5.2:

1. Feature vector of a point (sec. 5.2): the base maps of
   :mod:`psybench.attention.responses` in the ``L x L`` neighbourhood of the point
   (edges replicated) at the past times -100 ms and -300 ms: ND = C L^2 x 2.
2. Per individual (a gaze trajectory), class 0 = features at the gazed cell of each
   training frame, class 1 = ``n_negatives`` (15) cells per gazed frame drawn
   uniformly among cells at least ``min_dist_frac`` (31.25 %) of the number of rows
   away from the gazed cell (Euclidean distance in cells). Fisher's discriminant
   with equal class-scatter weights (the paper's fix for class imbalance, after
   eq. 2, sec. 4.2): ``w = (Sigma_0 + Sigma_1 + ridge I)^-1 (m_0 - m_1)`` with the
   class covariance matrices Sigma_i (so k_0 = k_1); the tiny ``ridge``
   (``ridge_rel`` x mean eigenvalue) only makes singular scatter (e.g. uniform
   backgrounds) solvable. ``w`` points from non-attended to attended, so larger
   projections are more salient.
3. The frame split (sec. 5.2): train on every other frame (even frames) of the
   training movie; test on its odd frames ("A on A") and on all frames of another
   movie ("A on B"). Frames earlier than the longest lag are not used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from psybench.attention.defaults import MIN_DIST_FRAC, N_NEGATIVES, SCATTER, SEED
from psybench.attention.movies import MovieData
from psybench.units import frame_ms, ms_to_frames

__all__ = [
    "SCATTERS",
    "LagResolutionError",
    "lag_frames",
    "gaze_cells",
    "train_frames",
    "test_frames",
    "frame_features",
    "feature_vectors",
    "sample_training_set",
    "fisher_filter",
    "fisher_filters",
    "training_vectors",
    "train_filter",
]


class LagResolutionError(ValueError):
    """The movie's frame rate cannot place the feature lags on distinct past frames."""


def lag_frames(lags_ms: Sequence[float], frames_per_s: float) -> list[int]:
    """Past frames shown ``lag`` ms before the onset of the current frame, placed by time.

    Frame ``k`` is on screen during ``[k, k + 1) * 1000 / fps`` ms, so the frame on
    screen ``lag`` ms before the onset of frame ``t`` is ``t - ceil(lag * fps / 1000)``
    (:func:`psybench.units.ms_to_frames`, ``rounding="ceil"``: a tolerance of 1e-6 frame
    absorbs floating-point error: 100 ms at 10 frames/s is
    exactly 1 frame; at 25 frames/s, 2.5 frames -> the frame 3 back, shown from 120 to
    80 ms before the onset).

    Raises
    ------
    LagResolutionError
        If two different lags fall on the same past frame (the frame rate is too low
        to tell them apart), or a lag is negative.
    """
    fps = float(frames_per_s)
    if not fps > 0:
        raise LagResolutionError(f"frame rate must be > 0 frames/s, got {frames_per_s!r}")
    out = []
    for lag in lags_ms:
        if lag < 0:
            raise LagResolutionError(f"lag {lag} ms is negative: lags are past times")
        out.append(ms_to_frames(lag, fps, rounding="ceil") if lag > 0 else 0)
    seen: dict[int, float] = {}
    for lag, k in zip(lags_ms, out):
        if k in seen and seen[k] != lag:
            raise LagResolutionError(
                f"at {fps:g} frames/s the lags {seen[k]:g} ms and {lag:g} ms both fall on the frame {k} back "
                f"(one frame = {frame_ms(fps):g} ms): raise the frame rate or space the lags by a frame"
            )
        seen[k] = lag
    return out


def gaze_cells(x, y, *, source_size, grid_shape) -> tuple[np.ndarray, np.ndarray]:
    """Grid cell (row, col) of gaze positions in source pixels (floor of the scaled position, clipped)."""
    H, W = grid_shape
    sw, sh = source_size
    col = np.clip(np.floor(np.asarray(x, float) * W / sw), 0, W - 1).astype(int)
    row = np.clip(np.floor(np.asarray(y, float) * H / sh), 0, H - 1).astype(int)
    return row, col


def train_frames(n_frames: int, lags: Sequence[int]) -> np.ndarray:
    """The training frames of a movie: every even frame with history at every lag."""
    first = max(lags)
    return np.arange(first + (first % 2), n_frames, 2)


def test_frames(n_frames: int, lags: Sequence[int], *, same_movie: bool) -> np.ndarray:
    """The test frames of a movie: its odd frames when it is the training movie, else every frame, with history."""
    first = max(lags)
    if same_movie:
        return np.arange(first + 1 - (first % 2), n_frames, 2)  # the odd frames
    return np.arange(first, n_frames)


def _patches(maps: np.ndarray, L: int) -> np.ndarray:
    """(n, H, W, C) -> (n, H*W, C*L*L): each cell's L x L neighbourhood, edges replicated."""
    n, H, W, C = maps.shape
    r = L // 2
    padded = np.pad(maps, ((0, 0), (r, r), (r, r), (0, 0)), mode="edge")
    win = np.lib.stride_tricks.sliding_window_view(padded, (L, L), axis=(1, 2))  # (n, H, W, C, L, L)
    return win.reshape(n, H * W, C * L * L)


def frame_features(maps, frames: np.ndarray, *, lags: Sequence[int], L: int) -> np.ndarray:
    """Feature vectors of every cell of the given frames, shape (n, H*W, ND), ND = 2 C L^2 for two lags.

    Order of a vector: lag, channel, neighbourhood row, neighbourhood column.
    ``maps`` may be a Dask array: only the lagged frames needed are loaded.
    """
    if L < 1 or L % 2 == 0:
        raise ValueError(f"neighbourhood size L must be a positive odd number, got {L!r}")
    frames = np.asarray(frames, int)
    parts = []
    for lag in lags:
        idx = frames - lag
        if idx.size and idx.min() < 0:
            raise ValueError(f"frame {int(frames.min())} has no history at lag {lag} frames")
        uniq = np.unique(idx)
        block = np.asarray(maps[uniq], np.float32)  # NumPy or Dask: only these frames are read
        pos = np.searchsorted(uniq, idx)
        parts.append(_patches(block[pos], L))
    return np.concatenate(parts, axis=-1)


def feature_vectors(maps, frames, rows, cols, *, lags: Sequence[int], L: int, chunk: int = 256) -> np.ndarray:
    """Feature vectors at points (frame, row, col), shape (n, ND), same order as :func:`frame_features`.

    Only the lagged frames the points need are loaded, ``chunk`` frames at a time,
    and only the L x L cells around each point are gathered (edges replicated).
    """
    if L < 1 or L % 2 == 0:
        raise ValueError(f"neighbourhood size L must be a positive odd number, got {L!r}")
    frames = np.asarray(frames, int)
    rows = np.asarray(rows, int)
    cols = np.asarray(cols, int)
    if frames.size == 0:
        raise ValueError("feature_vectors: no points given")
    T, H, W, C = maps.shape
    r = L // 2
    off = np.arange(-r, r + 1)
    rr = np.clip(rows[:, None] + off[None, :], 0, H - 1)  # (n, L)
    cc = np.clip(cols[:, None] + off[None, :], 0, W - 1)
    out = np.empty((len(frames), len(lags), C, L, L), np.float32)
    for li, lag in enumerate(lags):
        src = frames - lag
        if src.min() < 0:
            raise ValueError(f"frame {int(frames[src < 0][0])} has no history at lag {lag} frames")
        order = np.argsort(src, kind="stable")
        for a in range(0, len(order), 4096):
            sel = order[a : a + 4096]
            lo, hi = int(src[sel].min()), int(src[sel].max()) + 1
            for b in range(lo, hi, chunk):
                part = sel[(src[sel] >= b) & (src[sel] < b + chunk)]
                if part.size == 0:
                    continue
                block = np.asarray(maps[b : min(b + chunk, hi)], np.float32)  # (n_b, H, W, C)
                vals = block[(src[part] - b)[:, None, None], rr[part][:, :, None], cc[part][:, None, :]]  # (n, L, L, C)
                out[part, li] = np.moveaxis(vals, -1, 1)
    return out.reshape(len(frames), -1)


def sample_training_set(
    gaze: pd.DataFrame,
    frames: np.ndarray,
    *,
    source_size,
    grid_shape,
    n_negatives: int = N_NEGATIVES,
    min_dist_frac: float = MIN_DIST_FRAC,
    seed: int = SEED,
):
    """Attended and non-attended points of one trajectory on ``frames`` (sec. 5.2).

    Class 0: the gazed cell of every frame in ``frames`` where the gaze is valid.
    Class 1: ``n_negatives`` cells per such frame, drawn independently and uniformly
    among the cells at Euclidean distance >= ``min_dist_frac`` x rows from the
    gazed cell (by rejection: uniform cells, redrawn while too close).

    Returns
    -------
    (frames, rows, cols) of class 0 and of class 1, as two tuples of int arrays.
    """
    H, W = grid_shape
    valid = gaze["valid"].to_numpy(bool)
    gazed, first = np.unique(gaze["frame"].to_numpy()[valid], return_index=True)  # a frame's first valid row
    frames = np.asarray(frames, int)
    frames = frames[np.isin(frames, gazed)]
    if len(frames) == 0:
        raise ValueError("no valid gazed frame to train on")
    at = first[np.searchsorted(gazed, frames)]
    row, col = gaze_cells(gaze["x"].to_numpy(float)[valid][at], gaze["y"].to_numpy(float)[valid][at],
                          source_size=source_size, grid_shape=grid_shape)
    min_dist = min_dist_frac * H
    corners = np.array([[0, 0], [0, W - 1], [H - 1, 0], [H - 1, W - 1]])
    reach = np.hypot(row[:, None] - corners[None, :, 0], col[:, None] - corners[None, :, 1]).max(1)
    if np.any(reach < min_dist):
        i = int(np.argmax(reach < min_dist))
        raise ValueError(f"no grid cell is {min_dist:.3g} cells away from ({row[i]}, {col[i]}) on a {H}x{W} grid")
    rng = np.random.default_rng(seed)
    r0, c0 = np.repeat(row, n_negatives), np.repeat(col, n_negatives)
    nr = np.empty(len(r0), int)
    nc = np.empty(len(r0), int)
    todo = np.arange(len(r0))
    while todo.size:
        rr = rng.integers(H, size=todo.size)
        cc = rng.integers(W, size=todo.size)
        ok = np.hypot(rr - r0[todo], cc - c0[todo]) >= min_dist
        nr[todo[ok]], nc[todo[ok]] = rr[ok], cc[ok]
        todo = todo[~ok]
    return (frames, row, col), (np.repeat(frames, n_negatives), nr, nc)


SCATTERS = ("equal", "pooled", "other")


def fisher_filter(
    attended: np.ndarray, other: np.ndarray, *, scatter: str = SCATTER, ridge_rel: float = 1e-6
) -> np.ndarray:
    """Fisher's linear discriminant ``w = S_W^-1 (m_a - m_o)`` (eq. 1-2, section 4.2), unit norm.

    ``scatter`` chooses S_W:

    * ``"equal"`` (the paper): ``Sigma_a + Sigma_o``, the two class covariance
      matrices with equal weights k_0 = k_1, so the many non-attended samples do not
      swamp the attended class's scatter;
    * ``"pooled"``: the classical within-class scatter weighted by class sizes
      (eq. 2 verbatim, which the paper rejects);
    * ``"other"``: ``2 Sigma_o`` only. With few, skewed attended samples, ``Sigma_a``
      is correlated with ``m_a`` and biases ``"equal"`` filters of *random*
      trajectories against sparse salient content (controls fall below 50 %);
      this variant has no such bias.

    A ridge of ``ridge_rel`` x the mean eigenvalue makes singular scatter solvable.
    One trajectory of :func:`fisher_filters`.

    Parameters
    ----------
    attended : ndarray, shape (n0, D)
    other : ndarray, shape (n1, D)

    Returns
    -------
    ndarray, shape (D,)
        Oriented so that attended features project higher.
    """
    attended = np.asarray(attended, np.float64)
    other = np.asarray(other, np.float64)
    if attended.ndim != 2 or other.ndim != 2 or attended.shape[1] != other.shape[1]:
        raise ValueError(f"fisher_filter: need (n, D) arrays with equal D, got {attended.shape}, {other.shape}")
    return fisher_filters(attended[None], other[None], scatter=scatter, ridge_rel=ridge_rel)[0]


def fisher_filters(
    attended: np.ndarray, other: np.ndarray, *, scatter: str = SCATTER, ridge_rel: float = 1e-6
) -> np.ndarray:
    """Fisher's discriminants of a stack of B trajectories at once (:func:`fisher_filter` of each).

    Stacked class scatter matrices ``(B, D, n) @ (B, n, D)`` and one batched
    ``np.linalg.solve`` of ``(S_W,b + ridge_b I) w_b = m_a,b - m_o,b``. Each slice
    runs the floating-point operations of one trajectory alone, in the same order
    (the stacked product calls the same BLAS routine per slice), so a filter does
    not depend on the batch it is trained in, to the bit.

    Parameters
    ----------
    attended : ndarray, shape (B, n0, D)
        Attended points of each trajectory (n0 >= 2).
    other : ndarray, shape (B, n1, D)
        Their non-attended points (n1 >= 2).

    Returns
    -------
    ndarray, shape (B, D)
    """
    A = np.asarray(attended, np.float64)
    O = np.asarray(other, np.float64)  # noqa: E741  (the class "other")
    if A.ndim != 3 or O.ndim != 3 or A.shape[0] != O.shape[0] or A.shape[2] != O.shape[2]:
        raise ValueError(f"fisher_filters: need (B, n, D) stacks with equal B and D, got {A.shape}, {O.shape}")
    if A.shape[1] < 2 or O.shape[1] < 2:
        raise ValueError("fisher_filter: each class needs at least 2 samples")
    D = A.shape[2]

    def cov(x):
        xc = x - x.mean(1, keepdims=True)
        return np.matmul(xc.transpose(0, 2, 1), xc) / (x.shape[1] - 1)

    if scatter == "equal":
        sw = cov(A) + cov(O)
    elif scatter == "pooled":
        n0, n1 = A.shape[1], O.shape[1]
        sw = 2.0 * ((n0 - 1) * cov(A) + (n1 - 1) * cov(O)) / (n0 + n1 - 2)
    elif scatter == "other":
        sw = 2.0 * cov(O)
    else:
        raise ValueError(f"scatter must be one of {SCATTERS}, got {scatter!r}")
    ridge = ridge_rel * np.maximum(np.trace(sw, axis1=1, axis2=2) / D, 1e-12)
    w = np.linalg.solve(sw + ridge[:, None, None] * np.eye(D), (A.mean(1) - O.mean(1))[..., None])[..., 0]
    # the BLAS dot of np.linalg.norm per vector (an axis-wise norm sums in another order)
    norm = np.array([np.linalg.norm(v) for v in w])
    return w / np.where(norm > 0, norm, 1.0)[:, None]


def training_vectors(movie: MovieData, gaze: pd.DataFrame, frames, *, lags, L, n_negatives, min_dist_frac, seed):
    """Feature vectors of one trajectory's attended and non-attended points (:func:`sample_training_set`)
    on ``frames``."""
    H, W = movie.shape[1:3]
    pos, neg = sample_training_set(
        gaze, frames, source_size=movie.source_size, grid_shape=(H, W),
        n_negatives=n_negatives, min_dist_frac=min_dist_frac, seed=seed,
    )
    Xa = feature_vectors(movie.maps, *pos, lags=lags, L=L)
    Xo = feature_vectors(movie.maps, *neg, lags=lags, L=L)
    return Xa, Xo


def train_filter(movie: MovieData, gaze: pd.DataFrame, frames, *, lags, L, n_negatives, min_dist_frac, seed,
                 scatter=SCATTER):
    """The Fisher filter of one trajectory on ``frames`` (:func:`training_vectors`, :func:`fisher_filter`)."""
    Xa, Xo = training_vectors(movie, gaze, frames, lags=lags, L=L, n_negatives=n_negatives,
                              min_dist_frac=min_dist_frac, seed=seed)
    return fisher_filter(Xa, Xo, scatter=scatter)
