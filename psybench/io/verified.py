"""The artifacts found intact at planning, recorded by the state of their files, so unchanged ones are not re-read.

:func:`psybench.io.integrity.quarantine_damaged` checks every store and table below
``results/`` before Snakemake plans (JSON metadata, chunk counts and a stat per file
against the file manifest). Done on every run, this read ~6,000 JSON files and listed
~28,000 directories of the default run (about 2.5 s with a warm file cache, 10 s
cold) to find, nearly always, nothing. :class:`VerifiedState` remembers each artifact
that passed as the list of its paths (files and folders) and one digest of their
``stat`` (type, size, modification and status-change times in ns, inode); the next
check calls ``stat`` on the recorded paths, without listing folders or reading files, and
skips the artifact when the digest is unchanged. An artifact changed in place since
(same store folder, or same table manifest, as recorded) has every file hashed against
its manifest; one written again (a writer replaces the folder or the manifest) gets the
usual planning check.

Why an unchanged digest means unchanged content: writing to a file sets its
modification *and* status-change time (``ctime``); a file added to, removed from or
renamed in a folder sets that folder's times; a file replaced under the same name has
another inode. ``ctime`` cannot be set back by a user (``touch -d`` or
:func:`os.utime` set it to now), so an edit that restores the modification time is
still seen here, and hashed. An artifact not yet recorded (the first check after
it was written) is judged by its writer's stat stamp (:func:`write_stamp`, taken the
same way right after the write): a store as its writer stamped it gets the
structural check, any other (edited, copied, restored from a cache, or written
before stamps existed) has every file hashed once. ``snakemake --touch`` changes
every output in place: the next check hashes them all once. The record is a cache:
deleting it costs one full check.

It lives in the results folder, ``<root>/.psybench-verified.json`` (goes with the
results it describes), is written atomically, and only by a process that may repair
the results (:func:`psybench.io.planning.may_repair`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from psybench.io.atomic import atomic_output

__all__ = ["VERIFIED_NAME", "VerifiedState", "artifact_paths", "stat_digest", "STAMP_SUFFIX", "stamp_path",
           "write_stamp", "stamp_matches"]

VERIFIED_NAME = ".psybench-verified.json"
_FORMAT = 1


def artifact_paths(base: str | os.PathLike, names: Iterable[str] | None = None) -> list[str]:
    """Every path of an artifact, relative to ``base``: ``"."`` and all entries below it (a store folder), or ``names``.

    Folders end in ``/``. Symlinks are followed, as the checks follow them.
    """
    if names is not None:
        return sorted(n for n in names if os.path.lexists(os.path.join(base, n)))
    out = ["."]
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(base, rel)) as it:
            for entry in it:
                name = f"{rel}{entry.name}"
                if entry.is_dir(follow_symlinks=True):
                    out.append(f"{name}/")
                    stack.append(f"{name}/")
                else:
                    out.append(name)
    return sorted(out)


def stat_digest(base: str | os.PathLike, paths: Iterable[str]) -> str | None:
    """SHA-256 of the ``stat`` of ``paths`` below ``base``; None when one is missing."""
    h = hashlib.sha256()
    prefix = os.fspath(base) + os.sep
    for p in paths:
        try:
            st = os.stat(prefix + p)
        except OSError:
            return None
        h.update(f"{p}\0{st.st_mode >> 12}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())
    return h.hexdigest()


class VerifiedState:
    """The record of the artifacts below ``root`` that passed the planning check.

    Parameters
    ----------
    root : path-like
        The results folder; keys are artifact paths relative to it (a store folder,
        or a table's CSV).
    name : str
        The record's file name in ``root`` (default :data:`VERIFIED_NAME`; a generated
        tree's record is named after the tree, :func:`psybench.io.inputs.quarantine_changed_tree`).
    """

    def __init__(self, root: str | os.PathLike, name: str = VERIFIED_NAME):
        self.root = Path(root)
        self.path = self.root / name
        self._prefix = os.fspath(self.root) + os.sep
        self._old: dict[str, list] = {}
        self._new: dict[str, list] = {}
        try:
            doc = json.loads(self.path.read_text())
            if doc.get("format") == _FORMAT and isinstance(doc.get("artifacts"), dict):
                self._old = doc["artifacts"]
        except (OSError, ValueError, AttributeError):
            pass  # no record, or an unreadable one: every artifact is checked in full

    def _key(self, path: str | os.PathLike) -> str:
        path = os.fspath(path)
        if os.sep == "/" and path.startswith(self._prefix):  # the walk's paths: no pathlib per artifact
            return path[len(self._prefix):]
        return Path(path).relative_to(self.root).as_posix()

    def status(self, path: str | os.PathLike, base: str | os.PathLike | None = None, anchor: str = ".") -> str:
        """How the artifact at ``path`` (its files below ``base``, default ``path``) compares with the record.

        Returns
        -------
        str
            ``"unchanged"``: every recorded path has the recorded ``stat`` (the
            artifact stays in the record written by :meth:`save`); ``"modified"``:
            changed in place since it was recorded (its ``anchor``, the store folder or
            the table's manifest, is the same inode): its files must be hashed, since a
            write may have restored their modification time; ``"new"``: not recorded,
            or written again since (a writer replaces the anchor).
        """
        key = self._key(path)
        rec = self._old.get(key)
        if not rec or len(rec) != 3:
            return "new"
        paths, digest, anchor_ino = rec
        base = base if base is not None else path
        if stat_digest(base, paths) == digest:
            self._new[key] = rec
            return "unchanged"
        try:
            same = os.stat(os.path.join(base, anchor)).st_ino == anchor_ino
        except OSError:
            return "new"
        return "modified" if same else "new"

    def snapshot(
        self, path: str | os.PathLike, base: str | os.PathLike | None = None, names: Iterable[str] | None = None,
        anchor: str = ".",
    ) -> list | None:
        """The paths, stat digest and anchor inode of an artifact, taken *before* its check (None if gone)."""
        base = base if base is not None else path
        try:
            paths = artifact_paths(base, names)
            anchor_ino = os.stat(os.path.join(base, anchor)).st_ino
        except OSError:
            return None
        digest = stat_digest(base, paths)
        return None if digest is None else [paths, digest, anchor_ino]

    def record(self, path: str | os.PathLike, snap: list | None) -> None:
        """Record an artifact that passed its check, by the snapshot taken before the check."""
        if snap is not None:
            self._new[self._key(path)] = snap

    def save(self) -> None:
        """Write the record: the artifacts found unchanged or recorded by this check, no others."""
        if self._new == self._old and self.path.exists():
            return
        with atomic_output(self.path) as tmp:
            Path(tmp).write_text(json.dumps({"format": _FORMAT, "artifacts": self._new}, sort_keys=True))


# A store's stat stamp: the hidden sibling ``.<name>.psybench-stat`` (outside the store, whose bytes stay
# free of timestamps and inode numbers).
STAMP_SUFFIX = ".psybench-stat"
_STAMP_FORMAT = 1


def stamp_path(root: str | os.PathLike) -> Path:
    """Where the stat stamp of the artifact folder ``root`` is kept: ``<parent>/.<name>.psybench-stat``."""
    root = Path(root)
    return root.with_name(f".{root.name}{STAMP_SUFFIX}")


def write_stamp(root: str | os.PathLike, names: Iterable[str]) -> None:
    """Record the ``stat`` of the files ``names`` below ``root`` (just written and hashed by their writer).

    A reader that finds every one of them with the same type, size, modification and
    status-change times and inode (:func:`stamp_matches`) reads the very files their
    writer wrote and digested, so it need not hash them again; any later write,
    replacement or ``touch`` of one of them (``ctime`` cannot be set back) breaks the
    match and the reader hashes everything, as it did before stamps. A copy (a
    colleague's results, Snakemake's between-workflow cache) has other inodes: it
    is hashed in full, once per reader.
    """
    root = Path(root)
    names = sorted(names)
    digest = stat_digest(root, names)
    if digest is None:
        return
    doc = {"format": _STAMP_FORMAT, "files": len(names), "stat": digest}
    with atomic_output(stamp_path(root)) as tmp:
        Path(tmp).write_text(json.dumps(doc, sort_keys=True))


def stamp_matches(root: str | os.PathLike, names: Iterable[str]) -> bool:
    """Whether the files ``names`` below ``root`` are, by their ``stat``, the ones :func:`write_stamp` recorded."""
    root = Path(root)
    try:
        doc = json.loads(stamp_path(root).read_text())
    except (OSError, ValueError):
        return False
    names = sorted(names)
    if not isinstance(doc, dict) or doc.get("format") != _STAMP_FORMAT or doc.get("files") != len(names):
        return False
    digest = stat_digest(root, names)
    return digest is not None and digest == doc.get("stat")
