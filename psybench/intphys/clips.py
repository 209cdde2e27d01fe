"""Training clips of the IntPhys train split, streamed from its ingest stores.

A clip is ``n_input`` frames of one movie and the frame ``horizon`` frames after
the last of them: the input and target of the future-prediction baselines of
Riochet et al. 2018 (IntPhys V1.0, "Baseline results": object masks predicted 5
and 35 frames ahead). Public signature::

    ClipLoader(stores, *, horizon=5, n_input=1, channel="masks", size=64,
               batch_size=32, seed=0, window=4, mask_kinds=("object", "occluder"))
    loader.n_clips, loader.n_batches, len(loader)
    loader.batches(epoch, start=0) -> Iterator[ClipBatch]
    ClipBatch(inputs, targets, index): float32 ndarrays, shapes
        (b, n_input * C, size, size) and (b, C, size, size) (channels first, as torch
        takes them; ``torch.from_numpy`` wraps them without a copy), and the
        ``(store, movie, t)`` rows of the clips, shape (b, 3) int64.

``stores`` are ``(store, table)`` path pairs of the train split
(:func:`psybench.intphys.ingest.ingest_shard`), read directly through
:func:`~psybench.intphys.models.observation.observe`: the store's frames and, of the
metadata table, the ``movie`` and ``masks_grayscale`` columns alone, the element
names the baselines' semantic masks are made of. No label, condition or other
status field is read; a store of another split than ``train`` (possible movies
only, Riochet et al. 2018, "Train set") is refused, naming it.

Channels (``C``): ``channel="masks"`` gives one binary channel per entry of
``mask_kinds`` (a pixel is 1 where its gray value names an element whose name
starts with that kind, e.g. ``object_2``); ``channel="scene"`` the RGB frame / 255
(C = 3). Frames are area-downsampled to ``size x size`` (64 in the public
baselines), so mask channels are the fraction of each output pixel covered.

Order: each epoch permutes the movies (``numpy.random.default_rng([seed, epoch])``),
cuts them into windows of ``window`` movies and permutes the clips of each window
(``default_rng([seed, epoch, w])``); batches are consecutive runs of
``batch_size`` clips of that order (the last one may be shorter). The same seed
and epoch give the same batches on any machine; :meth:`ClipLoader.batches` with
``start=k`` yields batch k onwards without reading the windows before it, so a
training run restarts at the batch where it stopped.

Memory: the downsampled channels of one window of movies (``window x T x C x
size^2`` float32) plus one movie's raw array while it is downsampled; never a
store, never the training set. Each movie is read from the store once per epoch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

__all__ = ["ClipBatch", "ClipLoader", "clip_starts", "movie_channels"]

CHANNELS = ("masks", "scene")


class ClipBatch(NamedTuple):
    """One batch of clips: ``inputs`` (b, n_input*C, s, s), ``targets`` (b, C, s, s), ``index`` (b, 3)."""

    inputs: np.ndarray
    targets: np.ndarray
    index: np.ndarray


def clip_starts(n_frames: int, *, horizon: int, n_input: int) -> np.ndarray:
    """First-frame indices t of a movie's clips: inputs t..t+n_input-1, target t+n_input-1+horizon."""
    n = int(n_frames) - int(horizon) - (int(n_input) - 1)
    if n <= 0:
        raise ValueError(f"a clip of {n_input} input frame(s) and horizon {horizon} needs more than "
                         f"{n_input - 1 + horizon} frames; the movies have {n_frames}")
    return np.arange(n)


def movie_channels(frames: np.ndarray, *, channel: str, size: int,
                   names: Sequence[tuple[int, str]] | None = None,
                   mask_kinds: Sequence[str] = ("object", "occluder")) -> np.ndarray:
    """(T, H, W) uint8 masks or (T, H, W, 3) uint8 RGB -> (T, C, size, size) float32 in [0, 1].

    ``names``: the movie's ``(gray value, element name)`` pairs (masks only).
    """
    import cv2

    if channel == "scene":
        planes = [frames.astype(np.float32) / np.float32(255.0)]  # (T, H, W, 3)
    else:
        if names is None:
            raise ValueError("mask channels need the movie's masks_grayscale names")
        planes = []
        for kind in mask_kinds:
            values = np.array([v for v, n in names if n.startswith(kind)], dtype=frames.dtype)
            planes.append(np.isin(frames, values).astype(np.float32)[..., None])
        planes = [np.concatenate(planes, axis=-1)]  # (T, H, W, C)
    x = planes[0]
    out = np.empty((x.shape[0], x.shape[-1], size, size), np.float32)
    for t in range(x.shape[0]):
        frame = x[t]
        if frame.shape[:2] != (size, size):
            frame = cv2.resize(frame, (size, size), interpolation=cv2.INTER_AREA)
        out[t] = frame.reshape(size, size, -1).transpose(2, 0, 1)
    return out


def _positive(name: str, value: Any) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class ClipLoader:
    """Seeded, resumable batches of (input frames, target frame) clips of the train split.

    See the module docstring for the parameters, the order and the memory bound.
    """

    def __init__(self, stores: Sequence[tuple[str | os.PathLike, str | os.PathLike]], *, horizon: int = 5,
                 n_input: int = 1, channel: str = "masks", size: int = 64, batch_size: int = 32, seed: int = 0,
                 window: int = 4, mask_kinds: Sequence[str] = ("object", "occluder")) -> None:
        from psybench.intphys.models.observation import observe
        from psybench.io.integrity import open_group

        if channel not in CHANNELS:
            raise ValueError(f"channel must be one of {list(CHANNELS)}, got {channel!r}")
        self.horizon = _positive("horizon", horizon)
        self.n_input = _positive("n_input", n_input)
        self.size = _positive("size", size)
        self.batch_size = _positive("batch_size", batch_size)
        self.window = _positive("window", window)
        self.seed = int(seed)
        self.channel = channel
        self.mask_kinds = tuple(str(k) for k in mask_kinds)
        if channel == "masks" and not self.mask_kinds:
            raise ValueError("mask_kinds must name at least one element kind (e.g. 'object')")
        self.n_channels = 3 if channel == "scene" else len(self.mask_kinds)
        if not stores:
            raise ValueError("ClipLoader: no training stores given")
        self._observations = []
        movies = []  # (store index, movie index, number of clips)
        for s, (store, table) in enumerate(stores):
            split = (dict(open_group(Path(store)).attrs).get("intphys") or {}).get("split")
            if split != "train":
                raise ValueError(f"training store {os.fspath(store)!r} holds the {split!r} split, not 'train': "
                                 "the baselines learn from the possible-only train split")
            obs = observe(store, table)
            if channel == "masks" and (obs.masks is None or obs.masks_grayscale is None):
                raise ValueError(f"training store {os.fspath(store)!r} (or its table {os.fspath(table)!r}) has no "
                                 "masks or masks_grayscale names: use channel 'scene'")
            n = len(clip_starts(obs.scene.shape[1], horizon=self.horizon, n_input=self.n_input))
            self._observations.append(obs)
            movies.extend((s, i, n) for i in range(len(obs.movies)))
        self._movies = np.array(movies, dtype=np.int64).reshape(-1, 3)
        self.n_clips = int(self._movies[:, 2].sum())
        self.n_batches = -(-self.n_clips // self.batch_size)

    def __len__(self) -> int:
        """Batches per epoch."""
        return self.n_batches

    def _order(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """The epoch's movie order (rows of ``_movies``) and the clip offset where each window starts."""
        perm = np.random.default_rng([self.seed, int(epoch)]).permutation(len(self._movies))
        counts = self._movies[perm, 2]
        bounds = np.concatenate([[0], np.cumsum([counts[w : w + self.window].sum()
                                                 for w in range(0, len(perm), self.window)])])
        return perm, bounds

    def _window_clips(self, epoch: int, w: int, rows: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The window's clips in their shuffled order ``(k, 3)`` and its movies' channels."""
        clips, data = [], []
        for k, (s, i, _) in enumerate(self._movies[rows]):
            obs = self._observations[s]
            raw = (obs.masks if self.channel == "masks" else obs.scene)[int(i)]
            names = obs.masks_grayscale[int(i)] if self.channel == "masks" else None
            data.append(movie_channels(raw, channel=self.channel, size=self.size, names=names,
                                       mask_kinds=self.mask_kinds))
            del raw
            t = clip_starts(data[-1].shape[0], horizon=self.horizon, n_input=self.n_input)
            clips.append(np.stack([np.full_like(t, k), t], axis=1))
        clips = np.concatenate(clips)
        order = np.random.default_rng([self.seed, int(epoch), int(w)]).permutation(len(clips))
        return clips[order], data

    def batches(self, epoch: int = 0, start: int = 0) -> Iterator[ClipBatch]:
        """The batches of ``epoch`` from batch ``start`` on (see the module docstring)."""
        if not 0 <= int(start) <= self.n_batches:
            raise ValueError(f"start batch {start} is outside 0..{self.n_batches}")
        perm, bounds = self._order(epoch)
        pos = int(start) * self.batch_size
        pending: list[ClipBatch] = []
        n_pending = 0
        for w in range(len(bounds) - 1):
            if bounds[w + 1] <= pos:
                continue  # a window wholly before the start is never read
            rows = perm[w * self.window : (w + 1) * self.window]
            clips, data = self._window_clips(epoch, w, rows)
            clips = clips[max(0, pos - int(bounds[w])):]
            while len(clips):
                take = clips[: self.batch_size - n_pending]
                clips = clips[len(take):]
                pending.append(self._gather(rows, take, data))
                n_pending += len(take)
                if n_pending == self.batch_size:
                    yield _concat(pending)
                    pending, n_pending = [], 0
        if pending:
            yield _concat(pending)

    def _gather(self, rows: np.ndarray, clips: np.ndarray, data: list[np.ndarray]) -> ClipBatch:
        span = self.n_input - 1 + self.horizon
        inputs = np.stack([data[k][t : t + self.n_input].reshape(-1, self.size, self.size) for k, t in clips])
        targets = np.stack([data[k][t + span] for k, t in clips])
        meta = self._movies[rows[clips[:, 0]], :2]
        index = np.column_stack([meta, clips[:, 1]]).astype(np.int64)
        return ClipBatch(inputs, targets, index)


def _concat(parts: list[ClipBatch]) -> ClipBatch:
    if len(parts) == 1:
        return parts[0]
    return ClipBatch(*(np.concatenate(x) for x in zip(*parts)))
