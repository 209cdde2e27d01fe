"""Zarr v3 artifact stores: written atomically, read as Dask arrays, verifiable.

Contract
--------
A psybench *store* is one Zarr (format 3) group on disk holding one or more
named arrays. Every array carries ``dimension_names`` (``t``, ``y``, ``x``,
``component`` ...), so ``xarray.open_zarr(path, consolidated=False)`` opens
it labelled. The group attributes hold the caller's deterministic metadata
(display mapping, stimulus and model parameters, code hash) under their own
keys, plus a ``psybench`` manifest written last::

    {"format": 1, "complete": true,
     "arrays": {name: {"shape": [...], "dtype": "float32", "chunks": [...],
                       "dims": [...], "sha256": "<digest of the C-order data>"}}}

Stores are built in a temporary sibling directory (``<name>.tmp-<pid>``) and
renamed into place only once every chunk and the manifest are on disk, so a
killed job never leaves a half-written store under the final name. Empty chunks
are written too (``write_empty_chunks``), so a missing chunk file always means a
damaged store; :func:`verify_store` detects it (and, with ``deep=True``, any
changed byte) instead of letting Zarr silently return fill values.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import dask
import dask.array as da
import numpy as np
import zarr

__all__ = [
    "ArraySpec",
    "Store",
    "StoreError",
    "write_store",
    "open_store",
    "verify_store",
    "time_chunks",
    "atomic_path",
    "quarantine_damaged",
    "StreamSpec",
    "write_store_stream",
]

MANIFEST_KEY = "psybench"
FORMAT_VERSION = 1
_TARGET_CHUNK_BYTES = 2**21  # ~2 MB uncompressed per chunk (zarr guidance: >= 1 MB)


class StoreError(RuntimeError):
    """A store is missing, incomplete or corrupted; the message names its path."""


@dataclass
class ArraySpec:
    """One array to write: data (NumPy or Dask), its dimension names and layout.

    Parameters
    ----------
    data : array_like or dask.array.Array
        The values; the first axis is streamed (usually time ``t``).
    dims : sequence of str
        One name per axis, e.g. ``("t", "y", "x", "component")``.
    chunks : tuple of int, optional
        Storage chunk shape; default: whole frames, enough of them for ~2 MB.
    shards : tuple of int, optional
        Shard shape (Zarr v3 sharding); must be a multiple of ``chunks``.
    attrs : dict, optional
        Array-level attributes (units, component names ...).
    """

    data: Any
    dims: Sequence[str]
    chunks: tuple[int, ...] | None = None
    shards: tuple[int, ...] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Store:
    """An opened store: lazily loaded Dask arrays, their dims and the group attributes."""

    path: Path
    arrays: dict[str, da.Array]
    dims: dict[str, tuple[str, ...]]
    attrs: dict[str, Any]
    array_attrs: dict[str, dict[str, Any]]

    def __getitem__(self, name: str) -> da.Array:
        try:
            return self.arrays[name]
        except KeyError:
            raise KeyError(f"store {self.path} has no array {name!r}; it has {sorted(self.arrays)}") from None


def time_chunks(shape: Sequence[int], itemsize: int, target_bytes: int = _TARGET_CHUNK_BYTES) -> tuple[int, ...]:
    """Chunk shape that keeps whole frames and stacks enough of them for ``target_bytes``."""
    shape = tuple(int(s) for s in shape)
    if not shape:
        return ()
    frame_bytes = int(np.prod(shape[1:], dtype=np.int64)) * itemsize if len(shape) > 1 else itemsize
    n = max(1, min(shape[0] or 1, target_bytes // max(frame_bytes, 1)))
    return (int(n),) + shape[1:]


def atomic_path(path: str | os.PathLike) -> Path:
    """Temporary sibling path used while building ``path``."""
    path = Path(path)
    return path.with_name(f"{path.name}.tmp-{os.getpid()}")


def _remove_leftovers(path: Path) -> None:
    """Delete temporaries a killed writer of ``path`` left behind (``.tmp-*``, ``.old-*``)."""
    if path.parent.is_dir():
        for pattern in (f"{path.name}.tmp-*", f"{path.name}.old-*"):
            for p in path.parent.glob(pattern):
                shutil.rmtree(p, ignore_errors=True)


def _is_store_dir(path: Path) -> bool:
    return path.suffix == ".zarr" and ".tmp-" not in path.name and ".old-" not in path.name


def _count_files(path: Path) -> int:
    n = 0
    stack = [path]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=True):
                    stack.append(Path(e.path))
                else:
                    n += 1
    return n


def _quick_verify(path: Path) -> None:
    """The structural part of :func:`verify_store`, from the JSON metadata alone (fast).

    Checks the group's ``zarr.json`` and manifest, each listed array's metadata and
    its number of chunk files; raises :class:`StoreError` naming what is wrong.
    """
    meta_file = path / "zarr.json"
    try:
        meta = json.loads(meta_file.read_text())
    except FileNotFoundError:
        raise StoreError(f"{path} is not a Zarr v3 store (no zarr.json): it may be truncated") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"store {path}: unreadable zarr.json ({exc})") from None
    manifest = (meta.get("attributes") or {}).get(MANIFEST_KEY)
    if not manifest or not manifest.get("complete"):
        raise StoreError(f"store {path} is incomplete (no psybench manifest): it was not written to the end")
    for name, arr in manifest["arrays"].items():
        try:
            shape = json.loads((path / name / "zarr.json").read_text())["shape"]
        except (OSError, ValueError, KeyError):
            raise StoreError(f"store {path} lacks array {name!r} listed in its manifest") from None
        if list(shape) != list(arr["shape"]):
            raise StoreError(f"store {path}: array {name!r} has shape {shape}, manifest says {arr['shape']}")
        chunk_dir = path / name / "c"
        n_files = _count_files(chunk_dir) if chunk_dir.is_dir() else 0
        expected = _expected_chunk_files(arr)
        if np.prod(arr["shape"]) > 0 and n_files != expected:
            raise StoreError(f"store {path}: array {name!r} has {n_files} chunk files, expected {expected}: truncated")


def quarantine_damaged(root: str | os.PathLike, *, dest: str | os.PathLike | None = None) -> list[tuple[Path, str]]:
    """Move every damaged store below ``root`` aside, so that a rerun rebuilds it.

    Snakemake treats a directory output as up to date whatever its contents. Run
    before the workflow is planned, this structural check (:func:`verify_store`
    without ``deep``, about a millisecond per store) finds stores that are
    truncated, half-written or lack their manifest, and moves each to ``dest``
    (default ``<root>/.damaged``), where it can be inspected; Snakemake then sees
    the output missing and rebuilds it and everything downstream.

    Returns
    -------
    list of (path, reason)
        The stores moved aside and why.
    """
    root = Path(root)
    dest = Path(dest) if dest is not None else root / ".damaged"
    moved: list[tuple[Path, str]] = []
    if not root.is_dir():
        return moved
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        if here == dest or dest in here.parents:
            dirnames[:] = []
            continue
        stores = [d for d in dirnames if _is_store_dir(here / d)]
        dirnames[:] = [d for d in dirnames if not d.endswith(".zarr") and ".zarr." not in d and d != dest.name]
        for d in stores:
            p = here / d
            try:
                _quick_verify(p)
            except StoreError as exc:
                target = dest / p.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists():
                    shutil.rmtree(target)
                os.replace(p, target)
                moved.append((p, str(exc)))
    return moved


def _digest_block(block: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(block).tobytes()).hexdigest()


def _combine(digests: Sequence[str]) -> str:
    h = hashlib.sha256()
    for d in digests:
        h.update(d.encode())
    return h.hexdigest()


def _jsonable(obj: Any) -> Any:
    """Round-trip through JSON so attributes are plain, deterministic types."""
    def default(o):
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, Path):
            return str(o)
        raise TypeError(f"attribute value {o!r} of type {type(o).__name__} is not JSON-serialisable")

    return json.loads(json.dumps(obj, default=default, sort_keys=True))


def write_store(
    path: str | os.PathLike,
    arrays: Mapping[str, ArraySpec],
    attrs: Mapping[str, Any] | None = None,
    *,
    scheduler: str = "threads",
    num_workers: int | None = None,
) -> Path:
    """Write ``arrays`` to a new Zarr v3 store at ``path``, atomically.

    The arrays are computed by Dask (threaded scheduler by default) block by
    block, so a Dask input larger than memory streams to disk. Each Dask array is
    rechunked to the storage chunk (or shard) shape first, so no two tasks write
    the same chunk.

    Parameters
    ----------
    path : path-like
        Final location (a directory ending in ``.zarr`` by convention). An existing
        store there is replaced only after the new one is complete.
    arrays : mapping of str to ArraySpec
    attrs : mapping, optional
        Group attributes; must be JSON-serialisable and deterministic.
    scheduler, num_workers
        Passed to :func:`dask.compute`.

    Returns
    -------
    pathlib.Path
        The final path.
    """
    path = Path(path)
    _remove_leftovers(path)
    tmp = atomic_path(path)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"format": FORMAT_VERSION, "complete": False, "arrays": {}}
    try:
        group = zarr.open_group(str(tmp), mode="w", zarr_format=3)
        group.attrs.update(_jsonable(dict(attrs or {})))
        tasks = []
        names = []
        for name, spec in arrays.items():
            data = spec.data
            if not isinstance(data, da.Array):
                data = np.asarray(data)
            if len(spec.dims) != data.ndim:
                raise ValueError(
                    f"array {name!r}: {len(spec.dims)} dimension names {tuple(spec.dims)} for {data.ndim} axes"
                )
            chunks = tuple(spec.chunks) if spec.chunks else time_chunks(data.shape, data.dtype.itemsize)
            chunks = tuple(max(1, min(c, s)) if s else 1 for c, s in zip(chunks, data.shape))
            write_unit = tuple(spec.shards) if spec.shards else chunks
            arr = zarr.create_array(
                group.store,
                name=name,
                shape=data.shape,
                dtype=data.dtype,
                chunks=chunks,
                shards=spec.shards,
                dimension_names=tuple(spec.dims),
                attributes=_jsonable(spec.attrs),
                fill_value=0,
                config={"write_empty_chunks": True},
            )
            darr = data if isinstance(data, da.Array) else da.from_array(data, chunks=write_unit)
            darr = darr.rechunk(write_unit)
            store_task = da.store(darr, arr, lock=False, compute=False)
            digests = [dask.delayed(_digest_block)(b) for b in darr.to_delayed().ravel()]
            tasks.append((store_task, digests))
            names.append(name)
            manifest["arrays"][name] = {
                "shape": list(data.shape),
                "dtype": str(data.dtype),
                "chunks": list(chunks),
                "shards": list(spec.shards) if spec.shards else None,
                "dims": list(spec.dims),
            }
        if tasks:
            # One graph for all arrays (shared inputs are computed once); the store
            # tasks and the digest lists are passed as two separate collections so
            # the structure of the result is unambiguous.
            _, digest_lists = dask.compute(
                [t for t, _ in tasks], [d for _, d in tasks], scheduler=scheduler, num_workers=num_workers
            )
            for name, digests in zip(names, digest_lists):
                manifest["arrays"][name]["sha256"] = _combine(digests)
        manifest["complete"] = True
        group.attrs[MANIFEST_KEY] = manifest
        _replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _replace(tmp: Path, path: Path) -> None:
    """Move ``tmp`` to ``path``; an old store is kept until the new one is in place."""
    if path.exists():
        old = path.with_name(f"{path.name}.old-{os.getpid()}")
        os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, path)


def _open_group(path: Path) -> zarr.Group:
    if not path.exists():
        raise StoreError(f"store {path} does not exist")
    if not (path / "zarr.json").is_file():
        raise StoreError(f"{path} is not a Zarr v3 store (no zarr.json): it may be truncated; delete it and rerun")
    try:
        return zarr.open_group(str(path), mode="r", zarr_format=3)
    except Exception as exc:  # zarr raises several types for bad metadata
        raise StoreError(f"store {path} cannot be opened ({exc}); delete it and rerun") from exc


def _expected_chunk_files(meta: Mapping[str, Any]) -> int:
    unit = meta.get("shards") or meta["chunks"]
    return int(np.prod([-(-s // c) for s, c in zip(meta["shape"], unit)], dtype=np.int64)) if meta["shape"] else 1


def verify_store(path: str | os.PathLike, *, deep: bool | Sequence[str] = False) -> dict[str, Any]:
    """Check that a store is complete and, with ``deep``, that its data are unchanged.

    Parameters
    ----------
    path : path-like
    deep : bool or sequence of str
        Re-read every chunk and compare the SHA-256 digest with the manifest:
        for every array (``True``) or for the named arrays only (what a consumer
        reads), since a flipped byte can still decode to wrong values.

    Returns
    -------
    dict
        The manifest.

    Raises
    ------
    StoreError
        Naming the store and what is wrong (missing manifest, missing array,
        missing chunk file, shape or digest mismatch).
    """
    path = Path(path)
    group = _open_group(path)
    manifest = group.attrs.get(MANIFEST_KEY)
    if not manifest or not manifest.get("complete"):
        raise StoreError(f"store {path} is incomplete (no psybench manifest): it was not written to the end")
    for name, meta in manifest["arrays"].items():
        if name not in group:
            raise StoreError(f"store {path} lacks array {name!r} listed in its manifest")
        arr = group[name]
        if list(arr.shape) != list(meta["shape"]):
            raise StoreError(f"store {path}: array {name!r} has shape {arr.shape}, manifest says {meta['shape']}")
        chunk_dir = path / name / "c"
        n_files = sum(1 for p in chunk_dir.rglob("*") if p.is_file()) if chunk_dir.exists() else 0
        expected = _expected_chunk_files(meta)
        if np.prod(meta["shape"]) > 0 and n_files != expected:
            raise StoreError(
                f"store {path}: array {name!r} has {n_files} chunk files, expected {expected}: truncated"
            )
        if deep is True or (not isinstance(deep, bool) and name in deep):
            unit = tuple(meta.get("shards") or meta["chunks"])
            darr = da.from_zarr(arr, chunks=unit)
            try:
                digests = dask.compute(*[dask.delayed(_digest_block)(b) for b in darr.to_delayed().ravel()])
            except Exception as exc:
                raise StoreError(f"store {path}: array {name!r} cannot be decoded ({exc})") from exc
            if _combine(digests) != meta.get("sha256"):
                raise StoreError(f"store {path}: array {name!r} does not match its checksum: corrupted")
    return manifest


def open_store(path: str | os.PathLike, *, verify: bool = True, deep: bool | Sequence[str] = False) -> Store:
    """Open a store written by :func:`write_store` as Dask arrays chunked like storage.

    Parameters
    ----------
    path : path-like
    verify : bool
        Run :func:`verify_store` first (cheap structural check).
    deep : bool or sequence of str
        Also verify the checksums of all (``True``) or the named arrays (reads them once).
    """
    path = Path(path)
    if verify:
        verify_store(path, deep=deep)
    group = _open_group(path)
    arrays, dims, array_attrs = {}, {}, {}
    with warnings.catch_warnings():
        # Snakemake drops a .snakemake_timestamp file into directory outputs
        warnings.filterwarnings("ignore", message=".*snakemake_timestamp.*")
        members = list(group.arrays())
    for name, arr in members:
        arrays[name] = da.from_zarr(arr, chunks=arr.shards or arr.chunks)
        dims[name] = tuple(arr.metadata.dimension_names or ())
        array_attrs[name] = dict(arr.attrs)
    attrs = {k: v for k, v in group.attrs.items()}
    return Store(path=path, arrays=arrays, dims=dims, attrs=attrs, array_attrs=array_attrs)


@dataclass
class StreamSpec:
    """Layout of one array filled from a stream of blocks along its first axis."""

    shape: tuple[int, ...]
    dtype: Any
    dims: Sequence[str]
    chunks: tuple[int, ...] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)


def write_store_stream(
    path: str | os.PathLike,
    specs: Mapping[str, StreamSpec],
    blocks: Any,
    attrs: Mapping[str, Any] | None = None,
    *,
    check: Any = None,
) -> Path:
    """Write arrays filled by an iterator of blocks, atomically, in bounded memory.

    Parameters
    ----------
    path : path-like
    specs : mapping of str to StreamSpec
        Every array's final shape; storage chunks span whole frames.
    blocks : iterable of dict
        Consecutive blocks ``{name: ndarray}`` along the first axis (any lengths);
        every array must receive exactly its ``shape[0]`` rows in total.
    attrs : mapping, optional
    check : callable, optional
        ``check(name, block, start)`` called on each block before it is buffered
        (e.g. to validate a user model's output); it raises to abort.

    Notes
    -----
    Blocks are buffered up to one storage chunk per array, so memory is bounded by
    the block size plus one chunk, whatever the length of the stream. Digests are
    taken per storage chunk in order, exactly as :func:`write_store` does, so
    :func:`verify_store` checks both kinds of store alike.
    """
    path = Path(path)
    _remove_leftovers(path)
    tmp = atomic_path(path)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"format": FORMAT_VERSION, "complete": False, "arrays": {}}
    try:
        group = zarr.open_group(str(tmp), mode="w", zarr_format=3)
        group.attrs.update(_jsonable(dict(attrs or {})))
        state = {}
        for name, spec in specs.items():
            shape = tuple(int(s) for s in spec.shape)
            dtype = np.dtype(spec.dtype)
            chunks = tuple(spec.chunks) if spec.chunks else time_chunks(shape, dtype.itemsize)
            if tuple(chunks[1:]) != shape[1:]:
                raise ValueError(f"array {name!r}: streamed arrays must be chunked along the first axis only")
            arr = zarr.create_array(
                group.store, name=name, shape=shape, dtype=dtype, chunks=chunks,
                dimension_names=tuple(spec.dims), attributes=_jsonable(spec.attrs),
                fill_value=0, config={"write_empty_chunks": True},
            )
            state[name] = {"arr": arr, "buf": [], "buffered": 0, "written": 0, "digests": [], "n": chunks[0]}
            manifest["arrays"][name] = {
                "shape": list(shape), "dtype": str(dtype), "chunks": list(chunks), "shards": None,
                "dims": list(spec.dims),
            }

        def flush(st, final=False):
            while st["buffered"] >= st["n"] or (final and st["buffered"]):
                data = np.concatenate(st["buf"], axis=0) if len(st["buf"]) > 1 else st["buf"][0]
                take = min(st["n"], data.shape[0])
                slab, rest = data[:take], data[take:]
                st["arr"][st["written"]: st["written"] + take] = slab
                st["digests"].append(_digest_block(slab))
                st["written"] += take
                st["buf"] = [rest] if rest.shape[0] else []
                st["buffered"] = rest.shape[0]

        for block in blocks:
            for name, values in block.items():
                if name not in state:
                    raise ValueError(f"stream yielded unknown array {name!r}; expected {sorted(state)}")
                st = state[name]
                values = np.asarray(values)
                start = st["written"] + st["buffered"]
                if check is not None:
                    check(name, values, start)
                if values.shape[1:] != tuple(specs[name].shape[1:]):
                    raise ValueError(
                        f"array {name!r}: block of shape {values.shape} does not fit {tuple(specs[name].shape)}"
                    )
                if start + values.shape[0] > specs[name].shape[0]:
                    raise ValueError(f"array {name!r}: stream gave more than {specs[name].shape[0]} rows")
                st["buf"].append(values.astype(specs[name].dtype, copy=False))
                st["buffered"] += values.shape[0]
                flush(st)
        for name, st in state.items():
            flush(st, final=True)
            if st["written"] != specs[name].shape[0]:
                raise ValueError(f"array {name!r}: stream gave {st['written']} rows, expected {specs[name].shape[0]}")
            manifest["arrays"][name]["sha256"] = _combine(st["digests"])
        manifest["complete"] = True
        group.attrs[MANIFEST_KEY] = manifest
        _replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path
