"""Any gaze file, by the name of its format or by what it looks like (``gaze_format``, ``auto``)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from psybench.attention.gaze.datasets import PREFIX, detect_dataset, load_pymovements
from psybench.attention.gaze.eyelink import is_eyelink_asc, load_eyelink
from psybench.attention.gaze.loaders import load_arff, load_crcns, load_csv, load_diem, load_gazecom
from psybench.attention.gaze.tables import load_table

__all__ = ["FORMATS", "load_gaze"]

_LOADERS = {"csv": load_csv, "crcns": load_crcns, "diem": load_diem, "gazecom": load_gazecom, "arff": load_arff,
            "table": load_table, "eyelink": load_eyelink}
#: The format names; a pymovements dataset is ``pymovements:<name>`` (:mod:`~psybench.attention.gaze.datasets`).
FORMATS = sorted(_LOADERS)


def _simple_csv(path: Path) -> bool:
    """True when the header row has the simple layout's ``subject``, ``t``, ``x`` and ``y``."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = next((ln for ln in fh if ln.strip()), "")
    return {"subject", "t", "x", "y"} <= {c.strip().lower() for c in first.split(",")}


def _auto(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        if suffix == ".csv" and _simple_csv(path):
            return "csv"
        dataset = detect_dataset(path)
        return PREFIX + dataset if dataset else "csv"
    if path.name.endswith(".e-ceyeS"):
        return "crcns"
    if suffix == ".arff":
        return "arff"
    if suffix == ".coord":
        return "gazecom"
    if suffix == ".asc" or is_eyelink_asc(path):
        return "eyelink"
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = next((ln.strip() for ln in fh if ln.strip() and not ln.startswith(("#", "%"))), "")
    return "gazecom" if first.startswith("gaze ") else "diem"


def load_gaze(path: str | os.PathLike, *, fmt: str = "auto", **kwargs) -> pd.DataFrame:
    """Load a gaze file in ``fmt``: one of :data:`FORMATS`, ``pymovements:<dataset>`` or ``auto``.

    'auto' goes by the name (``.e-ceyeS``, ``.arff``, ``.coord``, ``.asc``), for ``.csv`` and ``.tsv`` by the
    header row (``subject,t,x,y``: the simple CSV; else the pymovements dataset whose layout it has,
    :func:`~psybench.attention.gaze.datasets.detect_dataset`), and then by the first line (``** CONVERTED
    FROM``: EyeLink; ``gaze <w> <h>``: GazeCom; else DIEM). 'table' is
    :func:`psybench.attention.gaze.tables.load_table` (keyword ``columns`` required).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"gaze file {path} does not exist")
    if fmt == "auto":
        fmt = _auto(path)
    if fmt.startswith(PREFIX):
        return load_pymovements(path, dataset=fmt[len(PREFIX):], **kwargs)
    if fmt not in _LOADERS:
        raise ValueError(f"gaze format {fmt!r} for {path} is not one of {FORMATS} or {PREFIX}<dataset>")
    return _LOADERS[fmt](path, **kwargs)
