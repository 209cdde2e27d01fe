"""Numba's ``njit`` with its machine code cached, falling back to compiling per process.

``cache=True`` keeps the machine code in ``NUMBA_CACHE_DIR`` if set, else beside the
module (``__pycache__``), else, when the package's directory is read-only, in the
user's cache directory (``~/.cache/numba``), so that a job loads it instead of compiling.
Imports nothing but Numba (no OpenCV, no SciPy): the compiled loops of every track use it.
"""

from __future__ import annotations

from numba import njit

__all__ = ["cached_njit"]


def cached_njit(**options):
    """``njit(cache=True, **options)``; without a writable cache directory, ``cache=False`` (compiled per process).

    Numba refuses ``cache=True`` (RuntimeError "no locator available") when neither the
    package's ``__pycache__``, ``NUMBA_CACHE_DIR`` nor the user's cache directory is writable:
    the loops then still run, at the cost of compiling them in each process.
    """
    def decorate(func):
        try:
            return njit(cache=True, **options)(func)
        except RuntimeError:
            return njit(cache=False, **options)(func)
    return decorate
