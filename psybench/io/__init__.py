"""Input/output: Zarr artifact stores and tidy tables."""

from psybench.io.atomic import atomic_output
from psybench.io.store import (
    ArraySpec,
    Coordinate,
    Store,
    StoreError,
    StreamSpec,
    open_store,
    quarantine_damaged,
    verify_store,
    write_store,
    write_store_stream,
)
from psybench.io.tables import read_csv_checked, read_table, write_table

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
