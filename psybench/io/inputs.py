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

A tree the workflow writes itself (a generated IntPhys split) is a directory output,
which Snakemake sees as up to date whatever it holds. Its writer records the listing
beside it (:func:`record_listing`); before planning, :func:`listing_change` tells
whether a file was since changed, removed or added, so that the tree is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from psybench.io.atomic import move_aside
from psybench.io.verified import VerifiedState

__all__ = ["tree_listing", "tree_digest", "iter_files", "listing_path", "record_listing", "listing_change",
           "quarantine_changed_tree", "LISTING_SUFFIX", "path_problem"]


def path_problem(path: str | os.PathLike, expected: str = "file") -> str | None:
    """Why ``path`` is not what a key expects (symlinks followed), or None if it is.

    Parameters
    ----------
    path : path-like
    expected : {"file", "folder"}

    Returns
    -------
    str or None
        ``"does not exist"``, ``"is a folder, expected a file"``, ``"is a file, expected
        a folder"``, ``"is a broken symbolic link"`` or ``"is not a regular file"`` (a
        FIFO, a device), to follow the path in a message; None when it fits.
    """
    if expected not in ("file", "folder"):
        raise ValueError(f"expected={expected!r} must be 'file' or 'folder'")
    p = Path(path)
    if p.is_file() if expected == "file" else p.is_dir():
        return None
    if p.is_dir():
        return "is a folder, expected a file"
    if p.is_file():
        return "is a file, expected a folder"
    if p.exists():
        return "is not a regular file"
    return "is a broken symbolic link" if p.is_symlink() else "does not exist"


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
    # Snakemake marks a directory output with .snakemake_timestamp after the writer is done
    rows = [(name, st.st_size, st.st_mtime_ns) for name, e in iter_files(root, skip=(".snakemake_timestamp",))
            for st in [e.stat()]]
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



LISTING_SUFFIX = ".listing.json"
# the stat record of a tree found equal to its listing (quarantine_changed_tree)
TREE_RECORD_SUFFIX = ".psybench-verified.json"


def listing_path(root: str | os.PathLike) -> Path:
    """Where :func:`record_listing` keeps the listing of the tree ``root``: ``.<name>.listing.json`` beside it."""
    root = Path(root)
    return root.parent / f".{root.name}{LISTING_SUFFIX}"


def record_listing(root: str | os.PathLike) -> Path:
    """Record :func:`tree_listing` of a tree just written, beside it (:func:`listing_path`).

    Returns
    -------
    pathlib.Path
        The listing file (JSON rows ``[path, size, mtime_ns]``), written atomically.
    """
    path = listing_path(root)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(tree_listing(root)))
    os.replace(tmp, path)
    return path


def listing_change(root: str | os.PathLike) -> str | None:
    """How the tree ``root`` differs from its recorded listing, or None if it does not.

    Returns
    -------
    str or None
        A sentence naming the first file changed (size or modification time),
        removed or added, or saying that no listing was recorded.
    """
    root = Path(root)
    path = listing_path(root)
    if not path.is_file():
        return f"{root} has no recorded listing ({path.name}): it was not written by this workflow's writer"
    try:
        recorded = {name: (size, mtime) for name, size, mtime in json.loads(path.read_text())}
    except (ValueError, TypeError) as exc:
        return f"{path} is unreadable ({exc})"
    now = {name: (size, mtime) for name, size, mtime in tree_listing(root)}
    for name in sorted(set(recorded) | set(now)):
        if name not in now:
            return f"{root}/{name} was removed"
        if name not in recorded:
            return f"{root}/{name} was added"
        if now[name] != recorded[name]:
            return f"{root}/{name} was changed (size {recorded[name][0]} -> {now[name][0]} B, or its modification time)"
    return None


def quarantine_changed_tree(
    root: str | os.PathLike, dest: str | os.PathLike | None, *, derived: Sequence[str | os.PathLike] = (),
    move: bool = True,
) -> str | None:
    """Move the tree ``root`` (its listing, and what was derived from it) to ``dest`` if it changed.

    Parameters
    ----------
    root : path-like
        A tree written by the workflow with :func:`record_listing` (missing: nothing to do).
    dest : path-like
        Folder that receives it under its own path (``dest/<root>``, replacing an earlier
        one), where it can be inspected; the workflow then sees its output missing and rebuilds it.
    derived : sequence of path-like
        Outputs read from the tree (its ingested stores), moved to ``dest`` too: Snakemake
        does not rebuild a missing intermediate whose consumers' outputs are present.
    move : bool
        False: only compare and record a tree equal to its listing (the workflow's
        ``onsuccess``, so that the first run after the one that wrote the tree reads no
        listing); a changed tree is left where it is, for the next run's check to move.

    Returns
    -------
    str or None
        Why it was moved (:func:`listing_change`), or None if it is unchanged or absent.
        A tree without a recorded listing (written by an older psybench) is taken as
        it is and its listing recorded.

    Notes
    -----
    A tree found equal to its listing is recorded by the ``stat`` of its files and
    folders (:class:`psybench.io.verified.VerifiedState`, in ``.<name>.psybench-verified.json``
    beside it); the next call only calls ``stat`` on those paths and reads no listing when
    none changed (size, modification and status-change times, inode: an added or
    removed file changes its folder's). Any change falls back to the listing's comparison.
    """
    root = Path(root)
    if not root.is_dir():
        return None
    if not listing_path(root).is_file():  # written before listings were recorded: trusted once, recorded now
        record_listing(root)
        return None
    # the stat of every file and folder of the tree when it last matched its listing: unchanged, no listing is read
    state = VerifiedState(root.parent, name=f".{root.name}{TREE_RECORD_SUFFIX}")
    if state.status(root) == "unchanged":
        return None
    snap = state.snapshot(root)  # before the comparison: a change during it is seen next time
    why = listing_change(root)
    if why is None:
        state.record(root, snap)
        state.save()
        return None
    if not move:
        return why
    for path in [root, *map(Path, derived)]:
        move_aside([path], Path(path.anchor), Path(dest))
    listing_path(root).unlink(missing_ok=True)
    state.path.unlink(missing_ok=True)
    return why
