"""Streamed IntPhys models: one movie at a time, in batches of frames, never a whole shard.

A ``"stream"`` model is called once per movie, ``model(movie) -> float``, where
``movie`` is a :class:`MovieStream`: iterating it yields :class:`Frames` batches of
at most ``batch_size`` consecutive frames of that movie (``scene`` ``(b, H, W, 3)``
uint8 RGB, ``depth`` ``(b, H, W)`` float32 or ``None``, ``masks`` ``(b, H, W)`` uint8
or ``None``), read from the shard on demand, read-only. The memory a model is handed
is one batch, whatever the length of the movie or the size of the shard. A stream
can be iterated again (each pass reads the frames anew).

The model returns a surprise (higher = less plausible), turned into the stage's
plausibility ``P = exp(-surprise)`` (:func:`surprise_to_plausibility`), or, with
the model parameter ``output: plausibility``, P in [0, 1] itself.

What a stream leads to is what an :class:`~psybench.intphys.models.observation.Observation`
leads to (its ``Movies`` keep their sources in that module's private table): frames,
the movie id, its mask names and the depth units; never the labels, the conditions,
a path or a store. A model with a ``fit(movies)`` method is trained, when its entry
says ``train: true``, on the train split's movies (:func:`fit_streams`): the same
streams, of possible movies only (Riochet et al. 2018, IntPhys V1.0, "Train set").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from psybench.intphys.models.observation import Observation, _owned

__all__ = ["Frames", "MovieStream", "movie_streams", "stream_scores", "fit_streams", "surprise_to_plausibility"]

#: Frames per batch when a model entry names no ``batch_size``.
DEFAULT_BATCH_SIZE = 8


class Frames(NamedTuple):
    """One batch of consecutive frames of one movie (read-only arrays; ``None`` where absent)."""

    scene: np.ndarray
    depth: np.ndarray | None
    masks: np.ndarray | None


def _read(array: Any, index: int, a: int, b: int) -> np.ndarray | None:
    if array is None:
        return None
    out = _owned(array[index, a:b])
    out.flags.writeable = False
    return out


class MovieStream:
    """The frames of one movie of a shard, in batches of at most ``batch_size`` frames.

    Attributes: ``movie`` (its id), ``n_frames``, ``batch_size``, ``shape`` (of one
    scene frame, ``(H, W, 3)``), ``masks_grayscale`` (its mask names, or ``None``) and
    ``depth_units``.
    """

    __slots__ = ("movie", "n_frames", "batch_size", "shape", "masks_grayscale", "depth_units", "_arrays", "_index")

    def __init__(self, observation: Observation, index: int, batch_size: int) -> None:
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.movie = observation.movies[index]
        self.n_frames = int(observation.scene.shape[1])
        self.shape = tuple(int(n) for n in observation.scene.shape[2:])
        self.batch_size = int(batch_size)
        names = observation.masks_grayscale
        self.masks_grayscale = None if names is None else names[index]
        self.depth_units = observation.depth_units
        self._arrays = (observation.scene, observation.depth, observation.masks)
        self._index = index

    def __len__(self) -> int:
        """The number of batches."""
        return math.ceil(self.n_frames / self.batch_size)

    def __iter__(self) -> Iterator[Frames]:
        scene, depth, masks = self._arrays
        for a in range(0, self.n_frames, self.batch_size):
            b = min(a + self.batch_size, self.n_frames)
            yield Frames(_read(scene, self._index, a, b), _read(depth, self._index, a, b),
                         _read(masks, self._index, a, b))

    def __repr__(self) -> str:
        return f"MovieStream({self.movie!r}, n_frames={self.n_frames}, batch_size={self.batch_size})"

    def __reduce__(self) -> Any:
        raise TypeError("a MovieStream cannot be pickled or copied: iterate it and pass the frames")


def movie_streams(observation: Observation, batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[MovieStream]:
    """One :class:`MovieStream` per movie of ``observation``, in order."""
    for i in range(len(observation.movies)):
        yield MovieStream(observation, i, batch_size)


def surprise_to_plausibility(surprise: float) -> float:
    """``P = exp(-surprise)`` for a surprise >= 0.

    A movie's P depends on its own surprise alone (a normalisation over the movies of a
    shard, as ``1 - normalised surprise`` would need, would make a movie's score depend
    on which movies share its shard); ``exp`` is strictly decreasing, so ranks, and
    hence L_A, are those of the surprise.
    """
    s = float(surprise)
    if not math.isfinite(s) or s < 0:
        raise ValueError(f"a surprise must be a finite number >= 0, got {surprise!r}")
    return math.exp(-s)


def stream_scores(model: Callable[[MovieStream], Any], observation: Observation, *,
                  batch_size: int = DEFAULT_BATCH_SIZE, output: str = "surprise") -> Any:
    """P(movie) of a stream model on every movie of ``observation`` (a pandas Series).

    Parameters
    ----------
    model : callable
        ``model(movie: MovieStream) -> float``, called once per movie in order.
    observation : Observation
        One shard's observation (:func:`psybench.intphys.models.observation.observe`).
    batch_size : int
        Frames per batch.
    output : {"surprise", "plausibility"}
        What the model returns: a surprise >= 0 (P = exp(-surprise)) or P in [0, 1].

    Raises
    ------
    ValueError
        If ``output`` is unknown or the model returns something else than a finite
        number (>= 0 for a surprise), naming the movie.
    """
    import pandas as pd
    if output not in ("surprise", "plausibility"):
        raise ValueError(f"output must be 'surprise' or 'plausibility', got {output!r}")
    p = []
    for movie in movie_streams(observation, batch_size):
        value = model(movie)
        try:
            value = float(value)
            p.append(surprise_to_plausibility(value) if output == "surprise" else value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"movie {movie.movie}: the model returned {value!r} ({exc})") from None
    return pd.Series(p, index=list(observation.movies), name="p", dtype=float)


def fit_streams(model: Any, observations: Iterable[Observation], *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
    """``model.fit(movies)`` over every movie of ``observations`` (the train split's shards).

    ``movies`` is an iterable that can be iterated more than once (each pass streams every
    movie again, shard by shard); each item is a :class:`MovieStream`.
    """
    fit = getattr(model, "fit", None)
    if not callable(fit):
        raise TypeError(f"{type(model).__name__} has no fit(movies) method")
    observations = list(observations)

    class _Movies:
        def __iter__(self) -> Iterator[MovieStream]:
            for observation in observations:
                yield from movie_streams(observation, batch_size)

    fit(_Movies())
