"""Atomic outputs: build a file or directory under a temporary sibling, then rename it.

Every file psybench writes goes through :func:`atomic_output`, so a killed job never
leaves a half-written artifact under its final name (``os.replace`` is atomic on
POSIX within one filesystem). Temporaries are hidden siblings named
``.<name>.tmp-<pid><suffix>``; the suffix is kept so that writers choosing a format
from the file name (matplotlib, NumPy's ``.npz``) still do.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_output", "temporary_sibling"]


def temporary_sibling(path: str | os.PathLike) -> Path:
    """The hidden temporary sibling used while ``path`` is being built."""
    path = Path(path)
    return path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path to write; on success rename it to ``path``.

    Parameters
    ----------
    path : path-like
        The final file or directory.
    directory : bool
        Create the temporary as an empty directory (for multi-file outputs);
        an existing directory at ``path`` is replaced.

    Examples
    --------
    >>> with atomic_output("table.md") as tmp:  # doctest: +SKIP
    ...     tmp.write_text("| a |")

    On an exception the temporary is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    _remove(tmp)
    if directory:
        tmp.mkdir()
    try:
        yield tmp
        if directory and path.is_dir():
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
