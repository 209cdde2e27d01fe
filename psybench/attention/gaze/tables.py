"""Gaze in any CSV/TSV layout, read through a column mapping; screen-to-movie geometry.

:func:`load_table` reads a delimited table whose column names, units and screen
geometry are given as data (``attention.movies.<movie>.gaze_columns`` and ``screen``
in the config), so a new dataset's export loads without code. The mapping
(:data:`TABLE_KEYS`):

=================  ================================================================
``time``           column of the sample time; without it, rows are samples at a fixed
                   rate: each subject's ``i``-th row at ``i * 1000 / sampling_rate_hz`` ms
``time_unit``      ``ms`` (default), ``s``, ``us`` or ``samples`` (then ``sampling_rate_hz``)
``sampling_rate_hz``  the rate of ``samples`` or of a table without ``time`` (default:
                   the file's ``## Sample Rate:`` line, SMI)
``x``, ``y``       column(s) of the position; a list (e.g. left and right eye) is
                   averaged over its finite entries
``position_unit``  ``px`` (default, screen pixels from the top left), ``deg`` (visual
                   angle from the screen centre, y up or down per ``y_up``) or
                   ``norm`` (fractions of the screen, from the top left)
``y_up``           true when y grows upwards (default false)
``subject``        column of the subject (default: the file stem)
``movie``          column of the movie (default: the movie of the config entry)
``valid``          column of a validity flag, and ``valid_values`` (default ``[1]``)
                   the values that mean valid
``sep``            field separator (default: tab for ``.tsv``/``.txt``, else comma)
``header``         false when the file has no header row; columns are then 0-based
                   indices
``comment``        lines starting with it are skipped wherever they are (default ``#``;
                   SMI iView/BeGaze exports open with ``## key: value`` lines)
``keep_rows``      ``{column: .., values: [..]}``: only rows with one of these values
                   are samples (SMI: ``{column: Type, values: [SMP]}`` drops ``MSG`` rows)
=================  ================================================================

SMI's ``##`` header (iView X IDF Converter, BeGaze) states the sampling rate (``Sample
Rate``), the screen in px (``Calibration Area``), its size in mm (``Stimulus Dimension
[mm]``) and the viewing distance (``Head Distance [mm]``); they go to ``attrs``
(``sampling_rate_hz``, ``screen_px``, ``screen_mm``) and are used where the config
gives none (:func:`~psybench.attention.gaze.geometry.recording_screen`).

Screen geometry (``screen``): ``width_px``, ``height_px`` and, for ``deg``, ``width_mm``
and ``distance_mm``; ``movie_px`` (width, height of the movie) with ``fit``
(``contain``: scaled to fit and centred, as DIEM and GazeCom present movies;
``native``: centred unscaled; ``stretch``: scaled to fill the screen) maps screen
pixels to movie pixels (:func:`~psybench.attention.gaze.geometry.screen_to_movie`) for a direct
caller; the gaze stage passes only the screen's size here and maps every format's
positions itself (:func:`~psybench.attention.gaze.geometry.to_movie_pixels`). Timestamps
are kept as recorded.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import GazeFormatError, sample_table
from psybench.attention.gaze.geometry import deg_to_screen_px, screen_to_movie

__all__ = ["TABLE_KEYS", "load_table"]

TABLE_KEYS = frozenset({
    "time", "time_unit", "sampling_rate_hz", "x", "y", "position_unit", "y_up", "subject", "movie", "valid",
    "valid_values", "sep", "header", "comment", "keep_rows",
})
#: SMI's ``## key: value`` header lines (iView X IDF Converter and BeGaze text exports).
_SMI_LINE = re.compile(r"^##\s*(?P<key>[^:\t]+?)\s*:\s*(?P<value>.*?)\s*$")
_TIME_MS = {"ms": 1.0, "s": 1000.0, "us": 1e-3}


def _numeric(df, col, path, linenos):
    raw = df[col]
    num = pd.to_numeric(raw, errors="coerce")
    text = raw.astype(str).str.strip().str.lower()
    bad = num.isna() & raw.notna() & ~text.isin(["nan", "", "na", "none", "null", "."])
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise GazeFormatError(path, int(linenos[i]), f"column {col!r} value {raw.iloc[i]!r} is not a number")
    return num.to_numpy(float)


def _read_lines(path: Path, comment: str | None) -> tuple[str, list[int], dict[str, Any]]:
    """The table's text without blank and comment lines, the file's line number of each kept line, and what
    SMI's ``##`` header lines state (sampling rate, screen px and mm)."""
    kept, linenos, meta = [], [], {}
    try:
        with open(path, encoding="utf-8", errors="strict") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                if comment and raw.lstrip().startswith(comment):
                    m = _SMI_LINE.match(raw.strip())
                    if m:
                        meta[m.group("key").lower()] = m.group("value")
                    continue
                kept.append(raw if raw.endswith("\n") else raw + "\n")
                linenos.append(lineno)
    except UnicodeDecodeError as exc:
        raise GazeFormatError(path, None, f"not a text table ({exc})") from None
    return "".join(kept), linenos, _smi_attrs(path, meta)


def _smi_attrs(path: Path, meta: Mapping[str, str]) -> dict[str, Any]:
    """``attrs`` from SMI's header: ``Sample Rate``, ``Calibration Area`` (px), ``Stimulus Dimension [mm]``,
    ``Head Distance [mm]``."""
    def numbers(key):
        try:
            return [float(v) for v in meta[key].replace(",", ".").split()] if key in meta else []
        except ValueError:
            raise GazeFormatError(path, None, f"header line '## {key}: {meta[key]}' is not numbers") from None

    attrs: dict[str, Any] = {}
    rate, area = numbers("sample rate"), numbers("calibration area")
    size, dist = numbers("stimulus dimension [mm]"), numbers("head distance [mm]")
    if rate:
        attrs["sampling_rate_hz"] = rate[0]
    if len(area) == 2:
        attrs["screen_px"] = area
    mm = dict(zip(("width_mm", "height_mm"), size[:2]))
    if dist:
        mm["distance_mm"] = dist[0]
    if mm:
        attrs["screen_mm"] = mm
    return attrs


def load_table(
    path: str | os.PathLike,
    *,
    columns: Mapping[str, Any],
    screen: Mapping[str, Any] | None = None,
    movie: str | None = None,
) -> pd.DataFrame:
    """Load gaze samples from a delimited table through a column mapping.

    Parameters
    ----------
    path : path-like
    columns : mapping
        The column mapping (module docstring; keys :data:`TABLE_KEYS`).
    screen : mapping, optional
        Screen geometry and screen-to-movie mapping (module docstring).
    movie : str, optional
        Movie name when the table has no movie column.

    Returns
    -------
    DataFrame with :data:`~psybench.attention.gaze.columns.SAMPLE_COLUMNS`: t in ms
    as recorded, x/y in movie pixels (screen pixels without ``screen.movie_px``).

    Raises
    ------
    ValueError
        An unknown mapping key or unit; :class:`GazeFormatError` (naming file and
        line) for a missing column or a non-numeric value.
    """
    path = Path(path)
    unknown = sorted(set(columns) - TABLE_KEYS)
    if unknown:
        raise ValueError(f"gaze_columns for {path}: unknown key(s) {unknown}; known: {sorted(TABLE_KEYS)}")
    for key in ("x", "y"):
        if key not in columns:
            raise ValueError(f"gaze_columns for {path}: '{key}' (column name) is required")
    header = bool(columns.get("header", True))
    sep = columns.get("sep") or ("\t" if path.suffix.lower() in (".tsv", ".txt") else ",")
    text, linenos, attrs = _read_lines(path, columns.get("comment", "#"))
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, header=0 if header else None, skipinitialspace=True,
                         skip_blank_lines=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise GazeFormatError(path, None, f"not a delimited table ({exc})") from None
    if header:
        df.columns = [str(c).strip() for c in df.columns]
    rows = np.asarray(linenos[1:] if header else linenos, int)  # the file's line of each row
    rate = columns.get("sampling_rate_hz") or attrs.get("sampling_rate_hz")
    if columns.get("time") is None and not rate:
        raise ValueError(f"gaze_columns for {path}: 'time' (column name) or 'sampling_rate_hz' (rows at a fixed "
                         "rate) is required; the file states no '## Sample Rate'")

    def names(key):
        v = columns[key]
        return list(v) if isinstance(v, (list, tuple)) else [v]

    keep = columns.get("keep_rows")
    if keep is not None and (not isinstance(keep, Mapping) or set(keep) != {"column", "values"}):
        raise ValueError(f"gaze_columns for {path}: keep_rows must be {{column: <name>, values: [...]}}, got {keep!r}")
    keys = [k for k in ("time", "x", "y", "subject", "movie", "valid") if columns.get(k) is not None]
    needed = [c for k in keys for c in names(k)] + ([keep["column"]] if keep else [])
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise GazeFormatError(path, int(linenos[0]) if header and linenos else None,
                              f"missing column(s) {missing}; the table has {list(df.columns)}")
    if keep:
        mask = df[keep["column"]].astype(str).str.strip().isin([str(v) for v in keep["values"]]).to_numpy()
        df, rows = df[mask].reset_index(drop=True), rows[mask]
    unit = columns.get("time_unit", "ms")
    if columns.get("time") is None:  # rows at a fixed rate, counted per subject
        subj = df[columns["subject"]].astype(str) if columns.get("subject") is not None else pd.Series(0, df.index)
        t = subj.groupby(subj, sort=False).cumcount().to_numpy(float) * 1000.0 / float(rate)
    elif unit == "samples":
        if not rate:
            raise ValueError(f"gaze_columns for {path}: time_unit 'samples' needs sampling_rate_hz")
        t = _numeric(df, columns["time"], path, rows) * 1000.0 / float(rate)
    elif unit in _TIME_MS:
        t = _numeric(df, columns["time"], path, rows) * _TIME_MS[unit]
    else:
        raise ValueError(f"gaze_columns for {path}: time_unit {unit!r} is not one of ms, s, us, samples")
    x = _mean_finite([_numeric(df, c, path, rows) for c in names("x")])
    y = _mean_finite([_numeric(df, c, path, rows) for c in names("y")])
    geo = dict(screen or {})  # the file's own screen (SMI's header) where the config gives none
    if "screen_px" in attrs and not ("width_px" in geo and "height_px" in geo):
        geo["width_px"], geo["height_px"] = attrs["screen_px"]
    geo.update({k: v for k, v in (attrs.get("screen_mm") or {}).items() if k not in geo})
    x, y = _to_screen_px(x, y, columns, geo, path)
    screen = screen or {}
    if "movie_px" in screen:
        x, y = screen_to_movie(x, y, (screen["width_px"], screen["height_px"]), screen["movie_px"],
                               fit=screen.get("fit", "contain"))
    valid = np.ones(len(df), bool)
    if columns.get("valid") is not None:
        ok = {str(v).strip().lower() for v in columns.get("valid_values", [1])}
        raw = df[columns["valid"]].astype(str).str.strip().str.lower()
        num = pd.to_numeric(raw, errors="coerce")
        valid = (raw.isin(ok) | num.isin([float(v) for v in ok if _isfloat(v)])).to_numpy()
    subject = df[columns["subject"]].astype(str).to_numpy() if columns.get("subject") is not None else path.stem
    out = sample_table(subject, movie or path.stem, t, x, y, valid)
    if columns.get("movie") is not None and movie is None:
        out["movie"] = df[columns["movie"]].astype(str).to_numpy()
    out.attrs.update(attrs)
    return out


def _mean_finite(arrays) -> np.ndarray:
    """Mean over the finite entries of each sample (e.g. two eyes); NaN when none is finite."""
    a = np.stack(arrays)
    fin = np.isfinite(a)
    n = fin.sum(0)
    return np.where(n > 0, np.where(fin, a, 0.0).sum(0) / np.maximum(n, 1), np.nan)


def _isfloat(v) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _to_screen_px(x, y, columns, screen, path):
    unit = columns.get("position_unit", "px")
    y_up = bool(columns.get("y_up", False))
    if unit == "deg":
        return deg_to_screen_px(x, y, screen, y_up=y_up)
    if unit == "norm":
        if "width_px" not in screen or "height_px" not in screen:
            raise ValueError(f"gaze_columns for {path}: position_unit 'norm' needs screen width_px and height_px")
        y = 1 - y if y_up else y
        return x * float(screen["width_px"]), y * float(screen["height_px"])
    if unit != "px":
        raise ValueError(f"gaze_columns for {path}: position_unit {unit!r} is not one of px, deg, norm")
    if y_up:
        if "height_px" not in screen:
            raise ValueError(f"gaze_columns for {path}: y_up with pixels needs screen height_px")
        y = float(screen["height_px"]) - y
    return x, y
