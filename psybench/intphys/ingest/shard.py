"""Ingest one shard of an IntPhys split into a Zarr store and its metadata table."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import pandas as pd

from psybench.intphys.ingest.conditions import apply_condition_table, read_condition_table
from psybench.intphys.ingest.decode import ENCODING_UNITS, _decoded_blocks, _depth_encoding_of, _imread, frame_layout
from psybench.intphys.ingest.layout import IntPhysFormatError, list_movies, shard_movies
from psybench.intphys.ingest.status import mask_names, movie_metadata, read_status
from psybench.io.coords import Coordinate
from psybench.io.store import StreamSpec, write_store_stream
from psybench.io.tables import read_table, write_table

__all__ = ["IntPhysConditionWarning", "ingest_shard", "merge_metadata"]

_CHUNK_BYTES = 2**21  # ~2 MB of scene per storage chunk (zarr guidance: >= 1 MB)
# Zarr v3 sharding codec: one file holds the chunks of as many whole movies as fill ~256 MB over the
# three arrays (8 bytes per pixel: RGB 3 + float32 depth 4 + mask 1): 4 real 288 x 288 x 100 movies
# (66 MB each) per file, so a 50-movie store holds 3 x 13 data files instead of 3 x 50. The decoders
# fill one shard while the previous one is compressed, written and hashed on the writer threads, in
# three rotating shard buffer sets: the ingest job's memory is ~ three shards (3 x 264 MB) and the
# compressed bytes, flat in the number of movies (measured peaks: benchmarks/README.md).
_SHARD_BYTES = 2**28


def ingest_shard(
    root: str | os.PathLike,
    split: str,
    out_store: str | os.PathLike,
    out_table: str | os.PathLike,
    *,
    shard: int = 0,
    shard_size: int = 50,
    threads: int = 1,
    attrs: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Ingest shard ``shard`` of ``root/<split>`` into a Zarr store and a metadata table.

    Parameters
    ----------
    root : path-like
        IntPhys dataset root.
    split : {"train", "dev", "test"}
    out_store : path-like
        The ``.zarr`` store to write (atomically).
    out_table : path-like
        The metadata table (``.csv`` + ``.parquet``), one row per movie, in the
        store's movie order.
    shard, shard_size : int
        Which consecutive group of sorted movies to ingest.
    threads : int
        Decoding threads (OpenCV releases the GIL).
    attrs : dict, optional
        Extra deterministic store attributes (code hash ...).

    Returns
    -------
    pandas.DataFrame
        The metadata table.
    """
    shards = shard_movies(list_movies(root, split), shard_size)
    if not 0 <= shard < len(shards):
        raise ValueError(f"shard {shard} does not exist: {root}/{split} has {len(shards)} shards of {shard_size}")
    movies = shards[shard]
    rows, jobs = [], []
    T = None
    for m in movies:  # keep only the metadata row and mask tables of each status (the frames part can be large)
        st = read_status(m.path, required=split != "test")  # the released test split has no status.json
        layout, n_png = frame_layout(m.path)
        n_st = len(st["frames"]) if st.get("frames") else 0
        if n_st and n_st != n_png:
            raise IntPhysFormatError(f"{m.path / 'status.json'} lists {n_st} frames, {m.path / 'scene'} holds {n_png}")
        T = n_png if T is None else T
        if n_png != T:
            raise IntPhysFormatError(f"{m.path / 'scene'} holds {n_png} frames, other movies of the shard have {T}")
        row = movie_metadata(m, st)
        row["frame_layout"] = layout.name
        # no status.json (the released test split, raw RGBD): 8-bit depth stays unscaled, no max_depth exists
        unscaled = row["status_variant"] == "absent"
        row["depth_encoding"] = _depth_encoding_of(m.path, layout, unscaled_8bit=unscaled)
        rows.append(row)
        jobs.append({"max_depth": row["max_depth"], "layout": layout, "mask_luts": mask_names(st)[2],
                     "unscaled_8bit": unscaled})
    depth_units = _shard_depth_units(movies, rows)
    probe = _imread(jobs[0]["layout"].path(movies[0].path, "scene", 0), cv2.IMREAD_COLOR)
    H, W = probe.shape[:2]
    for row in rows:
        row.update(n_frames=T, height=H, width=W)
    table = pd.DataFrame(rows)
    table["shard"] = int(shard)
    table["possible"] = table["possible"].astype("boolean")
    table["n_objects"] = table["n_objects"].astype("Int64")  # movies without conditions: warned at the merge
    store_attrs = {
        "intphys": {"split": split, "shard": int(shard), "shard_size": int(shard_size)},
        "movies": [m.movie_id for m in movies],
        "depth_units": depth_units,
        **(attrs or {}),
    }
    n = len(movies)
    # storage chunk: k whole movies, k so that a scene chunk holds ~2 MB (>= 1 MB zarr guidance) -
    # one movie for real IntPhys frames (25 MB), several for small generated ones
    k = int(max(1, min(n, _CHUNK_BYTES // (T * H * W * 3))))
    per_shard = max(1, _SHARD_BYTES // (T * H * W * 8) // k) * k  # whole chunks
    s = min(per_shard, -(-n // k) * k)
    specs = {
        "scene": StreamSpec((n, T, H, W, 3), np.uint8, ("movie", "t", "y", "x", "c"), chunks=(k, T, H, W, 3),
                            shards=(s, T, H, W, 3), attrs={"color": "RGB"}),
        "depth": StreamSpec((n, T, H, W), np.float32, ("movie", "t", "y", "x"), chunks=(k, T, H, W),
                            shards=(s, T, H, W), attrs={"units": depth_units}),
        "masks": StreamSpec((n, T, H, W), np.uint8, ("movie", "t", "y", "x"), chunks=(k, T, H, W),
                            shards=(s, T, H, W),
                            attrs={"units": "gray value; names in metadata column masks_grayscale"}),
    }
    # IntPhys gives no frame rate nor visual angle (Riochet et al. 2018): frames and pixels are the units
    coords = {"t": Coordinate(np.arange(T), "frame", long_name="frame index"),
              "y": Coordinate(np.arange(H), "px", long_name="image row, downwards"),
              "x": Coordinate(np.arange(W), "px", long_name="image column, rightwards")}
    write_store_stream(
        out_store, specs, _decoded_blocks(movies, jobs, T, H, W, threads=threads, unit=s), store_attrs,
        coords=coords, zero_copy=True,  # the decoders fill whole shards in place: none is copied
    )
    write_table(table, out_table)
    return table


def _shard_depth_units(movies, rows) -> str:
    """The one depth unit of a shard's movies (mm, or relative for unscaled 8-bit); mixed units raise."""
    units = [ENCODING_UNITS[r["depth_encoding"]] for r in rows]
    if len(set(units)) > 1:
        j = next(k for k, u in enumerate(units) if u != units[0])
        raise IntPhysFormatError(
            f"{movies[j].path} has depth in {units[j]!r} ({rows[j]['depth_encoding']}) while {movies[0].path} "
            f"has depth in {units[0]!r}: one split mixes 8-bit depth without max_depth (no status.json) with "
            "depth in mm"
        )
    return units[0]


class IntPhysConditionWarning(UserWarning):
    """Some dev/test movies have no conditions (visibility, motion, n_objects); the message names them."""


def _warn_unconditioned(table: pd.DataFrame, where: str) -> None:
    """Warn, naming them, about dev/test movies whose conditions no source gave."""
    bad = table.loc[(table["split"] != "train") & table["visibility"].isna(), "movie"].astype(str).tolist()
    if bad:
        warnings.warn(
            f"{where}: no conditions (visibility, motion, n_objects) for {len(bad)} movie(s) in status.json, "
            f"folder name or intphys.conditions table: {', '.join(bad[:12])}{' ...' if len(bad) > 12 else ''}; "
            "they count in the per-block and overall scores only",
            IntPhysConditionWarning, stacklevel=3,
        )


def merge_metadata(tables: Sequence[str | os.PathLike], out_table: str | os.PathLike, *,
                   conditions: str | os.PathLike | None = None) -> pd.DataFrame:
    """Concatenate per-shard metadata tables (in the given shard order) into one table.

    Parameters
    ----------
    tables : sequence of path-like
        Per-shard tables of :func:`ingest_shard`.
    out_table : path-like
    conditions : path-like, optional
        A user's condition table
        (:func:`~psybench.intphys.ingest.conditions.read_condition_table`) for the
        movies status.json and folder names leave without conditions. Movies left
        without any raise an :class:`IntPhysConditionWarning` naming them.
    """
    if not tables:
        raise ValueError("merge_metadata: no shard tables given")
    df = pd.concat([read_table(t) for t in tables], ignore_index=True)
    dup = df["movie"][df["movie"].duplicated()]
    if len(dup):
        raise ValueError(f"movie {dup.iloc[0]!r} appears in two shard tables of {out_table}")
    if conditions is not None:
        df = apply_condition_table(df, read_condition_table(conditions))
    df["n_objects"] = pd.to_numeric(df["n_objects"]).astype("Int64")
    _warn_unconditioned(df, str(out_table))
    write_table(df, out_table)
    return df
