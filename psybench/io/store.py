"""Zarr v3 artifact stores: written atomically, read as Dask arrays, verifiable.

Contract
--------
A psybench *store* is one Zarr (format 3) group on disk holding one or more
named arrays. Every array carries ``dimension_names`` (``t``, ``y``, ``x``,
``component`` ...) and, where the writer gives them, coordinates with units
(:class:`Coordinate`: ``t`` in ms, ``y``/``x`` in deg ...), and the metadata is
consolidated into the root ``zarr.json``, so ``xarray.open_zarr(path)`` opens it
labelled and ready to plot, without listing the directory (where Snakemake's
``.snakemake_timestamp`` would be reported as a stray file). The group attributes
hold the caller's deterministic metadata (display mapping, stimulus and model parameters, code hash) under their own
keys, plus a ``psybench`` manifest written last::

    {"format": 3, "complete": true,
     "arrays": {name: {"shape": [...], "dtype": "float32", "chunks": [...],
                       "dims": [...], "xxh3_128": "<digest of the C-order data>"}}}

Stores are built in a temporary sibling directory (``<name>.tmp-<pid>``, by
:func:`psybench.io.atomic.atomic_output`) and renamed into place only once every
chunk and the manifest are on disk, so a killed job never leaves a half-written store under the final name. Empty chunks
are written too (``write_empty_chunks``), so a missing chunk file always means a
damaged store; :func:`verify_store` detects it (and, with ``deep=True``, any
changed byte) instead of letting Zarr silently return fill values.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psybench._futures import InlineExecutor
from psybench.io.atomic import atomic_output
from psybench.io.coords import Coordinate, consolidate, write_coords
from psybench.io.filecheck import record_files, stamp_store
from psybench.io.integrity import (
    BLOCK_DIGEST,
    FORMAT_VERSION,
    MANIFEST_KEY,
    StoreError,
    combine_digests,
    digest_block,
    open_group,
    quarantine_damaged,
    verify_store,
)

# Dask and Zarr (slow to import: benchmarks/README.md) are imported by the functions that use them: a job that
# imports this module for a type or for another reader pays for neither.
if TYPE_CHECKING:
    import dask.array as da

__all__ = ["ArraySpec", "Store", "StoreError", "write_store", "open_store", "verify_store", "time_chunks",
           "quarantine_damaged", "StreamSpec", "write_store_stream", "Coordinate"]

_TARGET_CHUNK_BYTES = 2**21  # ~2 MB uncompressed per chunk (zarr guidance: >= 1 MB)


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
    coords: Mapping[str, Coordinate] | None = None,
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
    coords : mapping of str to Coordinate, optional
        Coordinates with units of the arrays' dimensions.

    Returns
    -------
    pathlib.Path
        The final path.
    """
    import dask
    import dask.array as da
    import zarr

    path = Path(path)
    manifest: dict[str, Any] = {"format": FORMAT_VERSION, "complete": False, "arrays": {}}
    with atomic_output(path, directory=True) as tmp:
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
            digests = [dask.delayed(digest_block)(b) for b in darr.to_delayed().ravel()]
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
            # One graph for all arrays (shared inputs computed once); the store tasks and
            # the digest lists passed as two collections: the result's structure is unambiguous.
            _, digest_lists = dask.compute(
                [t for t, _ in tasks], [d for _, d in tasks], scheduler=scheduler, num_workers=num_workers
            )
            for name, digests in zip(names, digest_lists):
                manifest["arrays"][name][BLOCK_DIGEST] = combine_digests(digests)
        write_coords(group, coords or {}, {n: arrays[n].dims for n in arrays}, manifest)
        manifest["complete"] = True
        group.attrs[MANIFEST_KEY] = manifest
        consolidate(tmp)
        record_files(tmp)  # last: lists every file, the group's zarr.json with its manifest included
    stamp_store(path)  # readers skip re-hashing files unchanged since (psybench.io.filecheck)
    return path


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
    import dask.array as da

    path = Path(path)
    if verify:
        verify_store(path, deep=deep)
    group = open_group(path)
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
    #: Zarr v3 sharding codec: one file per shard of chunks along the first axis (None: one file per chunk).
    shards: tuple[int, ...] | None = None
    compressors: Any = None  #: Zarr v3 compressors (``{"name": "blosc", ...}``); None: zarr's default (zstd)


def write_store_stream(
    path: str | os.PathLike,
    specs: Mapping[str, StreamSpec],
    blocks: Any,
    attrs: Mapping[str, Any] | None = None,
    *,
    check: Any = None,
    coords: Mapping[str, Coordinate] | None = None,
    zero_copy: bool = False,
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
    coords : mapping of str to Coordinate, optional
        Coordinates with units of the arrays' dimensions.
    zero_copy : bool
        A block that is exactly one whole storage unit (or the array's last, shorter
        one) is written from the caller's memory instead of being copied: the caller
        must leave it unchanged until it requests the block after the next one.

    Notes
    -----
    Blocks are copied into one storage unit (a shard, else a chunk) per array; a full unit is
    written and digested on a writer thread (one per array; none for a list or tuple of blocks)
    while the next one fills, so producing, writing and hashing overlap, and memory is bounded
    by the block size plus two units per array, whatever the length of the stream. Digests are
    taken per storage chunk in order, exactly as :func:`write_store` does, so :func:`verify_store`
    checks both kinds of store alike.
    """
    import zarr

    from psybench.io.shard_codec import shard_writer

    path = Path(path)
    manifest: dict[str, Any] = {"format": FORMAT_VERSION, "complete": False, "arrays": {}}
    with atomic_output(path, directory=True) as tmp:
        group = zarr.open_group(str(tmp), mode="w", zarr_format=3)
        group.attrs.update(_jsonable(dict(attrs or {})))
        state = {}
        for name, spec in specs.items():
            shape = tuple(int(s) for s in spec.shape)
            dtype = np.dtype(spec.dtype)
            chunks = tuple(spec.chunks) if spec.chunks else time_chunks(shape, dtype.itemsize)
            shards = tuple(int(s) for s in spec.shards) if spec.shards else None
            if tuple(chunks[1:]) != shape[1:] or (shards and (shards[1:] != shape[1:] or shards[0] % chunks[0])):
                raise ValueError(f"array {name!r}: streamed arrays must be chunked (and sharded, in whole chunks) "
                                 "along the first axis only")
            arr = zarr.create_array(
                group.store, name=name, shape=shape, dtype=dtype, chunks=chunks, shards=shards,
                dimension_names=tuple(spec.dims), attributes=_jsonable(spec.attrs),
                compressors="auto" if spec.compressors is None else spec.compressors,
                fill_value=0, config={"write_empty_chunks": True},
            )
            # digests and writes per storage unit (a shard, or a chunk), as write_store and verify_store do
            unit = shards or chunks
            state[name] = {"arr": arr, "bufs": [None, None], "cur": 0, "fill": 0, "written": 0, "digests": [],
                           "n": unit[0], "pending": None, "write": shards and shard_writer(arr, tmp / name)}
            manifest["arrays"][name] = {
                "shape": list(shape), "dtype": str(dtype), "chunks": list(chunks),
                "shards": list(shards) if shards else None, "dims": list(spec.dims),
            }

        def put(st, start, slab):  # one storage unit: write and digest it (zstd and hashlib release the GIL)
            if st["write"]:  # a whole shard, compressed from this memory in one pass (psybench.io.shard_codec)
                key, sha = st["write"](start, slab)
                known[f"{st['arr'].path}/{key}"] = sha  # for the file manifest: not read back
            else:
                st["arr"][start: start + slab.shape[0]] = slab
            return digest_block(slab)

        def submit(st, borrowed=None):
            """Hand the filled unit buffer (or a caller's whole unit) to the writer thread; fill the other one."""
            if st["pending"] is not None:  # at most one unit in flight per array: memory stays bounded
                st["digests"].append(st["pending"].result())
                st["pending"] = None
            if borrowed is not None:
                st["pending"] = writer.submit(put, st, st["written"], borrowed)
                st["written"] += borrowed.shape[0]
            elif st["fill"]:
                st["pending"] = writer.submit(put, st, st["written"], st["bufs"][st["cur"]][: st["fill"]])
                st["written"] += st["fill"]
                st["cur"], st["fill"] = 1 - st["cur"], 0

        def feed(name, st, values):
            # two reusable unit buffers per array (one filled here, one being written): no fresh pages per unit
            values = values.astype(specs[name].dtype, copy=False)
            if zero_copy and not st["fill"] and values.shape[0] == min(st["n"], specs[name].shape[0] - st["written"]):
                return submit(st, values)  # a whole unit: written from the caller's memory, no copy
            i = 0
            while i < values.shape[0]:
                buf = st["bufs"][st["cur"]]
                if buf is None:
                    buf = st["bufs"][st["cur"]] = np.empty((st["n"],) + values.shape[1:], specs[name].dtype)
                take = min(st["n"] - st["fill"], values.shape[0] - i)
                buf[st["fill"]: st["fill"] + take] = values[i: i + take]
                st["fill"] += take
                i += take
                if st["fill"] == st["n"]:
                    submit(st)

        # writes and digests on a writer thread per array while the next blocks are produced (in memory: at once)
        known: dict[str, str] = {}
        with (InlineExecutor() if isinstance(blocks, (list, tuple)) else
              ThreadPoolExecutor(max(1, len(state)), thread_name_prefix="store-writer")) as writer:
            for block in blocks:
                for name, values in block.items():
                    if name not in state:
                        raise ValueError(f"stream yielded unknown array {name!r}; expected {sorted(state)}")
                    st = state[name]
                    values = np.asarray(values)
                    start = st["written"] + st["fill"]
                    if check is not None:
                        check(name, values, start)
                    if values.shape[1:] != tuple(specs[name].shape[1:]):
                        raise ValueError(
                            f"array {name!r}: block of shape {values.shape} does not fit {tuple(specs[name].shape)}"
                        )
                    if start + values.shape[0] > specs[name].shape[0]:
                        raise ValueError(f"array {name!r}: stream gave more than {specs[name].shape[0]} rows")
                    feed(name, st, values)
            for name, st in state.items():
                submit(st)
                submit(st)  # collects the last digest
                if st["written"] != specs[name].shape[0]:
                    raise ValueError(
                        f"array {name!r}: stream gave {st['written']} rows, expected {specs[name].shape[0]}"
                    )
                manifest["arrays"][name][BLOCK_DIGEST] = combine_digests(st["digests"])
        write_coords(group, coords or {}, {n: specs[n].dims for n in specs}, manifest)
        manifest["complete"] = True
        group.attrs[MANIFEST_KEY] = manifest
        consolidate(tmp)
        record_files(tmp, known)  # last: lists every file, the group's zarr.json with its manifest included
    stamp_store(path)
    return path
