"""status.json of one IntPhys movie: both variants read into one metadata row.

The V1.0 file is flat; later releases use ``{"header": {...}, "frames": [...]}``
(Riochet et al. 2018, IntPhys V1.0, "Metadata"). The row holds the labels
(``possible``) and conditions next to the observable mask names; the labels are
joined to a model's predictions only when scoring.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from psybench.intphys.ingest.layout import IntPhysFormatError, Movie

__all__ = ["read_status", "movie_metadata"]

_BLOCK_IN_LABEL = re.compile(r"(O\d+)")


def read_status(movie_dir: str | os.PathLike) -> dict[str, Any]:
    """Read ``status.json`` of one movie and flatten the two variants into one dict.

    The V1.0 file is flat; later releases use ``{"header": {...}, "frames": [...]}``
    (the cut-down dev archive only ``{"header": {"is_possible": ...}}``). Header keys
    win; ``frames`` is kept as is.
    """
    path = Path(movie_dir) / "status.json"
    try:
        with open(path) as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise IntPhysFormatError(f"missing status file {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IntPhysFormatError(f"status file {path} is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise IntPhysFormatError(f"status file {path} holds a {type(raw).__name__}, expected a JSON object")
    if "header" in raw:
        if not isinstance(raw["header"], dict):
            raise IntPhysFormatError(f"status file {path}: 'header' is not a JSON object")
        flat = {k: v for k, v in raw.items() if k != "header"}
        flat.update(raw["header"])
        flat["_variant"] = "header"
    else:
        flat = dict(raw)
        flat["_variant"] = "v1"
    return flat


def _possible(status: dict) -> Any:
    for key in ("possible", "is_possible"):
        if key in status:
            return bool(status[key])
    return pd.NA


def _visibility(status: dict) -> str:
    if "visibility" in status:
        return str(status["visibility"])
    if "is_occluded" in status:
        return "occluded" if status["is_occluded"] else "visible"
    return "unknown"


def _motion(status: dict) -> str:
    if "motion" in status:
        return str(status["motion"])
    if "is_static" in status and status["is_static"]:
        return "static"
    return "unknown"


def _n_objects(status: dict) -> int:
    for key in ("n_objects", "nobjects", "num_objects"):
        if key in status:
            return int(status[key])
    return -1


def movie_metadata(movie: Movie, status: dict[str, Any]) -> dict[str, Any]:
    """One metadata row for ``movie`` from its flattened status."""
    parts = movie.movie_id.split("/")
    if len(parts) == 3:
        block, index, run = parts
    else:
        m = _BLOCK_IN_LABEL.search(str(status.get("block", "")))
        block, index, run = (m.group(1) if m else "train"), parts[0], 0
    return {
        "movie": movie.movie_id,
        "split": movie.split,
        "block": block,
        "index": index,
        "run": int(run),
        "quadruplet": movie.quadruplet,
        "visibility": _visibility(status),
        "motion": _motion(status),
        "n_objects": _n_objects(status),
        "possible": _possible(status),
        "max_depth": float(status["max_depth"]) if "max_depth" in status else float("nan"),
        "status_variant": status["_variant"],
        "masks_grayscale": json.dumps(status.get("masks_grayscale", [])),
    }
