"""status.json of one IntPhys movie: every published variant read into one metadata row.

The variants, detected from the file and recorded in the column ``status_variant``:

``"v1"``
    The flat V1.0 file (Riochet et al. 2018, IntPhys V1.0, "Metadata"): ``block``,
    ``possible``, ``floor``, ``camera``, ``lights``, ``max_depth``,
    ``masks_grayscale`` ([gray value, name] pairs, or the uetorch saver's
    ``{gray: name}`` table) and the per-frame positions (``frames``; the
    uetorch saver names them ``steps``).
``"header"``
    The 2019 generator's ``{"header": {...}, "frames": [...]}`` (bootphon/intphys,
    ``tools/saver.py``): ``is_possible`` in the header; each frame carries a
    ``masks`` dict ``{name: gray value}`` whose gray values may change from frame
    to frame.
``"header_masks"``
    A 2019 header with a static ``masks`` dict ``{name: gray value}`` (the layout
    the 2018 baselines read, rronan/IntPhys-Baselines ``utils.get_mask_index``).
``"header_only"``
    The downloadable dev archive, cut to ``{"header": {"is_possible": ...}}``
    (bootphon/intphys ``Tools/make_archives.py``): labels, no mask names.
``"absent"``
    No status.json: the released test archive holds PNGs only (metadata kept
    back, ``make_archives.py``). Accepted in the test split only.

Any other JSON raises :class:`~psybench.intphys.ingest.layout.IntPhysFormatError`
naming the file and what was expected.

Mask names: where the gray values change per frame, every name gets one stable
value for the whole movie (1, 2, ... in order of first appearance; 0 = a pixel
no name claims) and :func:`mask_names` returns the per-frame lookup tables the
decoder applies (column ``mask_ids``: ``"static"``, ``"per_frame_remapped"`` or
``"unnamed"``).

Conditions (``visibility``, ``motion``, ``n_objects``) come from the status keys
(generator keys, the 2019 ``is_occluded``/``movement``/``nobjects`` or a
descriptive ``block`` name), else from a descriptive quadruplet folder name
(:func:`~psybench.intphys.ingest.layout.folder_conditions`), else they are missing
(NA), recorded in ``condition_source``. The labels (``possible``) and conditions
are joined to a model's predictions only when scoring.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.intphys.ingest.conditions import apply_condition_table, read_condition_table
from psybench.intphys.ingest.layout import _COND_RE, IntPhysFormatError, Movie, folder_conditions, list_movies

__all__ = ["read_status", "movie_metadata", "mask_names", "STATUS_VARIANTS", "tree_metadata"]

STATUS_VARIANTS = ("v1", "header", "header_masks", "header_only", "absent")
_BLOCK_IN_LABEL = re.compile(r"(O\d+)")


def read_status(movie_dir: str | os.PathLike, *, required: bool = True) -> dict[str, Any]:
    """Read ``status.json`` of one movie and flatten its variant into one dict.

    Parameters
    ----------
    movie_dir : path-like
    required : bool
        False: a missing file gives ``{"_variant": "absent"}`` (test split).

    Returns
    -------
    dict
        Header keys (or the flat keys), ``frames`` (list, per frame) if present,
        ``_variant`` (one of :data:`STATUS_VARIANTS`) and ``_path``.
    """
    path = Path(movie_dir) / "status.json"
    try:
        with open(path) as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        if not required:
            return {"_variant": "absent", "_path": str(path)}
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
        if set(raw) == {"header"} and set(raw["header"]) <= {"is_possible"}:
            flat["_variant"] = "header_only"
        elif isinstance(raw["header"].get("masks"), dict):
            flat["_variant"] = "header_masks"
        else:
            flat["_variant"] = "header"
    elif "possible" in raw:
        flat = dict(raw)
        flat["_variant"] = "v1"
    else:
        raise IntPhysFormatError(
            f"status file {path} is not a known IntPhys status: expected a flat V1.0 object with 'possible' "
            f"or a 2019 object with a 'header' (found keys {sorted(raw)[:8]})"
        )
    steps = flat.pop("steps", None)
    if "frames" not in flat and steps is not None:  # the uetorch saver's name, a list or {"1": ..., "2": ...}
        flat["frames"] = [steps[k] for k in sorted(steps, key=int)] if isinstance(steps, dict) else steps
    if "frames" in flat and not isinstance(flat["frames"], list):
        raise IntPhysFormatError(f"status file {path}: 'frames' is a {type(flat['frames']).__name__}, expected a list")
    flat["_path"] = str(path)
    return flat


def _pairs_from(value: Any, where: str) -> list[tuple[int, str]]:
    """[gray, name] pairs from a list of pairs, {gray: name} or {name: gray}."""
    try:
        if isinstance(value, dict):
            items = list(value.items())
            if all(str(k).lstrip("-").isdigit() for k, _ in items):
                pairs = [(int(k), str(v)) for k, v in items]
            else:
                pairs = [(int(v), str(k)) for k, v in items]
        else:
            pairs = [(int(v), str(n)) for v, n in value]
    except (TypeError, ValueError):
        raise IntPhysFormatError(
            f"{where} is not a list of [gray value, name] pairs nor a {{name: gray value}} dict"
        ) from None
    return sorted(pairs)


def mask_names(status: dict[str, Any]) -> tuple[list[tuple[int, str]] | None, str, np.ndarray | None]:
    """Mask names of one movie: ``(pairs, mask_ids, luts)``.

    Returns
    -------
    pairs : list of (gray value, name), or None when the file names no mask
    mask_ids : {"static", "per_frame_remapped", "unnamed"}
    luts : ndarray, shape (T, 256), uint8, or None
        For per-frame gray values: ``stable = luts[t][raw]``.
    """
    where = f"status file {status.get('_path')}"
    if "masks_grayscale" in status:
        return _pairs_from(status["masks_grayscale"], f"{where}: 'masks_grayscale'"), "static", None
    if isinstance(status.get("masks"), dict):
        return _pairs_from(status["masks"], f"{where}: header 'masks'"), "static", None
    frames = status.get("frames") or []
    per_frame = [f.get("masks") if isinstance(f, dict) else None for f in frames]
    if not per_frame or any(not isinstance(m, dict) for m in per_frame):
        return None, "unnamed", None
    if all(m == per_frame[0] for m in per_frame):  # the same gray values in every frame
        return _pairs_from(per_frame[0], f"{where}: frames[0]['masks']"), "static", None
    stable: dict[str, int] = {}
    for m in per_frame:
        for name, _ in sorted(m.items(), key=lambda kv: int(kv[1])):
            stable.setdefault(str(name), len(stable) + 1)
    if len(stable) > 255:
        raise IntPhysFormatError(f"{where}: {len(stable)} mask names, at most 255 fit uint8 masks")
    luts = np.zeros((len(per_frame), 256), np.uint8)
    for t, m in enumerate(per_frame):
        for name, gray in m.items():
            g = int(gray)
            if not 0 <= g <= 255:
                raise IntPhysFormatError(f"{where}: frame {t + 1} gives {name!r} gray value {g}, outside 0-255")
            luts[t, g] = stable[str(name)]
    return sorted((v, n) for n, v in stable.items()), "per_frame_remapped", luts


def _boolean(status: dict, key: str) -> bool:
    """``status[key]`` if it is a JSON boolean: ``"false"``, 0 or null are refused (``bool("false")`` is True)."""
    value = status[key]
    if not isinstance(value, bool):
        raise IntPhysFormatError(
            f"status file {status.get('_path', '?')}: {key!r} is {value!r} ({type(value).__name__}); "
            "expected a JSON boolean, true or false"
        )
    return value


def _possible(status: dict) -> Any:
    """The label: a JSON boolean (absent: unknown); anything else is an error naming the file."""
    for key in ("possible", "is_possible"):
        if key in status:
            return _boolean(status, key)
    return pd.NA


def _n_objects(status: dict, key: str) -> int:
    """``n_objects`` of a status file: an integer 1-3 (IntPhys V1.0), as a number or its digits."""
    value = status[key]
    ok = isinstance(value, int) and not isinstance(value, bool) or isinstance(value, str) and value.strip().isdigit()
    if not ok or not 1 <= int(value) <= 3:
        raise IntPhysFormatError(
            f"status file {status.get('_path', '?')}: {key!r} is {value!r}; expected the number of objects, 1, 2 or 3"
        )
    return int(value)


def _status_conditions(status: dict) -> dict[str, Any]:
    """Conditions from status keys; a factor the file does not give is absent from the result."""
    out: dict[str, Any] = {}
    for key in ("block", "block_name"):
        m = _COND_RE.search(str(status.get(key, "")))
        if m:
            out.update(visibility=m.group(2), motion=m.group(3), n_objects=int(m.group(4)))
    if "visibility" in status:
        out["visibility"] = str(status["visibility"])
    elif "is_occluded" in status:
        out["visibility"] = "occluded" if _boolean(status, "is_occluded") else "visible"
    for key in ("motion", "movement"):
        if key in status:
            out["motion"] = str(status[key])
            break
    for key in ("n_objects", "nobjects", "num_objects"):
        if key in status:
            out["n_objects"] = _n_objects(status, key)
            break
    return out


def movie_metadata(movie: Movie, status: dict[str, Any]) -> dict[str, Any]:
    """One metadata row for ``movie`` from its flattened status (:func:`read_status`)."""
    parts = movie.movie_id.split("/")
    if len(parts) == 3:
        block, index, run = parts
    else:
        m = _BLOCK_IN_LABEL.search(str(status.get("block", "")))
        block, index, run = (m.group(1) if m else "train"), parts[0], 0
    conds, source = _status_conditions(status), "status"
    if len(conds) < 3:
        folder = folder_conditions(movie)
        conds, source = ({**folder, **conds}, "folder") if folder else (conds, "none")
    if len(conds) < 3:
        conds, source = {}, "none"
    pairs, mask_ids, _ = mask_names(status)
    return {
        "movie": movie.movie_id,
        "split": movie.split,
        "block": block,
        "index": index,
        "run": int(run),
        "quadruplet": movie.quadruplet,
        "visibility": conds.get("visibility"),
        "motion": conds.get("motion"),
        "n_objects": conds.get("n_objects"),
        "possible": _possible(status),
        "max_depth": float(status["max_depth"]) if "max_depth" in status else float("nan"),
        "status_variant": status["_variant"],
        "masks_grayscale": None if pairs is None else json.dumps([[v, n] for v, n in pairs]),
        "folder": movie.folder,
        "condition_source": source,
        "mask_ids": mask_ids,
    }


def tree_metadata(root: str | os.PathLike, split: str, *, conditions: str | os.PathLike | None = None) -> pd.DataFrame:
    """One metadata row per movie of ``root/<split>`` (labels, conditions), read from status files and folders.

    Parameters
    ----------
    root : path-like
        IntPhys dataset root holding ``<split>/``.
    split : {"dev", "test", "train"}
    conditions : path-like, optional
        A condition table (``movie, block, visibility, motion, n_objects``) for
        movies whose status and folder name give none (``intphys.conditions``).

    Returns
    -------
    pandas.DataFrame
        The ingest stage's metadata columns that do not need the frames (``movie,
        split, block, index, run, quadruplet, visibility, motion, n_objects,
        possible, ...``), movies sorted as the tree lists them.
    """
    rows = [movie_metadata(m, read_status(m.path, required=split != "test")) for m in list_movies(root, split)]
    table = pd.DataFrame(rows)
    table["possible"] = table["possible"].astype("boolean")
    if conditions is not None:
        table = apply_condition_table(table, read_condition_table(conditions))
    table["n_objects"] = pd.to_numeric(table["n_objects"]).astype("Int64")
    return table
