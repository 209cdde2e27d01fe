"""Store integrity: the manifest every store carries, its verification, and quarantine.

A complete store's group attributes hold a ``psybench`` manifest (see
:mod:`psybench.io.store`) listing each array's shape, layout and the digest of its
C-order data (xxh3-128 per storage chunk or shard, in order; SHA-256 before format 3). :func:`verify_store`
checks a store against it; :func:`quarantine_damaged` moves damaged stores and
tables aside before Snakemake plans, so that they are rebuilt.

Every file of a store is also listed, once the store is complete, in its file
manifest ``.psybench-files`` (:mod:`psybench.io.filecheck`: size and SHA-256 of
the raw bytes). Planning compares sizes and hashes the files modified after the
manifest was written (a stat per file); a job reading a store hashes every file.
An artifact that passed is recorded by the ``stat`` of its paths
(:mod:`psybench.io.verified`), and checked again only once one of them changed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash

from psybench.io.atomic import is_temporary, move_aside, remove_stale_in
from psybench.io.filecheck import FILES_NAME, FileCheckError, check_files, check_table, quick_check_files, store_stamped
from psybench.io.inputs import LISTING_SUFFIX
from psybench.io.verified import VerifiedState

if TYPE_CHECKING:
    import zarr

__all__ = ["StoreError", "MANIFEST_KEY", "FORMAT_VERSION", "verify_store", "quarantine_damaged", "repair_results",
           "digest_block", "combine_digests", "open_group", "array_digest", "BLOCK_DIGEST", "move_aside"]

MANIFEST_KEY = "psybench"
FORMAT_VERSION = 3  # 2: with the file manifest .psybench-files; 3: arrays digested with xxh3_128
BLOCK_DIGEST = "xxh3_128"  # the manifest key of an array's content digest (format 3 on)


class StoreError(RuntimeError):
    """A store is missing, incomplete or corrupted; the message names its path."""


def digest_block(block: np.ndarray, algorithm: str = "xxh3_128") -> str:
    """Digest of the C-order bytes of ``block`` (hashed in place through the buffer protocol, no copy).

    ``xxh3_128`` (the default, stores of format 3 on: a 128-bit non-cryptographic hash, many
    times faster than SHA-256: benchmarks/README.md) detects accidental corruption as surely
    as SHA-256 does; ``sha256`` is
    how stores of format 1-2 were digested. The files themselves are listed with their
    SHA-256 in the file manifest (:mod:`psybench.io.filecheck`).
    """
    data = np.ascontiguousarray(block).reshape(-1).view(np.uint8)
    if algorithm == "xxh3_128":
        return xxhash.xxh3_128_hexdigest(data)
    if algorithm == "sha256":
        return hashlib.sha256(data).hexdigest()
    raise ValueError(f"unknown block digest {algorithm!r}: xxh3_128 or sha256")


def array_digest(meta: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(algorithm, combined digest)`` an array's manifest entry records (``xxh3_128`` from format 3 on)."""
    algorithm = BLOCK_DIGEST if BLOCK_DIGEST in meta else "sha256"
    return algorithm, meta.get(algorithm)


def combine_digests(digests: Sequence[str]) -> str:
    h = hashlib.sha256()
    for d in digests:
        h.update(d.encode())
    return h.hexdigest()


def open_group(path: Path) -> zarr.Group:
    import zarr  # here, not at the top: planning (quarantine_damaged) reads JSON only, without Zarr and Dask

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


def verify_store(
    path: str | os.PathLike, *, deep: bool | Sequence[str] = False, files: bool = True
) -> dict[str, Any]:
    """Check that a store is complete and, with ``deep``, that its data are unchanged.

    Parameters
    ----------
    path : path-like
    deep : bool or sequence of str
        Re-read every chunk and compare its digest with the manifest:
        for every array (``True``) or for the named arrays only (what a consumer
        reads), since a flipped byte can still decode to wrong values.
    files : bool
        Hash every file the store's file manifest lists (raw bytes, no decoding)
        and compare with the SHA-256 recorded when the store was written. When
        the store's stat stamp matches (:func:`psybench.io.filecheck.store_stamped`:
        every file is, by size, times and inode, the one its writer hashed from
        memory), neither the files nor (``deep``) the chunks are read again; the
        structure, sizes and the list of files are still checked.

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
    group = open_group(path)
    manifest = group.attrs.get(MANIFEST_KEY)
    if not manifest or not manifest.get("complete"):
        raise StoreError(f"store {path} is incomplete (no psybench manifest): it was not written to the end")
    # files exactly as their writer hashed them (stat stamp, psybench.io.filecheck): nothing to re-read
    stamped = files and manifest.get("format", 1) >= 2 and store_stamped(path)
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
        if not stamped and (deep is True or (not isinstance(deep, bool) and name in deep)):
            import dask
            import dask.array as da

            unit = tuple(meta.get("shards") or meta["chunks"])
            darr = da.from_zarr(arr, chunks=unit)
            algorithm, expected_digest = array_digest(meta)
            try:
                digests = dask.compute(
                    *[dask.delayed(digest_block)(b, algorithm) for b in darr.to_delayed().ravel()]
                )
            except Exception as exc:
                raise StoreError(f"store {path}: array {name!r} cannot be decoded ({exc})") from exc
            if combine_digests(digests) != expected_digest:
                raise StoreError(f"store {path}: array {name!r} does not match its checksum: corrupted")
    if files:
        _check_listed(path, manifest, content=not stamped)
    return manifest


def _check_listed(path: Path, manifest: Mapping[str, Any], *, content: bool) -> None:
    """Check the store's files against its file manifest (stores of format 2 on have one)."""
    if manifest.get("format", 1) < 2 and not (path / FILES_NAME).exists():
        return  # written before file manifests existed: the structural and deep checks apply
    try:
        (check_files if content else quick_check_files)(path)
    except FileCheckError as exc:
        raise StoreError(f"store {path}: {exc}; delete it and rerun") from None


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


def _quick_verify(path: Path, *, content: bool = False) -> None:
    """The structural part of :func:`verify_store`, from the JSON metadata alone (fast).

    Checks the group's ``zarr.json`` and manifest, each listed array's metadata and
    its number of chunk files, then its files against the file manifest (sizes, and
    SHA-256 of those modified after it, or of all with ``content``); raises
    :class:`StoreError` naming what is wrong.
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
    _check_listed(path, manifest, content=content)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _damage(path: Path, check) -> str | None:
    """Why ``path`` is damaged, or None if it is fine or was replaced while it was checked (a writer's rename)."""
    before = _identity(path)
    try:
        check(path)
        return None
    except (StoreError, FileCheckError, OSError) as exc:
        return str(exc) if before is not None and _identity(path) == before else None


def quarantine_damaged(
    root: str | os.PathLike, *, dest: str | os.PathLike | None = None, move: bool = True, record: bool = True
) -> list[tuple[Path, str]]:
    """Move every damaged store and table below ``root`` aside, so that a rerun rebuilds it.

    Snakemake treats a directory output as up to date whatever its contents, and a
    file output as up to date whatever bytes it holds. Run before the workflow is
    planned, this check (structure from the JSON metadata, then a stat per listed
    file against the file manifest, see :mod:`psybench.io.filecheck`) finds stores
    that are truncated, half-written, changed or lack their manifest, and tables
    whose CSV or Parquet differs from what was written; it moves each (a table with
    its sibling and manifest) to ``dest`` (default ``<root>/.damaged``), where it can
    be inspected; Snakemake then sees the output missing and rebuilds it and
    everything downstream.

    An artifact that passed is recorded in ``<root>/.psybench-verified.json``
    (:class:`psybench.io.verified.VerifiedState`): the next call only calls ``stat`` on its
    recorded paths; once one of them changed (a write, an added or removed file, a
    replaced file; ``ctime`` included, so an edit that restores the modification
    time is seen too) it checks the artifact again, hashing every file when it was
    changed in place.

    Writers build under temporary names (``x.zarr.tmp-<pid>``, ``.t.tmp-<pid>.csv``)
    that are never checked; a store or table replaced by a writer while it is being
    checked (another file at the name afterwards) is left alone. A tree with a
    recorded listing beside it (a generated IntPhys split, :func:`psybench.io.inputs.record_listing`)
    is raw data checked against that listing (:func:`psybench.io.inputs.quarantine_changed_tree`),
    not entered here.

    Parameters
    ----------
    root : path-like
        The results folder.
    dest : path-like, optional
        Where damaged artifacts go (default ``<root>/.damaged``).
    move : bool
        False: only find the damage and record the intact artifacts (the workflow's
        ``onsuccess``, so that the next run's check reads none of the artifacts this
        run wrote); the next run's check moves the damaged ones aside.
    record : bool
        False: write nothing, not even the record of intact artifacts (a dry run's
        check, :func:`psybench.io.planning.dry_run`, with ``move=False``).

    Returns
    -------
    list of (path, reason)
        The stores and tables moved aside (found, with ``move=False``) and why.
    """
    return _scan(root, dest, move=move, temporaries=False, record=record)[1]


def repair_results(
    root: str | os.PathLike, *, dest: str | os.PathLike | None = None
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Before planning: remove killed writers' temporaries and move damaged artifacts aside, in one walk.

    :func:`psybench.io.atomic.remove_stale_temporaries` and :func:`quarantine_damaged`
    (``move=True``) as one pass over the folders of ``root``: each folder's stale
    temporaries are removed before its stores and tables are checked.

    Returns
    -------
    (list of pathlib.Path, list of (path, reason))
        The temporaries removed (sorted), and the artifacts moved aside and why.
    """
    removed, moved = _scan(root, dest, move=True, temporaries=True)
    return sorted(removed), moved


def _folders(root: str, dest: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(folder, folder names, file names)`` of ``root`` and of every folder below it that may hold artifacts.

    Not entered: stores (and their writers' staging folders), temporaries, ``dest`` (and
    any folder of its name), symlinked folders (as :func:`os.walk`) and trees with a
    recorded listing. A folder is listed when reached, after the caller has handled its parent.
    """
    dest_name = os.path.basename(dest)
    stack = [root]
    while stack:
        here = stack.pop()
        dirs, files, links = [], [], set()
        try:
            with os.scandir(here) as it:
                for e in it:
                    if e.is_dir():
                        dirs.append(e.name)
                        if e.is_symlink():
                            links.add(e.name)
                    else:
                        files.append(e.name)
        except FileNotFoundError:  # removed since its parent was listed (a stale temporary)
            continue
        dirs.sort()
        files.sort()
        yield here, dirs, files
        listed = {f[1:-len(LISTING_SUFFIX)] for f in files if f.startswith(".") and f.endswith(LISTING_SUFFIX)}
        for d in reversed(dirs):
            if not (d.endswith(".zarr") or ".zarr." in d or d in links or d in listed or d == dest_name
                    or is_temporary(d)) and os.path.join(here, d) != dest:
                stack.append(os.path.join(here, d))


def _scan(
    root: str | os.PathLike, dest: str | os.PathLike | None, *, move: bool, temporaries: bool, record: bool = True
) -> tuple[list[Path], list[tuple[Path, str]]]:
    root = Path(root)
    dest = Path(dest) if dest is not None else root / ".damaged"
    removed: list[Path] = []
    moved: list[tuple[Path, str]] = []
    if not root.is_dir():
        return removed, moved
    verified = VerifiedState(root)
    for here, dirs, files in _folders(os.fspath(root), os.fspath(dest)):
        if temporaries:
            removed += remove_stale_in(here, [*dirs, *files])
        for d in dirs:
            if not d.endswith(".zarr") or ".tmp-" in d or ".old-" in d:
                continue
            state = verified.status(os.path.join(here, d))
            if state == "unchanged":
                continue
            store = Path(here, d)
            snap = verified.snapshot(store)
            # hash every file of one changed in place, or new and not as its writer stamped it (a copy, an edit)
            content = state == "modified" or not store_stamped(store)
            check = functools.partial(_quick_verify, content=True) if content else _quick_verify
            why = _damage(store, check)
            if why is not None:
                if move:
                    move_aside([store], root, dest)
                moved.append((store, why))
            else:
                verified.record(store, snap)
        for f in files:
            if f.startswith(".") and f.endswith(".files.json"):
                csv_name = f"{f[1:-len('.files.json')]}.csv"
                state = verified.status(os.path.join(here, csv_name), here, anchor=f)
                if state == "unchanged":
                    continue
                csv = Path(here, csv_name)
                table = [csv.name, csv.with_suffix(".parquet").name, f]
                snap = verified.snapshot(csv, here, table, anchor=f)
                why = _damage(csv, functools.partial(check_table, content=state == "modified"))
                if why is not None:
                    if move:
                        move_aside([Path(here, n) for n in table], root, dest)
                    moved.append((csv, why))
                else:
                    verified.record(csv, snap)
    if record:
        verified.save()
    return removed, moved
