"""Coordinates with units in the stores, and consolidated metadata (used by :mod:`psybench.io.store`).

A dimension's coordinate is a 1-D array named like the dimension (``t`` in ms,
``y`` and ``x`` in deg ...), with ``units`` (and ``long_name``) attributes, so
``xarray.open_zarr`` returns a labelled dataset (CF conventions: ``units``,
``coordinates``). Coordinates are written into the manifest like every array, so
:func:`psybench.io.integrity.verify_store` checks them too.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from psybench.io.integrity import BLOCK_DIGEST, combine_digests, digest_block

__all__ = ["Coordinate", "write_coords", "consolidate"]


@dataclass(frozen=True)
class Coordinate:
    """Values along one dimension, with units; written as a 1-D array (xarray reads it as a coordinate).

    ``name`` (the mapping key it is given under) equal to ``dim`` makes it the
    dimension's index (``t``, ``y``, ``x``); another name makes it an auxiliary
    coordinate of ``dim`` (e.g. ``velocity_u`` along ``velocity``), listed in the
    ``coordinates`` attribute of the arrays that have that dimension.
    """

    values: Any
    units: str
    dim: str | None = None
    long_name: str = ""


def write_coords(group: Any, coords: Mapping[str, Coordinate], dims_of: Mapping[str, Sequence[str]],
                 manifest: dict[str, Any]) -> None:
    """Write each coordinate as a one-chunk 1-D array (digested like any array) and name it on its arrays."""
    import zarr  # here, as in consolidate: planning imports Coordinate (grid_coords) without Zarr

    aux: dict[str, list[str]] = {}
    for name, c in coords.items():
        dim = c.dim or name
        values = np.asarray(c.values)
        if values.ndim != 1:
            raise ValueError(f"coordinate {name!r}: values must be 1-D, got shape {values.shape}")
        for arr_name, dims in dims_of.items():
            if dim in dims and len(values) != manifest["arrays"][arr_name]["shape"][list(dims).index(dim)]:
                raise ValueError(f"coordinate {name!r}: {len(values)} values for dimension {dim!r} of "
                                 f"array {arr_name!r}, shape {manifest['arrays'][arr_name]['shape']}")
        attrs = {"units": c.units, **({"long_name": c.long_name} if c.long_name else {})}
        arr = zarr.create_array(group.store, name=name, shape=values.shape, dtype=values.dtype,
                                chunks=(max(1, len(values)),), dimension_names=(dim,), attributes=attrs,
                                fill_value=0, config={"write_empty_chunks": True})
        arr[...] = values
        manifest["arrays"][name] = {"shape": list(values.shape), "dtype": str(values.dtype),
                                    "chunks": [max(1, len(values))], "shards": None, "dims": [dim],
                                    BLOCK_DIGEST: combine_digests([digest_block(values)])}
        if name != dim:
            aux.setdefault(dim, []).append(name)
    for arr_name, dims in dims_of.items():
        names = [n for d in dims for n in aux.get(d, [])]
        if names:
            arr = group[arr_name]
            arr.attrs["coordinates"] = " ".join(names)


def consolidate(path: Path) -> None:
    """Consolidate the store's metadata into its root ``zarr.json`` (read without listing the directory).

    Zarr warns that consolidated metadata is not yet part of the v3 specification;
    psybench's readers and xarray read it, and other readers see a valid v3 group.
    """
    import zarr

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")
        zarr.consolidate_metadata(str(path))

