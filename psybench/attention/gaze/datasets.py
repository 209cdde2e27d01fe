"""Eye-tracking datasets published through pymovements, read with pymovements' own definitions.

pymovements (Krakowczyk et al. 2023, ETRA '23) keeps a library of public datasets
(``pymovements.DatasetLibrary``: GazeBase, JuDo1000, HBN, ...), each with the layout of
its gaze files (separator, time column and unit, pixel or degree columns, column
renames) and its experiment (screen size in px and cm, viewing distance, coordinate
origin, sampling rate). :func:`load_pymovements` reads a file of such a dataset with
pymovements' own reader (``pymovements.gaze.from_csv``) and that definition, so a
dataset pymovements adds or corrects needs no change here; the definition's screen
becomes the file's screen (``attrs["screen_px"]``, ``attrs["screen_mm"]``), used where
the config gives none (:func:`~psybench.attention.gaze.geometry.recording_screen`).

Positions: pixel columns are screen pixels from the definition's ``origin`` (``upper
left``, or ``center``: shifted to the upper left by pymovements' centre ``((W - 1) / 2,
(H - 1) / 2)``); degree columns are turned into pixels from the upper left by
pymovements' own ``deg2pix`` with the definition's screen and distance.
Several eyes (pymovements orders components left, right, cyclopean) give the
cyclopean pair when there is one, else the mean of the finite eyes. A ``validity``
column (GazeBase's ``val``, renamed by the definition) marks samples other than 0
invalid (Griffith, Lohr, Abdulin & Komogortsev 2021, Sci. Data 8: ``val`` 0 is a valid
sample). A file without a time column (GazeOnFaces, GazeGraph) is taken at the
definition's sampling rate.

:func:`detect_dataset` recognises a file by its header: the dataset whose definition
declares exactly the file's columns (or, failing that, whose time and position columns
are all present, the most specific first); ``gaze_format: auto`` uses it for ``.csv``
and ``.tsv`` files that are not the simple ``subject,t,x,y`` layout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import GazeFormatError, sample_table

__all__ = ["PREFIX", "dataset_names", "dataset_definition", "detect_dataset", "load_pymovements"]

#: ``gaze_format`` of a pymovements dataset: ``pymovements:<name>``, e.g. ``pymovements:GazeBase``.
PREFIX = "pymovements:"


def dataset_names() -> list[str]:
    """The datasets of pymovements' library."""
    import pymovements as pm

    return list(pm.DatasetLibrary.names())


def dataset_definition(name: str):
    """pymovements' definition of dataset ``name`` (case-insensitive); ``ValueError`` naming the known ones."""
    import pymovements as pm

    names = dataset_names()
    match = [n for n in names if n.lower() == str(name).lower()]
    if not match:
        raise ValueError(f"pymovements has no dataset {name!r}; known: {names}")
    return pm.DatasetLibrary.get(match[0])


def _gaze_resource(definition, path=None):
    """The definition's gaze-file resource read by ``from_csv``; ``ValueError`` naming the dataset otherwise."""
    gaze = [r for r in definition.resources if r.content == "gaze"]
    if not gaze:
        raise ValueError(f"pymovements dataset {definition.name} has no gaze files (only "
                         f"{sorted({r.content for r in definition.resources})})")
    res = gaze[0]
    kwargs = res.load_kwargs or {}
    where = f" for {path}" if path is not None else ""
    if res.load_function == "from_asc" or str(res.filename_pattern).lower().endswith(".asc"):
        raise ValueError(f"pymovements dataset {definition.name}{where}: its gaze files are EyeLink .asc "
                         "recordings; load them with gaze_format eyelink")
    if res.load_function not in (None, "from_csv"):
        raise ValueError(f"pymovements dataset {definition.name}{where}: its gaze files are read by "
                         f"{res.load_function}, not as a table")
    if not (kwargs.get("pixel_columns") or kwargs.get("position_columns")):
        raise ValueError(f"pymovements dataset {definition.name}{where} defines no pixel or position columns")
    return res


def _declared(kwargs: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The columns a definition declares for its files (all of them, when it lists them) and those it needs."""
    read = kwargs.get("read_csv_kwargs") or {}
    need = {c for c in [kwargs.get("time_column"), *(kwargs.get("pixel_columns") or []),
                        *(kwargs.get("position_columns") or [])] if c}
    overrides = read.get("schema_overrides")
    declared = set(read.get("columns") or (overrides if isinstance(overrides, dict) else []))
    return declared or need, need


def detect_dataset(path: str | os.PathLike) -> str | None:
    """The pymovements dataset whose layout the file's header row has, or None.

    Raises
    ------
    GazeFormatError
        Naming the file and the candidates when several datasets fit equally.
    """
    import pymovements as pm

    path = Path(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = next((ln.rstrip("\r\n") for ln in fh if ln.strip()), "")
    scored = []
    for name in dataset_names():
        definition = pm.DatasetLibrary.get(name)
        try:
            res = _gaze_resource(definition)
        except ValueError:
            continue
        kwargs = res.load_kwargs or {}
        read = kwargs.get("read_csv_kwargs") or {}
        if read.get("has_header") is False:
            continue
        header = {c.strip() for c in first.split(read.get("separator", ","))}
        declared, need = _declared(kwargs)
        if need <= header:
            scored.append(((declared == header, len(need)), name))
    if not scored:
        return None
    best = max(s for s, _ in scored)
    top = [n for s, n in scored if s == best]
    if len(top) > 1:
        raise GazeFormatError(path, 1, f"the header fits pymovements datasets {top} equally; set gaze_format to "
                                       f"one of {[PREFIX + n for n in top]}")
    return top[0]


def load_pymovements(
    path: str | os.PathLike, *, dataset: str, subject: str | None = None, movie: str | None = None,
    origin: str | None = None,
) -> pd.DataFrame:
    """Load one gaze file of pymovements dataset ``dataset`` with pymovements' reader and definition.

    Parameters
    ----------
    path : path-like
    dataset : str
        A name of ``pymovements.DatasetLibrary`` (:func:`dataset_names`).
    subject, movie : str, optional
        Default: the file stem.
    origin : {'upper left', 'center'}, optional
        Origin of pixel positions; default: the definition's.

    Returns
    -------
    DataFrame with :data:`~psybench.attention.gaze.columns.SAMPLE_COLUMNS`, x/y in screen
    pixels; ``attrs``: ``screen_px``, ``screen_mm``, ``sampling_rate_hz``, ``dataset``.

    Raises
    ------
    ValueError
        An unknown dataset or one whose files are not tables; :class:`GazeFormatError`
        (naming the file) for a file pymovements cannot read with the definition.
    """
    import pymovements as pm

    path = Path(path)
    definition = dataset_definition(dataset)
    res = _gaze_resource(definition, path)
    experiment = definition.experiment
    try:
        gaze = pm.gaze.from_csv(path, experiment=experiment, **(res.load_kwargs or {}))
    except Exception as exc:  # polars and pymovements raise many types for a file off the layout
        raise GazeFormatError(path, None, f"not readable as pymovements dataset {definition.name} "
                                          f"({type(exc).__name__}: {exc})") from None
    s = gaze.samples
    screen = experiment.screen if experiment is not None else None
    rate = experiment.sampling_rate if experiment is not None else None
    attrs: dict[str, Any] = {"dataset": definition.name, "sampling_rate_hz": rate}
    if screen is not None and screen.width_px and screen.height_px:
        attrs["screen_px"] = [float(screen.width_px), float(screen.height_px)]
        attrs["screen_mm"] = {k: 10.0 * float(v) for k, v in (("width_mm", screen.width_cm),
                              ("height_mm", screen.height_cm), ("distance_mm", screen.distance_cm)) if v}
    if "time" in s.columns:
        t = s["time"].to_numpy().astype(float)
    elif rate:
        t = np.arange(len(s)) * 1000.0 / float(rate)
    else:
        raise GazeFormatError(path, None, f"pymovements dataset {definition.name} gives neither a time column nor "
                                          "a sampling rate")
    from_degrees = "pixel" not in s.columns
    if from_degrees:  # pymovements' own conversion with the definition's screen, to pixels from the upper left
        try:
            gaze.deg2pix(pixel_origin="upper left")
        except Exception as exc:
            raise ValueError(f"pymovements dataset {definition.name} for {path}: its positions in degrees cannot be "
                             f"turned into pixels ({type(exc).__name__}: {exc})") from None
        s = gaze.samples
    x, y = _one_eye(np.array(s["pixel"].to_list(), dtype=float).reshape(len(s), -1))
    if not from_degrees and (origin or (screen.origin if screen is not None else None) or "upper left") == "center":
        if "screen_px" not in attrs:
            raise ValueError(f"pymovements dataset {definition.name} for {path}: a centred origin needs the "
                             "screen size")
        # pymovements' centre of a W x H screen is ((W - 1) / 2, (H - 1) / 2) from the upper left
        x, y = x + (attrs["screen_px"][0] - 1) / 2, y + (attrs["screen_px"][1] - 1) / 2
    valid = np.ones(len(s), bool)
    if "validity" in s.columns:
        valid = s["validity"].to_numpy().astype(float) == 0
    out = sample_table(subject or path.stem, movie or path.stem, t, x, y, valid)
    out.attrs.update(attrs)
    return out


def _one_eye(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x, y of one eye from pymovements' components: (x, y); (xl, yl, xr, yr): the mean of the finite eyes;
    (xl, yl, xr, yr, xc, yc): the cyclopean pair."""
    n = xy.shape[1]
    if n == 2:
        return xy[:, 0], xy[:, 1]
    if n == 6:
        return xy[:, 4], xy[:, 5]
    if n != 4:
        raise ValueError(f"{n} position components; pymovements gives 2, 4 or 6")
    eyes = xy.reshape(len(xy), 2, 2)
    ok = np.isfinite(eyes).all(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok[..., None], eyes, 0.0).sum(axis=1) / ok.sum(axis=1)[:, None]
    return mean[:, 0], mean[:, 1]
