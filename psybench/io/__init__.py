"""Input/output: Zarr artifact stores and tidy tables.

The names below are loaded on first use (:mod:`psybench._lazy`): the
Snakefile imports small modules of this package (:mod:`psybench.io.atomic`,
:mod:`psybench.io.integrity`, ...) on every run, the no-op rerun included, and
importing the package must not import Zarr, Dask and pandas for them.
"""

from psybench._lazy import lazy_exports

_EXPORTS = {
    "atomic_output": "psybench.io.atomic",
    "ArraySpec": "psybench.io.store",
    "Coordinate": "psybench.io.store",
    "Store": "psybench.io.store",
    "StoreError": "psybench.io.store",
    "StreamSpec": "psybench.io.store",
    "open_store": "psybench.io.store",
    "quarantine_damaged": "psybench.io.store",
    "verify_store": "psybench.io.store",
    "write_store": "psybench.io.store",
    "write_store_stream": "psybench.io.store",
    "read_csv_checked": "psybench.io.tables",
    "read_table": "psybench.io.tables",
    "write_table": "psybench.io.tables",
}

__all__ = [
    "ArraySpec",
    "Coordinate",
    "atomic_output",
    "Store",
    "StoreError",
    "open_store",
    "quarantine_damaged",
    "verify_store",
    "write_store",
    "StreamSpec",
    "write_store_stream",
    "read_table",
    "read_csv_checked",
    "write_table",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
