"""The train/test split of a movie's frames, and the gap that keeps it from leaking.

Shic & Scassellati (2007, sec. 5.2) train "on every other frame" of a movie and test
on the frames in between (``split="even_odd"``, :func:`psybench.attention.tuning.train_frames`
and :func:`~psybench.attention.tuning.test_frames`). At 25-30 frames/s a test frame is
then 33-40 ms from a training frame, and neither the gaze (fixations last a few hundred
ms) nor the features (each spans the frames back to the longest lag) change in 40 ms:
the test set is the training set again, and a filter tuned to one person's gaze
"predicts" that person's gaze on any movie, related or not.

``split="blocks"`` (the default) cuts the frames with history into ``n_blocks``
contiguous blocks of time, trains on the even blocks and tests on the odd ones, and
drops from each test block the frames within ``gap`` frames of a training block, so
that every test frame is more than ``gap`` frames from every training frame.

The gap (:func:`decorrelation_gap`), when the config does not set it, comes from the
data, never from scores::

    gap = max(lags) + max(tau(gaze), tau(features))

with ``tau(x)`` the first time lag (frames) at which the autocorrelation of ``x``
(:func:`autocorrelation`: each signal centred on its own mean over time, pooled over
signals) falls below :data:`ACF_THRESHOLD`. The gaze signals are every observer's x and
y on the frames with valid gaze; the features are every cell and channel of the maps.
``max(lags)`` is added because a feature vector at frame t holds the maps back to
t - max(lags): test and training vectors then share no frame and their maps are
decorrelated. Centring removes what does not change in time (a person's usual screen
position, a movie's fixed layout): that structure is a person's or a movie's, the same
in training and test, and a model may legitimately learn it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.tuning import test_frames, train_frames

__all__ = ["SPLITS", "ACF_THRESHOLD", "MAX_ACF_CELLS", "MAX_ACF_CHANNELS", "autocorrelation", "correlation_time",
           "decorrelation_gap", "MIN_TEST_FRACTION", "block_split", "split_frames", "pair_frames", "fit_frames"]

#: The split rules: contiguous blocks with a gap (default), or the paper's even/odd frames.
SPLITS = ("blocks", "even_odd")
#: Autocorrelation below which two frames count as unrelated.
ACF_THRESHOLD = 0.1
#: Cells of the maps sampled (a regular sub-grid) to estimate their autocorrelation.
MAX_ACF_CELLS = 300
#: Channels of the maps sampled (evenly spaced) to estimate their autocorrelation.
MAX_ACF_CHANNELS = 16


def autocorrelation(x: np.ndarray) -> np.ndarray:
    """Pooled autocorrelation of signals over time.

    Parameters
    ----------
    x : ndarray, shape (T, D)
        D signals over T frames; NaN marks a missing sample (counts as the mean).

    Returns
    -------
    ndarray, shape (T,)
        ``acf[k] = sum_d sum_t x'_d(t) x'_d(t + k) / sum_d sum_t x'_d(t)^2`` with
        ``x'`` each signal minus its mean (biased estimator, ``acf[0] = 1``); all
        zeros when no signal varies (a signal constant to 1e-9 of its mean counts as constant).
    """
    x = np.asarray(x, np.float64).reshape(len(x), -1)
    finite = np.where(np.isfinite(x), x, np.nan)
    if x.size and np.isfinite(finite).any():
        mean = np.nanmean(finite, axis=0, keepdims=True)
        x = finite - mean
        # a signal constant up to rounding (a static map) does not vary: its residue of ~1e-16 is no correlation
        still = ~(np.nanmax(np.abs(x), axis=0, initial=0.0) > 1e-9 * (np.abs(np.nan_to_num(mean[0])) + 1e-300))
        x[:, still] = 0.0
    x = np.where(np.isfinite(x), x, 0.0)
    T = len(x)
    if T == 0:
        return np.zeros(0)
    spec = np.fft.rfft(x, n=2 * T, axis=0)
    acf = np.fft.irfft((spec * spec.conj()).real.sum(1), n=2 * T)[:T]
    return acf / acf[0] if acf[0] > 0 else np.zeros(T)


def correlation_time(x: np.ndarray, *, threshold: float = ACF_THRESHOLD) -> int:
    """First lag (frames, >= 1) at which :func:`autocorrelation` of ``x`` falls below ``threshold``.

    ``len(x)`` when it never does (the signals are related over the whole movie).
    """
    acf = autocorrelation(x)
    below = np.flatnonzero(acf[1:] < threshold)
    return int(below[0] + 1) if below.size else len(acf)


def _gaze_signals(gaze: pd.DataFrame, n_frames: int) -> np.ndarray:
    """(n_frames, 2 * observers): every observer's x and y per frame, NaN where gaze is invalid."""
    cols = []
    for _s, g in gaze.groupby("subject", sort=True):
        f = g["frame"].to_numpy(int)
        ok = (f >= 0) & (f < n_frames) & g["valid"].to_numpy(bool)
        for c in ("x", "y"):
            v = np.full(n_frames, np.nan)
            v[f[ok]] = g[c].to_numpy(float)[ok]
            cols.append(v)
    return np.stack(cols, 1) if cols else np.zeros((n_frames, 0))


def _map_signals(maps) -> np.ndarray:
    """(T, D): the maps on a regular sub-grid of at most about :data:`MAX_ACF_CELLS` cells and
    :data:`MAX_ACF_CHANNELS` channels (evenly spaced)."""
    T, H, W = maps.shape[:3]
    C = maps.shape[3] if len(maps.shape) > 3 else 1
    step = max(1, int(np.ceil(np.sqrt(H * W / MAX_ACF_CELLS))))
    sub = maps[:, ::step, ::step]
    if len(maps.shape) > 3:
        sub = sub[..., :: max(1, -(-C // MAX_ACF_CHANNELS))]
    return np.asarray(sub, np.float64).reshape(T, -1)


def decorrelation_gap(movie, lags: Sequence[int], *, threshold: float = ACF_THRESHOLD) -> int:
    """The gap (frames) between training and test frames of ``movie`` (module docstring's rule).

    ``movie``: a :class:`~psybench.attention.movies.MovieData` (its maps and gaze).
    """
    T = movie.shape[0]
    tau_gaze = correlation_time(_gaze_signals(movie.gaze, T), threshold=threshold)
    tau_maps = correlation_time(_map_signals(movie.maps), threshold=threshold)
    return int(max(lags) + max(tau_gaze, tau_maps))


def block_split(n_frames: int, lags: Sequence[int], *, n_blocks: int, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """Training and test frames of one movie: even and odd blocks of time, test frames > ``gap`` from training ones.

    The frames with history (from ``max(lags)``) are cut into ``n_blocks`` contiguous
    blocks of (nearly) equal length; block 0, 2, ... train, block 1, 3, ... test, each
    test block less its frames within ``gap`` frames of a neighbouring training block.

    Raises
    ------
    ValueError
        When no test frame is left (the movie is too short for this gap and number of blocks).
    """
    first = max(lags)
    if n_blocks < 2:
        raise ValueError(f"attention.evaluation.split_blocks: {n_blocks} < 2 (one block trains, the next tests)")
    edges = np.round(np.linspace(first, n_frames, n_blocks + 1)).astype(int)
    train, test = [], []
    for i in range(n_blocks):
        a, b = int(edges[i]), int(edges[i + 1])
        if i % 2 == 0:
            train.append(np.arange(a, b))
        else:
            end = b - gap if i + 1 < n_blocks else b  # a training block follows
            test.append(np.arange(a + gap, max(a + gap, end)))
    train_f, test_f = np.concatenate(train), np.concatenate(test)
    if len(test_f) == 0 or len(train_f) == 0:
        raise ValueError(
            f"attention.evaluation.split: a movie of {n_frames} frames (history from frame {first}) in {n_blocks} "
            f"blocks leaves no test frame more than {gap} frames from the training frames; use a longer movie, "
            "fewer split_blocks, a shorter split_gap_ms, or split: even_odd (which leaks, see the docs)")
    return train_f, test_f


#: Fewer blocks are used when the configured number leaves less than this fraction of the frames to test.
MIN_TEST_FRACTION = 0.2


def _fitting_blocks(n_frames: int, lags: Sequence[int], *, n_blocks: int, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_split` with the most blocks (``n_blocks`` down to 2) that keep :data:`MIN_TEST_FRACTION` to test.

    Each boundary between a training and a test block costs ``gap`` test frames, so a
    short movie (or a long gap) is split into fewer, longer blocks rather than lose its
    test set; with 2 blocks whatever is left is tested (:func:`block_split` raises when
    nothing is).
    """
    usable = n_frames - max(lags)
    if n_blocks < 2:
        return block_split(n_frames, lags, n_blocks=n_blocks, gap=gap)  # raises, naming the key
    for b in range(n_blocks, 2, -1):
        try:
            fit, held = block_split(n_frames, lags, n_blocks=b, gap=gap)
        except ValueError:
            continue
        if len(held) >= MIN_TEST_FRACTION * usable:
            return fit, held
    return block_split(n_frames, lags, n_blocks=2, gap=gap)


def split_frames(train: Any, test: Any, lags: Sequence[int], *, split: str = "blocks", n_blocks: int = 4,
                 gap_ms: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """(training frames of ``train``, test frames of ``test``, gap in frames) of a (train, test) pair.

    ``train``/``test``: :class:`~psybench.attention.movies.MovieData`. A pair of two
    movies trains on ``train``'s training frames and tests on every frame of ``test``
    with history (no frame is shared); a pair of one movie splits it by ``split``.
    ``gap_ms``: the gap in ms (rounded up to frames); None: :func:`decorrelation_gap`
    of the movie. ``n_blocks`` is lowered (to 2 at least) where it would leave less than
    :data:`MIN_TEST_FRACTION` of the frames to test. The gap is 0 for ``even_odd`` and for two movies.
    """
    if split not in SPLITS:
        raise ValueError(f"attention.evaluation.split: {split!r} is not one of {list(SPLITS)}")
    same = test.name == train.name
    T = train.shape[0]
    if split == "even_odd":
        return train_frames(T, lags), test_frames(test.shape[0], lags, same_movie=same), 0
    if gap_ms is not None:
        gap = int(np.ceil(float(gap_ms) * train.frames_per_s / 1000.0 - 1e-6))
    else:
        gap = decorrelation_gap(train, lags)
    fit, held = _fitting_blocks(T, lags, n_blocks=n_blocks, gap=gap)
    if not same:
        return fit, test_frames(test.shape[0], lags, same_movie=False), gap
    return fit, held, gap


def pair_frames(train: Any, test: Any, lags: Sequence[int], evaluation: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`split_frames` with the settings of an :class:`~psybench.attention.defaults.EvaluationSettings`."""
    return split_frames(train, test, lags, split=evaluation.split, n_blocks=evaluation.split_blocks,
                        gap_ms=evaluation.split_gap_ms)


def fit_frames(train: Any, lags: Sequence[int], evaluation: Any) -> np.ndarray:
    """The training frames of a movie under ``evaluation``'s split (the same for every pair it trains)."""
    return pair_frames(train, train, lags, evaluation)[0]
