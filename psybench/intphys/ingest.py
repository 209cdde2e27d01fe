"""Ingest IntPhys directory trees into sharded Zarr stores and a metadata table.

A split (``train``, ``dev`` or ``test``) is cut into *shards* of ``shard_size``
movies in sorted movie-id order; each shard becomes one store (one Snakemake
job), so the 15k training movies make a few hundred jobs, not 15k. A store holds

``scene`` : uint8, dims ``(movie, t, y, x, c)``, RGB (``cv2.imread`` gives BGR;
    channels are reversed once on decoding)
``depth`` : float32, dims ``(movie, t, y, x)``, distance in millimetres.
    16-bit PNGs: ``65535 - value`` (later releases). 8-bit PNGs (V1.0):
    ``value / 255 * max_depth`` with ``max_depth`` from status.json (quantisation
    step ``max_depth / 255``). The encoding is detected per movie from the PNG
    dtype and recorded in the metadata column ``depth_encoding``.
``masks`` : uint8, dims ``(movie, t, y, x)``, gray values as in the PNGs; their
    names are in the metadata column ``masks_grayscale`` (JSON).

Storage chunks hold whole movies (one real IntPhys movie, or as many small
ones as fill ~2 MB). Movies are decoded by a pool of ``threads`` threads (OpenCV
releases the GIL) with at most a chunk plus ``threads`` movies in flight and streamed into the store by
:func:`psybench.io.store.write_store_stream`, so memory is bounded by a few
movies whatever the number of movies. (``write_store`` with several Dask arrays
mis-assigns its digests under dask 2026.8, see the track report; the stream
writer gives the same manifest.) The store attribute ``movies`` lists the movie ids in axis
order. Movie ids are ``<block>/<index>/<run>`` for dev/test (the answer.txt
ids) and ``<index>`` for train.

Every problem with the input raises :class:`IntPhysFormatError` naming the file
or directory; :func:`psybench.io.store.write_store` then leaves no store behind.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import cv2
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from psybench.io.store import StreamSpec, write_store_stream
from psybench.io.tables import write_table

__all__ = [
    "IntPhysFormatError",
    "Movie",
    "list_movies",
    "shard_movies",
    "read_status",
    "movie_metadata",
    "decode_movie",
    "ingest_shard",
    "merge_metadata",
    "n_shards",
]

_BLOCK_RE = re.compile(r"^O\d+$")
_BLOCK_IN_LABEL = re.compile(r"(O\d+)")
_KINDS = ("scene", "depth", "masks")
_CHUNK_BYTES = 2**21  # ~2 MB of scene per storage chunk (zarr guidance: >= 1 MB)


class IntPhysFormatError(ValueError):
    """The input is not a valid IntPhys tree; the message names the file or directory."""


@dataclass(frozen=True)
class Movie:
    """One movie directory: its id (``O1/0001/1`` or ``00001``), split and path."""

    movie_id: str
    split: str
    path: Path

    @property
    def quadruplet(self) -> str:
        """``<block>/<index>`` for dev/test movies, the id itself for train."""
        return self.movie_id.rsplit("/", 1)[0] if self.movie_id.count("/") == 2 else self.movie_id


def _subdirs(path: Path) -> list[os.DirEntry]:
    with os.scandir(path) as it:
        return sorted((e for e in it if e.is_dir() and not e.name.startswith(".")), key=lambda e: e.name)


def list_movies(root: str | os.PathLike, split: str) -> list[Movie]:
    """Discover the movies of ``root/<split>`` (directory listing only, no image reads).

    Parameters
    ----------
    root : path-like
        Dataset root holding ``train/``, ``dev/`` and/or ``test/``.
    split : {"train", "dev", "test"}

    Returns
    -------
    list of Movie
        Sorted by movie id.

    Raises
    ------
    IntPhysFormatError
        Naming the directory that does not follow the IntPhys layout
        (``train/<index>/`` or ``<split>/<block>/<index>/<run 1..4>/``).
    """
    base = Path(root) / split
    if not base.is_dir():
        raise IntPhysFormatError(f"IntPhys split directory {base} does not exist")
    movies: list[Movie] = []
    if split == "train":
        for e in _subdirs(base):
            if not e.name.isdigit():
                raise IntPhysFormatError(
                    f"{base / e.name} is not an IntPhys training movie directory (expected train/<index>/)"
                )
            movies.append(Movie(e.name, split, Path(e.path)))
    else:
        for b in _subdirs(base):
            if not _BLOCK_RE.match(b.name):
                raise IntPhysFormatError(
                    f"{base / b.name} is not an IntPhys block directory (expected {split}/O1, O2, O3 ...)"
                )
            for i in _subdirs(Path(b.path)):
                if not i.name.isdigit():
                    raise IntPhysFormatError(f"{Path(i.path)} is not an IntPhys quadruplet directory (<index>)")
                runs = [r.name for r in _subdirs(Path(i.path))]
                if runs != ["1", "2", "3", "4"]:
                    raise IntPhysFormatError(
                        f"{Path(i.path)} holds runs {runs}, expected the four runs 1, 2, 3, 4 of a quadruplet"
                    )
                movies.extend(Movie(f"{b.name}/{i.name}/{r}", split, Path(i.path) / r) for r in runs)
    if not movies:
        raise IntPhysFormatError(f"{base} holds no IntPhys movie directories")
    return movies


def shard_movies(movies: Sequence[Any], shard_size: int) -> list[list[Any]]:
    """Consecutive groups of ``shard_size`` movies (the last one may be shorter)."""
    if int(shard_size) < 1:
        raise ValueError(f"shard_size must be >= 1, got {shard_size!r}")
    n = int(shard_size)
    return [list(movies[i : i + n]) for i in range(0, len(movies), n)]


def n_shards(n_movies: int, shard_size: int) -> int:
    """Number of shards for ``n_movies`` movies."""
    return -(-int(n_movies) // int(shard_size))


def read_status(movie_dir: str | os.PathLike) -> dict[str, Any]:
    """Read ``status.json`` of one movie and flatten the two variants into one dict.

    The V1.0 file is flat; later releases use ``{"header": {...}, "frames": [...]}``
    (the cut-down dev archive only ``{"header": {"is_possible": ...}}``). Header keys
    win; ``frames`` is kept as is.
    """
    path = Path(movie_dir) / "status.json"
    try:
        with open(path) as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise IntPhysFormatError(f"missing status file {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IntPhysFormatError(f"status file {path} is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise IntPhysFormatError(f"status file {path} holds a {type(raw).__name__}, expected a JSON object")
    if "header" in raw:
        if not isinstance(raw["header"], dict):
            raise IntPhysFormatError(f"status file {path}: 'header' is not a JSON object")
        flat = {k: v for k, v in raw.items() if k != "header"}
        flat.update(raw["header"])
        flat["_variant"] = "header"
    else:
        flat = dict(raw)
        flat["_variant"] = "v1"
    return flat


def _possible(status: dict) -> Any:
    for key in ("possible", "is_possible"):
        if key in status:
            return bool(status[key])
    return pd.NA


def _visibility(status: dict) -> str:
    if "visibility" in status:
        return str(status["visibility"])
    if "is_occluded" in status:
        return "occluded" if status["is_occluded"] else "visible"
    return "unknown"


def _motion(status: dict) -> str:
    if "motion" in status:
        return str(status["motion"])
    if "is_static" in status and status["is_static"]:
        return "static"
    return "unknown"


def _n_objects(status: dict) -> int:
    for key in ("n_objects", "nobjects", "num_objects"):
        if key in status:
            return int(status[key])
    return -1


def movie_metadata(movie: Movie, status: dict[str, Any]) -> dict[str, Any]:
    """One metadata row for ``movie`` from its flattened status."""
    parts = movie.movie_id.split("/")
    if len(parts) == 3:
        block, index, run = parts
    else:
        m = _BLOCK_IN_LABEL.search(str(status.get("block", "")))
        block, index, run = (m.group(1) if m else "train"), parts[0], 0
    return {
        "movie": movie.movie_id,
        "split": movie.split,
        "block": block,
        "index": index,
        "run": int(run),
        "quadruplet": movie.quadruplet,
        "visibility": _visibility(status),
        "motion": _motion(status),
        "n_objects": _n_objects(status),
        "possible": _possible(status),
        "max_depth": float(status["max_depth"]) if "max_depth" in status else float("nan"),
        "status_variant": status["_variant"],
        "masks_grayscale": json.dumps(status.get("masks_grayscale", [])),
    }


def _frame_path(movie_dir: Path, kind: str, t: int) -> Path:
    return movie_dir / kind / f"{kind}_{t + 1:03d}.png"


def _imread(path: Path, flags: int) -> np.ndarray:
    img = cv2.imread(str(path), flags)
    if img is None:
        if not path.exists():
            raise IntPhysFormatError(f"missing frame {path}")
        raise IntPhysFormatError(f"frame {path} cannot be decoded as an image (corrupt or not a PNG)")
    return img


def _count_frames(movie_dir: Path) -> int:
    scene = movie_dir / "scene"
    if not scene.is_dir():
        raise IntPhysFormatError(f"missing scene directory {scene}")
    with os.scandir(scene) as it:
        n = sum(1 for e in it if e.name.startswith("scene_") and e.name.endswith(".png"))
    if n == 0:
        raise IntPhysFormatError(f"scene directory {scene} holds no scene_NNN.png frames")
    return n


def decode_movie(
    movie_dir: str | os.PathLike, n_frames: int, height: int, width: int, *, max_depth: float = float("nan")
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Decode every frame of one movie.

    Parameters
    ----------
    movie_dir : path-like
    n_frames, height, width : int
        Expected shape; a frame of another size raises.
    max_depth : float
        ``max_depth`` (mm) from status.json, needed for 8-bit depth.

    Returns
    -------
    scene : ndarray, shape (T, H, W, 3), uint8, RGB
    depth : ndarray, shape (T, H, W), float32, mm
    masks : ndarray, shape (T, H, W), uint8
    depth_encoding : {"uint16_inverse_mm", "uint8_max_depth"}
    """
    d = Path(movie_dir)
    scene = np.empty((n_frames, height, width, 3), np.uint8)
    depth = np.empty((n_frames, height, width), np.float32)
    masks = np.empty((n_frames, height, width), np.uint8)
    encoding = None
    for t in range(n_frames):
        p = _frame_path(d, "scene", t)
        img = _imread(p, cv2.IMREAD_COLOR)
        if img.shape != (height, width, 3):
            raise IntPhysFormatError(f"frame {p} has shape {img.shape}, expected {(height, width, 3)}")
        cv2.cvtColor(img, cv2.COLOR_BGR2RGB, dst=scene[t])
        p = _frame_path(d, "depth", t)
        dimg = _imread(p, cv2.IMREAD_UNCHANGED)
        if dimg.ndim == 3:
            dimg = dimg[..., 0]
        if dimg.shape != (height, width):
            raise IntPhysFormatError(f"frame {p} has shape {dimg.shape}, expected {(height, width)}")
        if dimg.dtype == np.uint16:
            enc = "uint16_inverse_mm"
            np.subtract(65535.0, dimg, out=depth[t], dtype=np.float32)
        elif dimg.dtype == np.uint8:
            enc = "uint8_max_depth"
            if not np.isfinite(max_depth):
                raise IntPhysFormatError(
                    f"8-bit depth frame {p} needs 'max_depth' in {d / 'status.json'} to be scaled to mm"
                )
            np.multiply(dimg, np.float32(max_depth / 255.0), out=depth[t], dtype=np.float32)
        else:
            raise IntPhysFormatError(f"depth frame {p} has dtype {dimg.dtype}, expected 8- or 16-bit")
        if encoding is not None and enc != encoding:
            raise IntPhysFormatError(f"depth frame {p} is {enc} while earlier frames are {encoding}")
        encoding = enc
        p = _frame_path(d, "masks", t)
        m = _imread(p, cv2.IMREAD_UNCHANGED)
        if m.ndim == 3:
            m = m[..., 0]
        if m.shape != (height, width) or m.dtype != np.uint8:
            raise IntPhysFormatError(f"mask frame {p} is {m.dtype} {m.shape}, expected uint8 {(height, width)}")
        masks[t] = m
    return scene, depth, masks, encoding


def _depth_encoding_of(movie_dir: Path) -> str:
    p = _frame_path(movie_dir, "depth", 0)
    img = _imread(p, cv2.IMREAD_UNCHANGED)
    return "uint16_inverse_mm" if img.dtype == np.uint16 else "uint8_max_depth"


def _decoded_blocks(movies, rows, T, H, W, *, threads: int, prefetch: int = 1):
    """Yield ``{"scene", "depth", "masks"}`` blocks of one movie each, in order.

    Movies are decoded by a pool of ``threads`` threads with at most
    ``prefetch + threads`` movies in flight, so memory does not grow with the shard.
    """
    cv2.setNumThreads(1)
    threads = max(1, int(threads))
    ahead = max(2 * threads, int(prefetch) + threads)
    with ThreadPoolExecutor(threads) as pool:
        pending: deque = deque()
        it = iter(zip(movies, rows))
        try:
            for _ in range(ahead):
                m, row = next(it)
                pending.append(pool.submit(decode_movie, m.path, T, H, W, max_depth=row["max_depth"]))
        except StopIteration:
            pass
        while pending:
            s, d, k, _enc = pending.popleft().result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append(pool.submit(decode_movie, nxt[0].path, T, H, W, max_depth=nxt[1]["max_depth"]))
            yield {"scene": s[None], "depth": d[None], "masks": k[None]}
        # an exception above leaves the pool's remaining futures to finish and be dropped


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
    rows, n_listed = [], []
    for m in movies:  # keep only the metadata row of each status (the per-frame part can be large)
        st = read_status(m.path)
        rows.append(movie_metadata(m, st))
        n_listed.append(len(st["frames"]) if st.get("frames") else 0)
    first = movies[0].path
    T = n_listed[0] or _count_frames(first)
    probe = _imread(_frame_path(first, "scene", 0), cv2.IMREAD_COLOR)
    H, W = probe.shape[:2]
    for m, row, n_st in zip(movies, rows, n_listed):
        if n_st and n_st != T:
            raise IntPhysFormatError(
                f"{m.path / 'status.json'} lists {n_st} frames, other movies of the shard have {T}"
            )
        row.update(n_frames=T, height=H, width=W)
    for m, row in zip(movies, rows):
        row["depth_encoding"] = _depth_encoding_of(m.path)
    table = pd.DataFrame(rows)
    table["shard"] = int(shard)
    table["possible"] = table["possible"].astype("boolean")
    store_attrs = {
        "intphys": {"split": split, "shard": int(shard), "shard_size": int(shard_size)},
        "movies": [m.movie_id for m in movies],
        **(attrs or {}),
    }
    n = len(movies)
    # storage chunk: k whole movies, k so that a scene chunk holds ~2 MB (>= 1 MB zarr guidance) -
    # one movie for real IntPhys frames (25 MB), several for small generated ones
    k = int(max(1, min(n, _CHUNK_BYTES // (T * H * W * 3))))
    specs = {
        "scene": StreamSpec((n, T, H, W, 3), np.uint8, ("movie", "t", "y", "x", "c"), chunks=(k, T, H, W, 3),
                            attrs={"color": "RGB"}),
        "depth": StreamSpec((n, T, H, W), np.float32, ("movie", "t", "y", "x"), chunks=(k, T, H, W),
                            attrs={"units": "mm"}),
        "masks": StreamSpec((n, T, H, W), np.uint8, ("movie", "t", "y", "x"), chunks=(k, T, H, W),
                            attrs={"units": "gray value; names in metadata column masks_grayscale"}),
    }
    write_store_stream(out_store, specs, _decoded_blocks(movies, rows, T, H, W, threads=threads, prefetch=k), store_attrs)
    write_table(table, out_table)
    return table


def merge_metadata(tables: Sequence[str | os.PathLike], out_table: str | os.PathLike) -> pd.DataFrame:
    """Concatenate per-shard metadata tables (in the given shard order) into one table."""
    from psybench.io.tables import read_table

    if not tables:
        raise ValueError("merge_metadata: no shard tables given")
    df = pd.concat([read_table(t) for t in tables], ignore_index=True)
    dup = df["movie"][df["movie"].duplicated()]
    if len(dup):
        raise ValueError(f"movie {dup.iloc[0]!r} appears in two shard tables of {out_table}")
    write_table(df, out_table)
    return df
