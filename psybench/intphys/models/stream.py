"""Streamed IntPhys models: one movie at a time, in batches of frames, never a whole shard.

A ``"stream"`` model is called once per movie, ``model(movie) -> float``, where
``movie`` is a :class:`MovieStream`: iterating it yields :class:`Frames` batches of
at most ``batch_size`` consecutive frames of that movie (``scene`` ``(b, H, W, 3)``
uint8 RGB, ``depth`` ``(b, H, W)`` float32 or ``None``, ``masks`` ``(b, H, W)`` uint8
or ``None``), read-only. A model is handed one batch at a time, whatever the length of
the movie or the size of the shard. Each array of the movie is read from the shard once
per pass, when a batch's attribute first asks for it: a model that never looks at
``depth`` or ``masks`` never decodes them, and the shard's storage chunks hold whole
movies, so reading batch by batch would decode the same chunk again for every batch.
psybench thus holds at most one movie's arrays, never a shard. A stream can be
iterated again (each pass reads the frames anew).

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
from typing import Any

import numpy as np

from psybench.intphys.models.observation import Observation, _owned

__all__ = ["Frames", "MovieStream", "movie_streams", "stream_scores", "fit_streams", "surprise_to_plausibility"]

#: Frames per batch when a model entry names no ``batch_size``.
DEFAULT_BATCH_SIZE = 8


class Frames:
    """One batch of consecutive frames of one movie: ``scene``, ``depth``, ``masks`` (read-only; ``None`` where absent).

    Unpacks and indexes like the tuple ``(scene, depth, masks)``. ``Frames(scene, depth, masks)``
    holds the arrays given; the batches of a :class:`MovieStream` read each array of their movie
    on first access (see the module docstring).
    """

    __slots__ = ("_values", "_movie", "_span")

    def __init__(self, scene: np.ndarray, depth: np.ndarray | None = None, masks: np.ndarray | None = None) -> None:
        self._values: list[Any] = [scene, depth, masks]
        self._movie: _Movie | None = None
        self._span = (0, 0)

    @classmethod
    def _of(cls, movie: _Movie, a: int, b: int) -> Frames:
        frames = cls.__new__(cls)
        frames._values, frames._movie, frames._span = [_UNREAD] * 3, movie, (a, b)
        return frames

    def _get(self, i: int) -> np.ndarray | None:
        value = self._values[i]
        if value is _UNREAD:
            value = self._values[i] = self._movie.batch(i, *self._span)
        return value

    @property
    def scene(self) -> np.ndarray:
        return self._get(0)

    @property
    def depth(self) -> np.ndarray | None:
        return self._get(1)

    @property
    def masks(self) -> np.ndarray | None:
        return self._get(2)

    def __iter__(self) -> Iterator[np.ndarray | None]:
        return (self._get(i) for i in range(3))

    def __len__(self) -> int:
        return 3

    def __getitem__(self, key: Any) -> Any:
        return tuple(self)[key]

    def __repr__(self) -> str:
        return f"Frames({', '.join('None' if v is None else f'<{v.dtype} {v.shape}>' for v in self)})"

    def __reduce__(self) -> Any:
        return Frames, tuple(self)


_UNREAD = object()


class _Movie:
    """One movie's arrays (scene, depth, masks) of a shard, each read whole on first use, read-only."""

    __slots__ = ("_arrays", "_index", "_read")

    def __init__(self, arrays: tuple[Any, Any, Any], index: int) -> None:
        self._arrays, self._index = arrays, index
        self._read: list[np.ndarray | None] = [None, None, None]

    def batch(self, i: int, a: int, b: int) -> np.ndarray | None:
        """Frames ``a:b`` of array ``i`` (a read-only view of the movie, read here once)."""
        if self._arrays[i] is None:
            return None
        if self._read[i] is None:
            movie = _owned(self._arrays[i][self._index])
            movie.flags.writeable = False
            self._read[i] = movie
        return self._read[i][a:b]


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
        movie = _Movie(self._arrays, self._index)  # this pass's reads
        for a in range(0, self.n_frames, self.batch_size):
            yield Frames._of(movie, a, min(a + self.batch_size, self.n_frames))

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
