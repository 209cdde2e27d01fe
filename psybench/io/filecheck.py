"""File manifests: each file of an artifact with its size and SHA-256, recorded at write.

A complete store lists its files in the attributes of a hidden Zarr subgroup,
``<store>/.psybench-files/zarr.json`` (a subgroup, so that Zarr and xarray see a
known node and read on; it holds no arrays); a table
``t.csv`` lists itself and its Parquet sibling in the hidden ``.t.files.json``
beside it. Both are written last, once everything they list is in place, so a
writer killed before the end leaves no manifest that matches.

Two checks compare an artifact with its manifest:

* :func:`quick_check_files` (planning, every run): a stat per file. A file missing,
  added (stores) or of another size is damage; a file modified after the manifest
  was written (newer than it) is hashed before it is judged, so a touched file
  (``snakemake --touch``) passes and only a changed content is reported. The
  manifest holds no timestamp (artifacts stay byte-identical between runs): its own
  modification time is the time of writing.
* :func:`check_files` (jobs, before reading): hashes every listed file, unless the
  store's stat stamp matches (:func:`store_stamped`).

A store's writer also stamps it once it is in place (:func:`stamp_store`): the
``stat`` of every listed file and of the manifest, kept beside the store
(:func:`psybench.io.verified.write_stamp`). A job that finds the stamp matching
reads the very files that were hashed from memory as they were written, and skips
hashing them again; a store changed in any way since (``ctime`` included), or
copied, is hashed in full as before.

Whole-file SHA-256 is what ``sha256sum -c`` and the BagIt format (RFC 8493, section
2.1.3) use to detect damaged payload files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from psybench.io.inputs import iter_files
from psybench.io.verified import stamp_matches, write_stamp

__all__ = [
    "FILES_NAME", "FileCheckError", "record_files", "check_files", "quick_check_files", "table_manifest",
    "record_table", "check_table", "stamp_store", "store_stamped",
]

FILES_NAME = ".psybench-files"
# Snakemake writes .snakemake_timestamp into directory outputs after the job: not ours.
_IGNORED_PREFIXES = (FILES_NAME, ".snakemake")


class FileCheckError(RuntimeError):
    """An artifact's file does not match its manifest; the message names the file."""


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _walk(root: Path) -> list[str]:
    """Relative POSIX paths of every file below ``root`` (not the manifest nor Snakemake's marker)."""
    return sorted(name for name, _ in iter_files(root, skip=_IGNORED_PREFIXES))


def _write_manifest(manifest: Path, base: Path, names: Iterable[str], known: Mapping[str, str] | None = None) -> None:
    entries = {}
    for name in names:
        st = (base / name).stat()
        entries[name] = {"size": st.st_size, "sha256": (known or {}).get(name) or _sha256(base / name)}
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"files": entries}}
    manifest.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def record_files(root: str | os.PathLike, known: Mapping[str, str] | None = None) -> Path:
    """List every file below the directory ``root`` in ``root/.psybench-files/zarr.json``; return its path.

    ``known`` maps relative POSIX paths to the SHA-256 of the bytes the writer wrote
    there, hashed from its memory (those files are not read back: the manifest holds
    what was meant to be on disk, so a write that went wrong is reported by the
    next check); every other file is hashed from disk.
    """
    root = Path(root)
    manifest = _store_manifest(root)
    manifest.parent.mkdir(exist_ok=True)
    _write_manifest(manifest, root, _walk(root), known)
    return manifest


def _store_manifest(root: Path) -> Path:
    return root / FILES_NAME / "zarr.json"


def _stamped_names(root: Path) -> list[str]:
    return [*_read_manifest(_store_manifest(root)), f"{FILES_NAME}/zarr.json"]


def stamp_store(root: str | os.PathLike) -> None:
    """Stamp the complete store ``root`` (at its final name) by the ``stat`` of its listed files and manifest."""
    root = Path(root)
    write_stamp(root, _stamped_names(root))


def store_stamped(root: str | os.PathLike) -> bool:
    """Whether every listed file and the manifest of ``root`` are, by their ``stat``, as its writer stamped them."""
    root = Path(root)
    try:
        names = _stamped_names(root)
    except FileCheckError:
        return False
    return stamp_matches(root, names)


def _read_manifest(manifest: Path) -> dict:
    try:
        return json.loads(manifest.read_text())["attributes"]["files"]
    except FileNotFoundError:
        raise FileCheckError(f"no file manifest {manifest}: not written to the end, or written by hand") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FileCheckError(f"unreadable file manifest {manifest} ({exc})") from None


def _compare(base: Path, manifest: Path, names: Iterable[str] | None, *, content: bool) -> None:
    listed = _read_manifest(manifest)
    written_ns = manifest.stat().st_mtime_ns  # written last: a file modified since is newer
    if names is not None:
        extra = sorted(set(names) - set(listed))
        if extra:
            raise FileCheckError(f"file {extra[0]} is not in its manifest: added after it was written")
    for name, rec in listed.items():
        path = base / name
        try:
            st = path.stat()
        except FileNotFoundError:
            raise FileCheckError(f"file {name} listed in its manifest is missing: truncated") from None
        if st.st_size != rec["size"]:
            raise FileCheckError(f"file {name} has {st.st_size} bytes, {rec['size']} when written: truncated")
        if (content or st.st_mtime_ns > written_ns) and _sha256(path) != rec["sha256"]:
            raise FileCheckError(f"file {name} does not match its checksum (SHA-256 when written): corrupted")


def check_files(root: str | os.PathLike) -> None:
    """Hash every file of the directory ``root`` and compare with its manifest (raises :class:`FileCheckError`)."""
    root = Path(root)
    _compare(root, _store_manifest(root), _walk(root), content=True)


def quick_check_files(root: str | os.PathLike) -> None:
    """Compare sizes and mtimes of the files of ``root`` with its manifest; hash a file only if its mtime moved."""
    root = Path(root)
    _compare(root, _store_manifest(root), _walk(root), content=False)


def table_manifest(csv: str | os.PathLike) -> Path:
    """The hidden manifest ``.<stem>.files.json`` beside the table ``<stem>.csv``."""
    csv = Path(csv)
    return csv.with_name(f".{csv.stem}.files.json")


def record_table(csv: str | os.PathLike, parquet: bool) -> Path:
    """Record a table's CSV (and Parquet sibling) in its manifest, after both are in place."""
    csv = Path(csv)
    manifest = table_manifest(csv)
    names = [csv.name] + ([csv.with_suffix(".parquet").name] if parquet else [])
    tmp = manifest.with_name(f"{manifest.name}.tmp-{os.getpid()}")
    _write_manifest(tmp, csv.parent, names)
    os.replace(tmp, manifest)
    return manifest


def check_table(csv: str | os.PathLike, *, content: bool = True) -> bool:
    """Check a table's files against its manifest; ``False`` if it has none (not written by psybench).

    Raises
    ------
    FileCheckError
        Naming the table file that differs from what was written.
    """
    csv = Path(csv)
    manifest = table_manifest(csv)
    if not manifest.exists():
        return False
    try:
        _compare(csv.parent, manifest, None, content=content)
    except FileCheckError as exc:
        raise FileCheckError(f"table {csv}: {exc}; delete it and rerun the rule that writes it") from None
    return True
