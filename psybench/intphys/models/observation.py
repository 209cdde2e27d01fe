"""What an IntPhys plausibility model may observe of a shard of movies.

A model sees what the dataset lets a system observe, and nothing else
(Riochet et al. 2018, IntPhys V1.0, "Train set" and "Evaluation metric": systems
learn from possible movies only and return a plausibility score P(x) for each
test movie, without knowing its condition):

``movies``
    Movie ids in axis order (``O1/0001/1`` for dev/test, ``00001`` for train; the
    ids of the official answer.txt).
``scene``
    ``dask.array.Array, shape (movie, t, y, x, 3)``, uint8 RGB frames.
``depth``
    ``dask.array.Array, shape (movie, t, y, x)``, float32 distance in mm (or
    ``None``).
``masks``
    ``dask.array.Array, shape (movie, t, y, x)``, uint8 gray values (or ``None``).
``masks_grayscale``
    Per movie, the ``(gray value, element name)`` pairs of its masks (names such
    as ``sky``, ``object_1``, ``occluder_1``), as listed in the movie's
    status.json (or ``None``).

The labels (``possible``) and the condition columns (``block``, ``visibility``,
``motion``, ``n_objects``, ``quadruplet``) are not part of an observation: they
are joined to the predictions only when scoring (:mod:`psybench.intphys.metrics`).
:func:`observe` reads the ingest store and, of its metadata table, the
``movie`` and ``masks_grayscale`` columns alone, and hands the model neither the
table nor a path to it.

A plausibility model is ``model(observation, **params) -> pandas.Series``
(movie id -> P in [0, 1], higher = more plausible).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from psybench.io.tables import read_table
from psybench.progress import progress

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (issue 15: planning imports these modules)
    pass

__all__ = ["Observation", "observe", "map_movies", "luminance"]


@dataclass(frozen=True)
class Observation:
    """The observable part of one shard of IntPhys movies (see the module docstring)."""

    movies: tuple[str, ...]
    scene: Any
    depth: Any = None
    masks: Any = None
    masks_grayscale: tuple[tuple[tuple[int, str], ...], ...] | None = None


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

    from psybench.io.store import open_store  # here: the registry imports this module at planning, without Zarr

    store = open_store(store_path)
    movies = tuple(str(m) for m in store.attrs["movies"])
    table = read_table(table_path)
    names = None
    if "masks_grayscale" in table.columns:
        by_movie = table.set_index(table["movie"].astype(str))["masks_grayscale"].reindex(list(movies))
        names = tuple(None if pd.isna(v) else _pairs(v) for v in by_movie)
    return Observation(movies=movies, scene=store["scene"], depth=store.arrays.get("depth"),
                       masks=store.arrays.get("masks"), masks_grayscale=names)


def map_movies(fn: Callable[..., float], arrays: Sequence[Any], threads: int) -> list[float]:
    """``[fn(i, *movie_i) for each movie i]``, reading one storage chunk of movies at a time.

    ``arrays`` are Dask (or NumPy) arrays with movies on axis 0 and the same chunking
    along it (``None`` entries are passed through as ``None``); each chunk is loaded
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
