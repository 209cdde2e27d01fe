"""Atomic outputs: build a file or directory under a temporary sibling, then rename it.

Every artifact psybench writes (stores, tables, figures, report folders, answer
files) goes through :func:`atomic_output`, so a killed job never leaves a
half-written artifact under its final name (``os.replace`` is atomic on POSIX
within one filesystem).

Temporaries are siblings of the target: a directory ``d`` is built as
``d.tmp-<pid>`` (a Zarr store under construction is thus never taken for a store:
its name does not end in ``.zarr``), a file ``f.ext`` as the hidden
``.f.tmp-<pid>.ext`` (the suffix is kept for writers that choose a format from the
file name: matplotlib, NumPy's ``.npz``). Leftovers of a killed writer of the same
target are removed the next time it is written, and :func:`remove_stale_temporaries`
removes those of every target (a killed run's half tables and report folders) when
the next run starts, sparing any whose writer is still alive.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

__all__ = [
    "atomic_output",
    "temporary_sibling",
    "remove_stale_temporaries",
    "remove_stale_in",
    "is_temporary",
    "move_aside",
]

# d.tmp-<pid>, .f.tmp-<pid>.ext, d.old-<pid> (and .t.files.json.tmp-<pid>): see temporary_sibling
_TEMPORARY = re.compile(r"\.(?:tmp|old)-(\d+)(?:\.[^/]*)?$")


def temporary_sibling(path: str | os.PathLike, *, directory: bool = False, pid: int | str | None = None) -> Path:
    """The temporary sibling used while ``path`` is being built (by process ``pid``)."""
    path = Path(path)
    pid = os.getpid() if pid is None else pid
    if directory:
        return path.with_name(f"{path.name}.tmp-{pid}")
    return path.with_name(f".{path.stem}.tmp-{pid}{path.suffix}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _remove_leftovers(path: Path, directory: bool) -> None:
    """Delete temporaries that killed writers of ``path`` left behind."""
    if path.parent.is_dir():
        patterns = [temporary_sibling(path, directory=directory, pid="*").name]
        if directory:
            patterns.append(f"{path.name}.old-*")
        for pattern in patterns:
            for p in path.parent.glob(pattern):
                _remove(p)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path to write; on success rename it to ``path``.

    Parameters
    ----------
    path : path-like
        The final file or directory.
    directory : bool
        Create the temporary as an empty directory (multi-file outputs, Zarr
        stores); an existing directory at ``path`` is replaced only once the new
        one is complete.

    Examples
    --------
    >>> with atomic_output("table.md") as tmp:  # doctest: +SKIP
    ...     tmp.write_text("| a |")

    On an exception the temporary is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path, directory)
    tmp = temporary_sibling(path, directory=directory)
    if directory:
        tmp.mkdir()
    try:
        yield tmp
        if directory and path.is_dir():
            old = path.with_name(f"{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temporaries(root: str | os.PathLike) -> list[Path]:
    """Remove the temporaries that killed writers left below ``root``; keep those of live processes.

    Parameters
    ----------
    root : path-like
        The results folder. Zarr stores are not entered (their writers build them
        under a temporary name as a whole).

    Returns
    -------
    list of pathlib.Path
        The temporaries removed, sorted.

    Notes
    -----
    A writer's process id is part of its temporary's name. Only process ids of
    this machine can be checked: call this when no other run works in the folder
    (the workflow does so under the same conditions as the damaged-store check,
    :func:`psybench.io.planning.may_repair`, in the same walk of the results:
    :func:`psybench.io.integrity.repair_results`). A live process that reuses a dead
    writer's id keeps the leftover until the next run.
    """
    root = Path(root)
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for dirpath, dirnames, filenames in os.walk(root):
        removed += remove_stale_in(dirpath, [*dirnames, *filenames])
        dirnames[:] = [d for d in dirnames if not d.endswith(".zarr") and not _TEMPORARY.search(d)]
    return sorted(removed)


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a writer's temporary (``d.tmp-<pid>``, ``.f.tmp-<pid>.ext``, ``d.old-<pid>``)."""
    return _TEMPORARY.search(name) is not None


def remove_stale_in(folder: str | os.PathLike, names: Iterable[str]) -> list[Path]:
    """Remove the entries ``names`` of ``folder`` that are temporaries of dead writers; return them."""
    removed = []
    for name in names:
        m = _TEMPORARY.search(name)
        if m and not _alive(int(m.group(1))):
            path = Path(folder, name)
            _remove(path)
            removed.append(path)
    return removed


def move_aside(paths: Sequence[Path], root: Path, dest: Path) -> None:
    """Move each existing path below ``root`` to the same relative place below ``dest`` (replacing one there)."""
    for p in paths:
        if not p.exists() and not p.is_symlink():
            continue
        target = dest / p.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(p, target)
