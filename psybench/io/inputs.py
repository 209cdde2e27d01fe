"""Raw-data inputs a workflow reads outside its own results: listings and digests.

Snakemake reruns a job when an input file is newer than its outputs, when a
params value changes, or (with ``--cache``) when the content of a source input
changes. A dataset *tree* given as one directory input is seen only through the
directory's own modification time, which does not change when a file deep inside
(an IntPhys frame, a ``status.json``) is edited, truncated or replaced. Here a tree
is summarised as a listing of ``(relative path, size, mtime_ns)`` per file and a
digest of that listing; the workflow passes the digest as a rule parameter, so a
changed, missing or added file changes the parameter and reruns what reads the tree
(and, with ``--cache``, gives another cache key).

Size and ``mtime_ns`` are what ``rsync`` and ``make`` compare: a stat per file, no
read, cheap enough to run each time the workflow is planned (about 2 µs per file).
A file rewritten with the same size and a restored modification time (``cp -p``,
``touch -r``) is not noticed; hash the files yourself if your data arrive that way.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["tree_listing", "tree_digest", "iter_files"]


def tree_listing(root: str | os.PathLike) -> list[tuple[str, int, int]]:
    """Every regular file below ``root`` as ``(relative path, size, mtime_ns)``, sorted by path.

    Parameters
    ----------
    root : path-like
        A directory (symlinks are followed) or a single file.

    Returns
    -------
    list of (str, int, int)
        POSIX relative paths (``"."`` for a single file), sizes in bytes and
        modification times in nanoseconds.

    Raises
    ------
    FileNotFoundError
        ``root`` does not exist (the message names it).
    """
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"input {root} does not exist")
    if not root.is_dir():
        st = root.stat()
        return [(".", st.st_size, st.st_mtime_ns)]
    rows = [(name, st.st_size, st.st_mtime_ns) for name, e in iter_files(root) for st in [e.stat()]]
    rows.sort()
    return rows


def iter_files(root: Path, *, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, os.DirEntry]]:
    """``(relative POSIX path, DirEntry)`` of every file below the directory ``root``, symlinks followed.

    Entries whose name starts with one of ``skip`` (files and folders) are left out.
    """
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(root / rel if rel else root) as it:
            for entry in it:
                name = f"{rel}/{entry.name}" if rel else entry.name
                if skip and entry.name.startswith(skip):
                    continue
                if entry.is_dir(follow_symlinks=True):
                    stack.append(name)
                else:
                    yield name, entry


def _digest_rows(rows: Iterable[tuple[str, int, int]]) -> str:
    h = hashlib.sha256()
    for name, size, mtime_ns in rows:
        h.update(f"{name}\t{size}\t{mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def tree_digest(root: str | os.PathLike) -> str:
    """SHA-256 (16 hex digits) of :func:`tree_listing`: changes when a file is changed, removed or added."""
    return _digest_rows(tree_listing(root))

