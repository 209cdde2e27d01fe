"""The paper's evaluation: per-individual Fisher tuning and saliency rank percentiles.

Shic & Scassellati (2007), sections 4.2, 4.3, 5.1 and 5.2:

1. Feature vector of a point (section 5.2): the base maps of
   :mod:`psybench.attention.features` in the ``L x L`` neighbourhood of the point
   (edges replicated) at the past times -100 ms and -300 ms: ND = C L^2 x 2.
2. Per individual (a gaze trajectory), class 0 = features at the gazed cell of each
   training frame, class 1 = ``n_negatives`` (15) cells per gazed frame drawn
   uniformly among cells at least ``min_dist_frac`` (31.25 %) of the number of rows
   away from the gazed cell (Euclidean distance in cells). Fisher's discriminant
   with equal class-scatter weights (the paper's fix for class imbalance, after
   eq. 2): ``w = (Sigma_0 + Sigma_1 + ridge I)^-1 (m_0 - m_1)`` with the class
   covariance matrices Sigma_i (so k_0 = k_1); the tiny ``ridge`` (``ridge_rel`` x
   mean eigenvalue) only makes singular scatter (e.g. uniform backgrounds) solvable.
   ``w`` points from non-attended to attended, so larger projections are more salient.
3. Rank percentile (section 5.2) of observer v's gazed cell on the map tuned to u,
   per frame, over the valid cells I (all grid cells)::

       R = (#{i : S(i) < s} + 0.5 * (#{i : S(i) = s} - 1)) / (|I| - 1)

   *Tie rule*: mid-rank, the gazed cell itself excluded, so a gaze location drawn
   uniformly at random scores 50 % in expectation whatever the map (uniform regions
   of equal saliency do not bias the score). ``ties="paper"`` gives the paper's
   ``#{S < s} / |I|`` instead.
4. Curves: the sorted R over test frames read at response percentiles 0..100
   (Fig. 8); per pair (u, v) the median (rp = 50).
5. Groups (Table 1): ``n ma`` (u = v, human), ``n un`` (u != v, humans), ``rf/n``
   (random filters w ~ N(0, I)), ``rs/n`` (filters trained on random-saccade
   scanpaths), ``rp/n`` (trained on random-physiological scanpaths), the last three
   tested on every human. ``n_sets`` (5) synthetic sets per random category; a set is
   one parameter setting (jump rate for RS, spill fraction for RP) holding
   ``n_per_set`` scanpaths (default: as many as there are humans). Reported
   ``median`` = mean over pairs of the per-pair median R (%) and ``sd`` = standard
   deviation over pairs, as the paper reports "mean percentages with standard
   deviations" of medians.
6. Train on every other frame (even frames) of the training movie; test on its odd
   frames ("A on A") and on all frames of another movie ("A on B"). Frames earlier
   than the longest lag are not used.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from psybench.attention import gaze as gz
from psybench.io.store import open_store
from psybench.io.tables import write_table

__all__ = [
    "GROUPS",
    "MovieData",
    "load_movie",
    "lag_frames",
    "gaze_cells",
    "frame_features",
    "feature_vectors",
    "sample_training_set",
    "fisher_filter",
    "rank_percentiles",
    "control_scanpaths",
    "control_filters",
    "movie_control_filters",
    "evaluate_pair",
    "evaluate",
    "run_evaluation",
    "plot_curves",
]

log = logging.getLogger(__name__)

GROUPS = ("n ma", "n un", "rf/n", "rs/n", "rp/n")
#: Jump rates (per second) of the five random-saccade sets: they span human saccade
#: rates (about 3 per second) from slow to fast scanning.
RS_JUMP_RATES_HZ = (1.0, 2.0, 3.0, 4.0, 5.0)
RP_SPILLS = (0.01, 0.02, 0.05, 0.1, 0.2)
RESPONSE_PERCENTILES = np.arange(0, 101, 5)


@dataclass
class MovieData:
    """One movie's base maps and gaze, ready for evaluation.

    Attributes
    ----------
    name : str
    maps : ndarray or dask array, shape (T, H, W, C)
    frames_per_s : float
    source_size : (int, int)
        (width, height) of the gaze coordinates' frame.
    gaze : DataFrame
        Tidy per-frame table (:data:`psybench.attention.gaze.FRAME_COLUMNS`).
    kind : str
        Feature kind of ``maps``.
    """

    name: str
    maps: Any
    frames_per_s: float
    source_size: tuple[int, int]
    gaze: pd.DataFrame
    kind: str = ""

    @property
    def shape(self):
        return tuple(self.maps.shape)


#: Feature maps up to this size (MB) are read into memory once by :func:`load_movie`;
#: larger ones stay lazy and stream from the store chunk by chunk.
IN_MEMORY_MB = 1024.0


def load_movie(
    name: str,
    feature_store: str | os.PathLike,
    gaze_table: pd.DataFrame | str | os.PathLike,
    *,
    in_memory_mb: float | None = IN_MEMORY_MB,
) -> MovieData:
    """Open a feature store and a gaze table (path or DataFrame) as :class:`MovieData`.

    The evaluation gathers features at hundreds of trajectories' points, each pass
    touching most frames; maps that fit in ``in_memory_mb`` (a one-minute movie on
    the 40x30 grid takes a few MB) are therefore decoded once into memory, while
    longer movies stay lazy Dask arrays read ``chunk`` frames at a time (memory
    bounded, slower). ``None`` always keeps them lazy.
    """
    from psybench.io.tables import read_table

    store = open_store(feature_store)
    g = gaze_table if isinstance(gaze_table, pd.DataFrame) else read_table(gaze_table)
    missing = [c for c in gz.FRAME_COLUMNS if c not in g.columns]
    if missing:
        raise ValueError(f"gaze table for movie {name!r} lacks column(s) {missing}")
    if "movie" in g.columns and g["movie"].nunique() > 1:
        g = g[g["movie"].astype(str) == str(name)]
    for key in ("frames_per_s", "source_size"):
        if store.attrs.get(key) is None:
            raise ValueError(f"feature store {feature_store} lacks attribute {key!r}")
    maps = store["maps"]
    if in_memory_mb is not None and maps.nbytes <= in_memory_mb * 1e6:
        maps = np.asarray(maps)
    return MovieData(
        name=str(name),
        maps=maps,
        frames_per_s=float(store.attrs["frames_per_s"]),
        source_size=tuple(store.attrs["source_size"]),
        gaze=g.reset_index(drop=True),
        kind=store.attrs.get("features", {}).get("kind", ""),
    )


def lag_frames(lags_ms: Sequence[float], frames_per_s: float) -> list[int]:
    """Past times in whole frames, ``round(lag * fps / 1000)`` (at least 1 frame apart from 0)."""
    return [max(0, int(round(lag * frames_per_s / 1000.0))) for lag in lags_ms]


def gaze_cells(x, y, *, source_size, grid_shape) -> tuple[np.ndarray, np.ndarray]:
    """Grid cell (row, col) of gaze positions in source pixels (floor of the scaled position, clipped)."""
    H, W = grid_shape
    sw, sh = source_size
    col = np.clip(np.floor(np.asarray(x, float) * W / sw), 0, W - 1).astype(int)
    row = np.clip(np.floor(np.asarray(y, float) * H / sh), 0, H - 1).astype(int)
    return row, col


def _train_frames(n_frames: int, lags: Sequence[int]) -> np.ndarray:
    """The training frames of a movie: every even frame with history at every lag."""
    first = max(lags)
    return np.arange(first + (first % 2), n_frames, 2)


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
    n_negatives: int = 15,
    min_dist_frac: float = 0.3125,
    seed: int = 0,
):
    """Attended and non-attended points of one trajectory on ``frames`` (section 5.2).

    Class 0: the gazed cell of every frame in ``frames`` where the gaze is valid.
    Class 1: ``n_negatives`` cells per such frame, drawn independently and uniformly
    among the cells at Euclidean distance >= ``min_dist_frac`` x rows from the
    gazed cell (by rejection: uniform cells, redrawn while too close).

    Returns
    -------
    (frames, rows, cols) of class 0 and of class 1, as two tuples of int arrays.
    """
    H, W = grid_shape
    g = gaze[gaze["valid"].astype(bool)].drop_duplicates("frame").set_index("frame")
    frames = np.asarray(frames, int)
    frames = frames[np.isin(frames, g.index.to_numpy())]
    if len(frames) == 0:
        raise ValueError("no valid gazed frame to train on")
    row, col = gaze_cells(g.loc[frames, "x"].to_numpy(), g.loc[frames, "y"].to_numpy(), source_size=source_size, grid_shape=grid_shape)
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


def fisher_filter(attended: np.ndarray, other: np.ndarray, *, scatter: str = "equal", ridge_rel: float = 1e-6) -> np.ndarray:
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
    if len(attended) < 2 or len(other) < 2:
        raise ValueError("fisher_filter: each class needs at least 2 samples")
    D = attended.shape[1]

    def cov(x):
        xc = x - x.mean(0)
        return (xc.T @ xc) / (len(x) - 1)

    if scatter == "equal":
        sw = cov(attended) + cov(other)
    elif scatter == "pooled":
        n0, n1 = len(attended), len(other)
        sw = 2.0 * ((n0 - 1) * cov(attended) + (n1 - 1) * cov(other)) / (n0 + n1 - 2)
    elif scatter == "other":
        sw = 2.0 * cov(other)
    else:
        raise ValueError(f"scatter must be one of {SCATTERS}, got {scatter!r}")
    ridge = ridge_rel * max(np.trace(sw) / D, 1e-12)
    w = np.linalg.solve(sw + ridge * np.eye(D), attended.mean(0) - other.mean(0))
    norm = np.linalg.norm(w)
    return w / norm if norm > 0 else w


def rank_percentiles(saliency: np.ndarray, cells: np.ndarray, *, ties: str = "mid") -> np.ndarray:
    """Rank percentile (0..1) of gazed cells on per-frame saliency maps.

    Parameters
    ----------
    saliency : ndarray, shape (n, K) or (n, K, U)
        Maps over the K valid cells of n frames (optionally U maps per frame).
    cells : ndarray of int, shape (n,)
        Flat index of the gazed cell per frame.
    ties : {'mid', 'paper'}
        'mid': (lower + (equal - 1) / 2) / (K - 1); 'paper': lower / K.

    Returns
    -------
    ndarray, shape (n,) or (n, U)
    """
    S = np.asarray(saliency)
    squeeze = S.ndim == 2
    if squeeze:
        S = S[..., None]
    n, K, _ = S.shape
    s = S[np.arange(n), np.asarray(cells, int)]  # (n, U)
    lower = (S < s[:, None, :]).sum(1)
    if ties == "paper":
        R = lower / K
    elif ties == "mid":
        equal = (S == s[:, None, :]).sum(1)
        R = (lower + 0.5 * (equal - 1)) / (K - 1)
    else:
        raise ValueError(f"ties must be 'mid' or 'paper', got {ties!r}")
    return R[:, 0] if squeeze else R


def _train(movie: MovieData, gaze: pd.DataFrame, frames, *, lags, L, n_negatives, min_dist_frac, seed, scatter="equal"):
    H, W = movie.shape[1:3]
    pos, neg = sample_training_set(
        gaze, frames, source_size=movie.source_size, grid_shape=(H, W),
        n_negatives=n_negatives, min_dist_frac=min_dist_frac, seed=seed,
    )
    Xa = feature_vectors(movie.maps, *pos, lags=lags, L=L)
    Xo = feature_vectors(movie.maps, *neg, lags=lags, L=L)
    return fisher_filter(Xa, Xo, scatter=scatter)


def control_scanpaths(
    movie: MovieData,
    humans: pd.DataFrame,
    *,
    n_sets: int = 5,
    n_per_set: int | None = None,
    seed: int = 0,
) -> dict[str, list[pd.DataFrame]]:
    """The synthetic trajectories of the random controls (section 5.1): {'rs': [...], 'rp': [...]}.

    One per-frame gaze table per set. RS sets vary the jump rate over
    :data:`RS_JUMP_RATES_HZ` (per-frame probability ``rate / frames_per_s``, so a set
    means the same at any frame rate), RP sets the spill fraction over
    :data:`RP_SPILLS` (both cycled when ``n_sets`` > 5); RP draws its statistics from
    the human per-frame tracks of ``movie``. They depend on the movie only, not on
    the features, so :func:`evaluate` draws them once per training movie.
    """
    subjects = sorted(humans["subject"].unique())
    n_per_set = n_per_set or len(subjects)
    T = movie.shape[0]
    tracks = [humans[humans["subject"] == s].sort_values("frame")[["x", "y"]].to_numpy(float) for s in subjects]
    out: dict[str, list[pd.DataFrame]] = {"rs": [], "rp": []}
    for k in range(n_sets):
        rate = RS_JUMP_RATES_HZ[k % len(RS_JUMP_RATES_HZ)]
        out["rs"].append(gz.random_saccade_scanpaths(
            T, source_size=movie.source_size, frames_per_s=movie.frames_per_s, seed=seed * 1000 + 100 + k,
            n=n_per_set, jump_prob=min(1.0, rate / movie.frames_per_s), movie=movie.name, subject_prefix=f"rs{k}_",
        ))
        out["rp"].append(gz.random_physiological_scanpaths(
            tracks, T, source_size=movie.source_size, frames_per_s=movie.frames_per_s, seed=seed * 1000 + 200 + k,
            n=n_per_set, spill=RP_SPILLS[k % len(RP_SPILLS)], movie=movie.name, subject_prefix=f"rp{k}_",
        ))
    return out


def control_filters(
    movie: MovieData,
    humans: pd.DataFrame,
    frames,
    *,
    lags,
    L: int,
    n_sets: int = 5,
    n_per_set: int | None = None,
    n_negatives: int = 15,
    min_dist_frac: float = 0.3125,
    seed: int = 0,
    scatter: str = "equal",
    scanpaths: Mapping[str, Sequence[pd.DataFrame]] | None = None,
) -> dict[str, list[np.ndarray]]:
    """Filters of the random controls (section 5.1): {'rf': [...], 'rs': [...], 'rp': [...]}.

    RF: ``n_sets x n_per_set`` directions w ~ N(0, I). RS and RP: one Fisher filter
    per trajectory of :func:`control_scanpaths` (pass ``scanpaths`` to reuse them),
    trained exactly as the humans' filters.
    """
    subjects = sorted(humans["subject"].unique())
    n_per_set = n_per_set or len(subjects)
    C = movie.shape[-1]
    D = C * L * L * len(lags)
    rng = np.random.default_rng([seed, 1])
    out: dict[str, list[np.ndarray]] = {"rf": [], "rs": [], "rp": []}
    for k in range(n_sets * n_per_set):
        w = rng.normal(size=D)
        out["rf"].append(w / np.linalg.norm(w))
    if scanpaths is None:
        scanpaths = control_scanpaths(movie, humans, n_sets=n_sets, n_per_set=n_per_set, seed=seed)
    for name in ("rs", "rp"):
        for k, table in enumerate(scanpaths[name]):
            for j, (subj, g) in enumerate(table.groupby("subject", sort=True)):
                out[name].append(
                    _train(movie, g, frames, lags=lags, L=L, n_negatives=n_negatives,
                           min_dist_frac=min_dist_frac, seed=seed * 7919 + 31 * k + j + (0 if name == "rs" else 17),
                           scatter=scatter)
                )
    return out


def movie_control_filters(
    train: MovieData,
    *,
    L: int,
    lags_ms: Sequence[float] = (100.0, 300.0),
    scanpaths: Mapping[str, Sequence[pd.DataFrame]] | None = None,
    **settings,
) -> dict[str, list[np.ndarray]]:
    """:func:`control_filters` of a training movie on its training frames (every even frame with history).

    ``settings``: n_sets, n_per_set, n_negatives, min_dist_frac, seed, scatter.
    """
    lags = lag_frames(lags_ms, train.frames_per_s)
    return control_filters(train, train.gaze, _train_frames(train.shape[0], lags), lags=lags, L=L,
                           scanpaths=scanpaths, **settings)


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


def _test_ranks(movie: MovieData, humans: pd.DataFrame, frames, filters: np.ndarray, *, lags, L, ties, chunk=None):
    """R for every filter (U) and human (V) on the test frames: dict subject -> (n_valid, U)."""
    H, W = movie.shape[1:3]
    arrays = _gaze_arrays(humans, movie.shape[0])
    frames = np.asarray(frames, int)
    res: dict[str, list[np.ndarray]] = {s: [] for s in arrays}
    if chunk is None:  # keep the (frames, cells, filters) block near 16 MB
        chunk = max(1, int(4e6 // max(1, H * W * len(filters))))
    for a in range(0, len(frames), chunk):
        fr = frames[a : a + chunk]
        X = frame_features(movie.maps, fr, lags=lags, L=L)  # (n, K, D)
        S = X @ filters.T.astype(np.float32)  # (n, K, U)
        for s, (valid, x, y) in arrays.items():
            ok = valid[fr]
            if not ok.any():
                continue
            row, col = gaze_cells(x[fr[ok]], y[fr[ok]], source_size=movie.source_size, grid_shape=(H, W))
            res[s].append(rank_percentiles(S[ok], row * W + col, ties=ties))
    return {s: np.concatenate(v) if v else np.zeros((0, filters.shape[0])) for s, v in res.items()}


def evaluate_pair(
    train: MovieData,
    test: MovieData,
    *,
    L: int,
    lags_ms: Sequence[float] = (100.0, 300.0),
    n_sets: int = 5,
    n_per_set: int | None = None,
    n_negatives: int = 15,
    min_dist_frac: float = 0.3125,
    ties: str = "mid",
    seed: int = 0,
    scatter: str = "equal",
    controls: Mapping[str, Sequence[np.ndarray]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train on ``train``'s even frames, test on ``test`` (odd frames if it is the same movie).

    ``controls`` (from :func:`movie_control_filters` on the same training movie,
    features and settings) reuses the control filters, which do not depend on the
    test movie.

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
        raise ValueError(f"movies {train.name!r} and {test.name!r} have different map shapes {train.shape[1:]} vs {test.shape[1:]}")
    lags = lag_frames(lags_ms, train.frames_per_s)
    first = max(lags)
    train_frames = _train_frames(train.shape[0], lags)
    if test.name == train.name:
        test_frames = np.arange(first + 1 - (first % 2), test.shape[0], 2)  # the odd frames
    else:
        test_frames = np.arange(first, test.shape[0])
    humans_train = train.gaze
    subjects = sorted(humans_train["subject"].unique())
    common = dict(lags=lags, L=L, n_negatives=n_negatives, min_dist_frac=min_dist_frac, scatter=scatter)
    filters, labels = [], []
    for i, s in enumerate(subjects):
        g = humans_train[humans_train["subject"] == s]
        filters.append(_train(train, g, train_frames, seed=seed * 7919 + 100003 + i, **common))
        labels.append(("n", s))
    ctrl = controls
    if ctrl is None:
        ctrl = movie_control_filters(train, L=L, lags_ms=lags_ms, n_sets=n_sets, n_per_set=n_per_set,
                                     n_negatives=n_negatives, min_dist_frac=min_dist_frac, seed=seed, scatter=scatter)
    for kind in ("rf", "rs", "rp"):
        for j, w in enumerate(ctrl[kind]):
            filters.append(w)
            labels.append((kind, f"{kind}{j:03d}"))
    F = np.stack(filters)
    ranks = _test_ranks(test, test.gaze, test_frames, F, lags=lags, L=L, ties=ties)
    rows, curves = [], []
    for v, R in ranks.items():
        if len(R) == 0:
            continue
        med = np.median(R, axis=0) * 100
        curve = np.percentile(R, RESPONSE_PERCENTILES, axis=0) * 100  # (n_rp, U)
        for u, (kind, name) in enumerate(labels):
            if kind == "n":
                group = "n ma" if name == v else "n un"
            else:
                group = f"{kind}/n"
            rows.append({"group": group, "filter": name, "subject": v, "median": med[u], "n_frames": len(R)})
            for rp, val in zip(RESPONSE_PERCENTILES, curve[:, u]):
                curves.append({"group": group, "filter": name, "subject": v, "rp": int(rp), "value": val})
    return pd.DataFrame(rows), pd.DataFrame(curves)


def evaluate(
    movies: Mapping[str, Mapping[str, MovieData]],
    *,
    models: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    lags_ms: Sequence[float] = (100.0, 300.0),
    n_sets: int = 5,
    n_per_set: int | None = None,
    n_negatives: int = 15,
    min_dist_frac: float = 0.3125,
    ties: str = "mid",
    seed: int = 0,
    scatter: str = "equal",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 and the curves for every model (``{"features": kind, "L": int}``) and (train, test) pair.

    Parameters
    ----------
    movies : mapping movie -> feature kind -> MovieData
    models : sequence of mappings with keys ``features`` and ``L``
    pairs : sequence of (train movie, test movie)

    Returns
    -------
    table1 : DataFrame
        Columns train, test, features, L, ND, group, median, sd, n_pairs.
    curves : DataFrame
        Columns train, test, features, L, group, rp, value (mean over pairs), sd.
    """
    table, curves = [], []
    settings = dict(n_sets=n_sets, n_per_set=n_per_set, n_negatives=n_negatives, min_dist_frac=min_dist_frac,
                    seed=seed, scatter=scatter)
    scanpaths: dict[str, dict] = {}  # training movie -> control trajectories (feature-independent)
    n_jobs, done, t0 = len(models) * len(pairs), 0, time.perf_counter()
    log.info("Table 1: %d models x %d (train, test) pairs; %d sets x %s trajectories per control category",
             len(models), len(pairs), n_sets, n_per_set or "n_observers")
    for model in models:
        kind, L = model["features"], int(model["L"])
        controls: dict[str, dict] = {}  # training movie -> control filters of this model
        for tr, te in pairs:
            for name in (tr, te):
                if name not in movies or kind not in movies[name]:
                    raise ValueError(f"evaluate: no {kind!r} features for movie {name!r}")
            train, test = movies[tr][kind], movies[te][kind]
            if tr not in scanpaths:
                scanpaths[tr] = control_scanpaths(train, train.gaze, n_sets=n_sets, n_per_set=n_per_set, seed=seed)
            if tr not in controls:
                controls[tr] = movie_control_filters(train, L=L, lags_ms=lags_ms, scanpaths=scanpaths[tr], **settings)
            pr, cv = evaluate_pair(train, test, L=L, lags_ms=lags_ms, ties=ties, controls=controls[tr], **settings)
            nd = int(train.shape[-1]) * L * L * len(lags_ms)
            for group in GROUPS:
                sub = pr[pr["group"] == group]
                table.append({
                    "train": tr, "test": te, "features": kind, "L": L, "ND": nd, "group": group,
                    "median": float(sub["median"].mean()) if len(sub) else np.nan,
                    "sd": float(sub["median"].std(ddof=1)) if len(sub) > 1 else np.nan,
                    "n_pairs": int(len(sub)),
                })
                c = cv[cv["group"] == group].groupby("rp")["value"]
                for rp, mean in c.mean().items():
                    curves.append({"train": tr, "test": te, "features": kind, "L": L, "group": group,
                                   "rp": int(rp), "value": float(mean), "sd": float(c.std(ddof=1).get(rp, np.nan))})
            done += 1
            meds = pr.groupby("group")["median"].mean()
            log.info("[%d/%d] %s L=%d, %s on %s: %s (%.0f s elapsed)", done, n_jobs, kind, L, tr, te,
                     ", ".join(f"{g} {meds[g]:.1f}" for g in GROUPS if g in meds), time.perf_counter() - t0)
    return pd.DataFrame(table), pd.DataFrame(curves)


def plot_curves(curves: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Fig. 8-style curves: one panel per (model, train/test pair), one line per group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = curves[["features", "L"]].drop_duplicates().to_records(index=False).tolist()
    pairs = curves[["train", "test"]].drop_duplicates().to_records(index=False).tolist()
    fig, axes = plt.subplots(len(models), len(pairs), figsize=(3.2 * len(pairs), 2.8 * len(models)), squeeze=False)
    for i, (kind, L) in enumerate(models):
        for j, (tr, te) in enumerate(pairs):
            ax = axes[i][j]
            sub = curves[(curves["features"] == kind) & (curves["L"] == L) & (curves["train"] == tr) & (curves["test"] == te)]
            for group in GROUPS:
                g = sub[sub["group"] == group].sort_values("rp")
                if len(g):
                    ax.plot(g["rp"], g["value"], label=group)
            ax.plot([0, 100], [50, 50], color="0.7", lw=0.8, ls="--")
            ax.set_ylim(0, 100)
            ax.set_title(f"{kind} L={L}: {tr} on {te}", fontsize=9)
            ax.set_xlabel("response percentile (%)", fontsize=8)
            ax.set_ylabel("saliency rank percentile (%)", fontsize=8)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def run_evaluation(
    feature_stores: Mapping[str, Mapping[str, str]],
    gaze_tables: Mapping[str, str],
    *,
    table_path: str | os.PathLike,
    curves_path: str | os.PathLike,
    figure_path: str | os.PathLike,
    **kwargs,
) -> pd.DataFrame:
    """Load stores and tables, run :func:`evaluate`, write table1, curves and figure.

    Parameters
    ----------
    feature_stores : mapping movie -> kind -> store path
    gaze_tables : mapping movie -> gaze table path
    **kwargs
        ``in_memory_mb`` goes to :func:`load_movie`, the rest to :func:`evaluate`
        (models, pairs, ...).
    """
    in_memory_mb = kwargs.pop("in_memory_mb", IN_MEMORY_MB)
    movies = {
        m: {k: load_movie(m, p, gaze_tables[m], in_memory_mb=in_memory_mb) for k, p in kinds.items()}
        for m, kinds in feature_stores.items()
    }
    table, curves = evaluate(movies, **kwargs)
    write_table(table, table_path)
    write_table(curves, curves_path)
    plot_curves(curves, figure_path)
    return table
