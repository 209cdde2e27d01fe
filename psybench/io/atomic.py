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
target are removed the next time it is written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_output", "temporary_sibling"]


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
