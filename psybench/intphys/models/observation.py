"""What an IntPhys plausibility model may observe of a shard of movies.

A model sees what the dataset lets a system observe, and nothing else
(Riochet et al. 2018, IntPhys V1.0, "Train set" and "Evaluation metric": systems
learn from possible movies only and return a plausibility score P(x) for each
test movie, without knowing its condition):

``movies``
    Movie ids in axis order (``O1/0001/1`` for dev/test, ``00001`` for train; the
    ids of the official answer.txt).
``scene``
    :class:`Movies`, shape ``(movie, t, y, x, 3)``, uint8 RGB frames.
``depth``
    :class:`Movies`, shape ``(movie, t, y, x)``, float32 distance in mm (or
    ``None``).
``masks``
    :class:`Movies`, shape ``(movie, t, y, x)``, uint8 gray values (or ``None``).
``depth_units``
    ``"mm"``, or ``"relative (8-bit, unscaled)"`` for 8-bit depth without
    status.json's ``max_depth`` (the distributed test set).
``masks_grayscale``
    Per movie, the ``(gray value, element name)`` pairs of its masks (names such
    as ``sky``, ``object_1``, ``occluder_1``), as listed in the movie's
    status.json (or ``None``).

The labels (``possible``) and the condition columns (``block``, ``visibility``,
``motion``, ``n_objects``, ``quadruplet``) are not part of an observation: they
are joined to the predictions only when scoring (:mod:`psybench.intphys.metrics`).
Nor is any way to them: the ingest store's path, its Zarr arrays and the metadata
table beside it (which holds the labels) are not reachable from what a model is
handed. A :class:`Movies` holds only its shape, dtype and chunking; the array it
reads from is kept in a private table of this module keyed by the :class:`Movies`
itself, so following attributes, closures or ``gc.get_referents`` from an
observation reaches plain values and NumPy arrays that own their memory (or
read-only views of them), never a path, store or Dask graph. (Model code runs in
the job's interpreter: through module globals, its call stack or the file system it
can reach anything the process can; what it is handed leads nowhere.) Movies are read on
access, one storage chunk at a time, so a model never has to hold a whole shard.
:func:`observe` reads, of the metadata table, the ``movie`` and ``masks_grayscale``
columns alone.

A plausibility model is ``model(observation, **params) -> pandas.Series``
(movie id -> P in [0, 1], higher = more plausible).
"""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from psybench.io.tables import read_table
from psybench.progress import progress

__all__ = ["Observation", "Movies", "observe", "map_movies", "luminance"]

# Movies -> the (Dask) array it reads from; only this module's functions look it up, so no
# path or store is reachable from a Movies object itself (entries go with their Movies).
_SOURCES: weakref.WeakKeyDictionary[Movies, Any] = weakref.WeakKeyDictionary()


def _regular(shape: tuple[int, ...], unit: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The chunks along each axis of ``shape`` cut every ``unit`` (Dask's form; the last may be shorter)."""
    return tuple(tuple(min(u, n - a) for a in range(0, n, u)) if n else (0,) for n, u in zip(shape, unit))


def _zarr_key(key: Any) -> bool:
    """Whether a Zarr array reads ``key`` itself: integers, slices of step 1 or more and one Ellipsis."""
    items = key if isinstance(key, tuple) else (key,)
    return all(k is Ellipsis or isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
               or isinstance(k, slice) and (k.step is None or (isinstance(k.step, (int, np.integer)) and k.step >= 1))
               for k in items) and sum(k is Ellipsis for k in items) <= 1


def _owned(value: Any) -> np.ndarray:
    """``value`` as an ndarray that owns its memory (a copy if it is a view of another buffer)."""
    out = np.asarray(value)
    return out if out.base is None else out.copy()


class Movies:
    """One array of a shard (movies on axis 0), read on access as plain NumPy arrays.

    Indexing reads what it selects (``movies[i]``: movie ``i``, ``movies[a:b]``,
    ``movies[i, t]``; NumPy's basic indexing) into a new array; iterating yields the
    movies in order as read-only arrays, reading one storage chunk of movies at a
    time; ``np.asarray(movies)`` reads them all. ``shape``, ``dtype``, ``ndim`` and
    ``chunks`` (the storage chunking, as Dask gives it) describe the whole array.
    """

    __slots__ = ("shape", "dtype", "chunks", "__weakref__")

    def __init__(self, source: Any, unit: Sequence[int] | None = None) -> None:
        self.shape = tuple(int(n) for n in source.shape)
        self.dtype = np.dtype(source.dtype)
        chunks = getattr(source, "chunks", None) if unit is None else _regular(self.shape, unit)
        self.chunks = (tuple(tuple(int(c) for c in axis) for axis in chunks) if chunks is not None
                       else tuple((n,) for n in self.shape))
        _SOURCES[self] = source

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> np.ndarray:
        source = _SOURCES[self]
        if not isinstance(source, np.ndarray) and hasattr(source, "get_basic_selection") and not _zarr_key(key):
            # a Zarr array reads integers and forward slices itself; Dask reads the rest of NumPy's basic
            # indexing (new axes, negative steps) from the same storage chunks
            import dask.array as da
            source = da.from_zarr(source, chunks=tuple(c[0] for c in self.chunks))
        return _owned(source[key])

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self[...]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __iter__(self) -> Iterator[np.ndarray]:
        start = 0
        for n in self.chunks[0]:
            block = self[start : start + n]
            block.flags.writeable = False
            yield from block
            start += n

    def __repr__(self) -> str:
        return f"Movies(shape={self.shape}, dtype={self.dtype})"

    def __reduce__(self) -> Any:
        # a copy would not be in _SOURCES, so it could read nothing: say so where it is made
        raise TypeError("a Movies cannot be pickled or copied: read the movies first (movies[i], "
                        "np.asarray(movies)) and pass the arrays")


@dataclass(frozen=True)
class Observation:
    """The observable part of one shard of IntPhys movies (see the module docstring)."""

    movies: tuple[str, ...]
    scene: Any
    depth: Any = None
    masks: Any = None
    masks_grayscale: tuple[tuple[tuple[int, str], ...], ...] | None = None
    depth_units: str = "mm"


def _pairs(value: Any) -> tuple[tuple[int, str], ...]:
    pairs = json.loads(value) if isinstance(value, str) else value
    return tuple((int(v), str(n)) for v, n in pairs)


def observe(store_path: str | os.PathLike, table_path: str | os.PathLike) -> Observation:
    """The :class:`Observation` of one ingest store (and its metadata table's mask names).

    Parameters
    ----------
    store_path : path-like
        Ingest store (:func:`psybench.intphys.ingest.ingest_shard`).
    table_path : path-like
        Its metadata table; only the columns ``movie`` and ``masks_grayscale``
        are read from it.
    """
    import pandas as pd

    # here: the registry imports this module at planning, without Zarr
    from psybench.io.integrity import open_group, verify_store

    verify_store(store_path)  # what open_store checks; the arrays are read with Zarr itself (no Dask graph a read)
    group = open_group(Path(store_path))
    arrays = {}
    for name in ("scene", "depth", "masks"):
        if name in group:
            arr = group[name]
            arrays[name] = Movies(arr, arr.shards or arr.chunks)
    attrs = group.attrs
    movies = tuple(str(m) for m in attrs["movies"])
    table = read_table(table_path)
    names = None
    if "masks_grayscale" in table.columns:
        by_movie = table.set_index(table["movie"].astype(str))["masks_grayscale"].reindex(list(movies))
        names = tuple(None if pd.isna(v) else _pairs(v) for v in by_movie)
    if "scene" not in arrays:
        raise KeyError(f"store {store_path} has no array 'scene'")
    return Observation(movies=movies, scene=arrays["scene"], depth=arrays.get("depth"), masks=arrays.get("masks"),
                       masks_grayscale=names, depth_units=str(attrs.get("depth_units", "mm")))


def map_movies(fn: Callable[..., float], arrays: Sequence[Any], threads: int) -> list[float]:
    """``[fn(i, *movie_i) for each movie i]``, reading one storage chunk of movies at a time.

    ``arrays`` are :class:`Movies` (or Dask or NumPy arrays) with movies on axis 0 and the
    same chunking along it (``None`` entries are passed through as ``None``); each chunk is loaded
    once and its movies are processed by ``threads`` threads, so memory does not
    depend on the number of movies.
    """
    ref = next(a for a in arrays if a is not None)
    bounds = np.cumsum((0,) + tuple(ref.chunks[0])) if hasattr(ref, "chunks") else np.array([0, ref.shape[0]])
    out: list[float] = []
    with ThreadPoolExecutor(max(1, threads)) as ex:
        for a, b in progress(list(zip(bounds[:-1], bounds[1:])), "IntPhys prediction (chunks of movies)"):
            blocks = [None if x is None else np.asarray(x[a:b]) for x in arrays]
            # the lambda is consumed by ex.map within this iteration
            out.extend(ex.map(lambda j: fn(a + j, *[None if blk is None else blk[j] for blk in blocks]),  # noqa: B023
                              range(b - a)))
    return out


def luminance(scene_movie: np.ndarray, size: int | None = None) -> np.ndarray:
    """(T, H, W, 3) uint8 RGB -> (T, h, w) float32 luminance in [0, 1], optionally area-downsampled."""
    import cv2
    out = []
    for f in scene_movie:
        g = cv2.cvtColor(f, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
        if size is not None:
            g = cv2.resize(g, (size, size), interpolation=cv2.INTER_AREA)
        out.append(g)
    return np.stack(out)
