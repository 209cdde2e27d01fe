"""One movie's feature maps and gaze, ready for tuning and evaluation, read from the stage outputs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.defaults import IN_MEMORY_MB
from psybench.attention.gaze.columns import FRAME_COLUMNS
from psybench.io.integrity import open_group, verify_store
from psybench.io.tables import read_table

__all__ = ["MovieData", "load_movie", "load_movies"]


@dataclass
class MovieData:
    """One movie's base maps and gaze, ready for evaluation.

    Attributes
    ----------
    name : str
    maps : ndarray, dask array or zarr array, shape (T, H, W, C)
    frames_per_s : float
    source_size : (int, int)
        (width, height) of the gaze coordinates' frame.
    gaze : DataFrame
        Tidy per-frame table (:data:`psybench.attention.gaze.FRAME_COLUMNS`).
    features : str
        Feature family of ``maps`` (the saliency model that computed them).
    """

    name: str
    maps: Any
    frames_per_s: float
    source_size: tuple[int, int]
    gaze: pd.DataFrame
    features: str = ""

    @property
    def shape(self):
        return tuple(self.maps.shape)


def load_movie(
    name: str,
    feature_store: str | os.PathLike,
    gaze_table: pd.DataFrame | str | os.PathLike,
    *,
    in_memory_mb: float | None = IN_MEMORY_MB,
    decode: bool = True,
) -> MovieData:
    """Open a feature store and a gaze table (path or DataFrame) as :class:`MovieData`.

    The evaluation gathers features at hundreds of trajectories' points, each pass
    touching most frames; maps that fit in ``in_memory_mb`` (a one-minute movie on
    the 40x30 grid takes a few MB) are therefore decoded once into memory (read
    with Zarr: the values Dask would decode, without importing it), while longer
    movies stay lazy Dask arrays read ``chunk`` frames at a time (memory bounded,
    slower). ``None`` always keeps them lazy. ``decode=False``: the maps are the
    store's Zarr array, not read (for a caller that needs their shape only).
    """
    verify_store(feature_store)  # the structural check of open_store
    group = open_group(Path(feature_store))
    g = gaze_table if isinstance(gaze_table, pd.DataFrame) else read_table(gaze_table)
    missing = [c for c in FRAME_COLUMNS if c not in g.columns]
    if missing:
        raise ValueError(f"gaze table for movie {name!r} lacks column(s) {missing}")
    if "movie" in g.columns and g["movie"].nunique() > 1:
        g = g[g["movie"].astype(str) == str(name)]
    attrs = dict(group.attrs)
    for key in ("frames_per_s", "source_size"):
        if attrs.get(key) is None:
            raise ValueError(f"feature store {feature_store} lacks attribute {key!r}")
    try:
        maps = group["maps"]
    except KeyError:
        raise KeyError(f"feature store {feature_store} has no array 'maps'") from None
    if not decode:
        pass
    elif in_memory_mb is not None and maps.nbytes <= in_memory_mb * 1e6:
        maps = np.asarray(maps[...])
    else:
        from psybench.io.store import open_store  # Dask, imported only for the lazy maps

        maps = open_store(feature_store, verify=False)["maps"]
    return MovieData(
        name=str(name),
        maps=maps,
        frames_per_s=float(attrs["frames_per_s"]),
        source_size=tuple(attrs["source_size"]),
        gaze=g.reset_index(drop=True),
        features=attrs.get("features", {}).get("kind", ""),
    )


def load_movies(
    feature_stores: Mapping[str, Mapping[str, str | os.PathLike]],
    gaze_tables: Mapping[str, str | os.PathLike],
    *,
    in_memory_mb: float | None = IN_MEMORY_MB,
) -> dict[str, dict[str, MovieData]]:
    """:func:`load_movie` of every store: ``{movie: {features label: MovieData}}``.

    Parameters
    ----------
    feature_stores : mapping movie -> features label -> store path
        Labels whose models share a feature store (same family and parameters) name
        the same path; it is read once.
    gaze_tables : mapping movie -> gaze table path
    """
    loaded: dict[tuple[str, str], MovieData] = {}
    out: dict[str, dict[str, MovieData]] = {}
    for movie, labels in feature_stores.items():
        for label, path in labels.items():
            key = (str(movie), os.fspath(path))
            if key not in loaded:
                loaded[key] = load_movie(movie, path, gaze_tables[movie], in_memory_mb=in_memory_mb)
            out.setdefault(movie, {})[label] = loaded[key]
    return out
