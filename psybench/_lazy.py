"""Exports of a package loaded on first use (PEP 562 module ``__getattr__``).

The Snakefile is parsed on every run, the no-op rerun included, and imports small
modules of several packages (``psybench.io.atomic``, ``psybench.aggregate.scope``,
``psybench.intphys.ingest.layout`` ...). A package ``__init__`` that imported all its
modules made each of these pay for Zarr, Dask, pandas, OpenCV or SciPy's statistics
(seconds of every no-op rerun: benchmarks/README.md). Such packages name their exports
here instead; ``from package import name`` and ``package.name`` work as before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` whose ``exports`` map a name to its module.

    A module written ``"module:attribute"`` exports that attribute under the name.

    Examples
    --------
    >>> __getattr__, __dir__ = lazy_exports(__name__, {"write_table": "psybench.io.tables"})  # doctest: +SKIP
    """
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = exports[name].partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
