"""Gaze file loaders: simple CSV, CRCNS eye-1, DIEM, GazeCom (``.coord``, ARFF) to raw samples (EyeLink: eyelink).

Every loader returns raw samples (:data:`~psybench.attention.gaze.columns.SAMPLE_COLUMNS`)
and raises :class:`GazeFormatError` naming the file and line of a malformed row.

Formats:

* simple CSV: header with at least ``subject,t,x,y`` (t in ms; optional ``movie``, ``valid``);
* CRCNS eye-1 (``*.e-ceyeS``, the crcns.org data set eye-1):
  ``key = value`` header lines (``period = 240Hz``, ``ppd``, ``trash`` samples to
  skip, optional ``cols`` naming the columns, e.g. ``cols = x y pd status *targetx
  *targety ...``, where asterisked columns appear only on some rows), ``#``
  comments, then rows; without ``cols`` the columns go by count: 2, 3, 4, 7 or 8
  (x y [pd] [status] [targetx targety ampl interval]), 7/8-column rows (saccade
  onsets) mixing with 3/4-column ones; status 2 (blink) and 3 (saccade in blink)
  are invalid;
* DIEM ``event_data`` txt (Mital, Smith, Hill & Henderson 2011, Cogn. Comput. 3),
  named ``<participant>.asc_<n>_<video>.txt`` as distributed (e.g.
  ``diem5s01.asc_15_arctic_bears_1066x710.txt``; a plain ``<participant>_<video>.txt``
  is read too): tab-separated rows ``frame lx ly ldil levent rx ry rdil revent``
  (CRLF line ends, no header) at 30 frames/s (frames counted from 1) in screen
  pixels; an eye is valid when its event flag is neither -1 (error/dropped, row
  ``0 0 0 -1``) nor 0 (blink, coordinates often 0 or off screen) and its
  coordinates are finite; the gaze is the mean of the valid eyes.
  ``screen_px``/``movie_px`` map screen to movie pixels for a direct caller (the gaze
  stage maps every format itself: :func:`psybench.attention.gaze.geometry.to_movie_pixels`);
* GazeCom (Dorr, Martinetz, Gegenfurtner & Barth 2010, J. Vis. 10(10)) ``.coord``:
  ``gaze <w> <h>``, ``geometry distance <d> width <w> height <h>`` (metres; the
  older unkeyed ``geometry distance <d> <w> <h>`` is read too), then samples
  ``<t in us> <x> <y> <confidence>`` (250 Hz); GazeCom ARFF (as distributed with its
  hand labels): ``%@METADATA <key> <value>`` lines, ``@ATTRIBUTE`` names (``time`` in
  us, ``x``, ``y``, ``confidence``), ``@DATA`` rows separated by commas.
Timestamps are kept as recorded (GazeCom's first sample is at 34 ms in a file that starts with the movie).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import GazeFormatError, sample_table
from psybench.attention.gaze.geometry import screen_to_movie
from psybench.units import frames_to_ms

__all__ = ["GazeFormatError", "load_csv", "load_crcns", "load_diem", "load_gazecom", "load_arff"]


def _float(path, lineno, token, what):
    try:
        return float(token)
    except ValueError:
        raise GazeFormatError(path, lineno, f"{what} {token!r} is not a number") from None


def load_csv(path: str | os.PathLike, *, movie: str | None = None) -> pd.DataFrame:
    """Load a simple CSV (``subject,t,x,y``; t in ms; optional ``movie``, ``valid``).

    Returns
    -------
    DataFrame with :data:`SAMPLE_COLUMNS`.

    Raises
    ------
    GazeFormatError
        Missing columns or a non-numeric value (naming the line; line 1 = header).
    """
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise GazeFormatError(path, None, f"not a CSV table ({exc})") from None
    df.columns = [c.strip().lower() for c in df.columns]
    missing = [c for c in ("subject", "t", "x", "y") if c not in df.columns]
    if missing:
        raise GazeFormatError(path, 1, f"missing column(s) {missing}; expected subject,t,x,y")
    vals = {}
    for col in ("t", "x", "y"):
        num = pd.to_numeric(df[col], errors="coerce")
        bad = num.isna() & df[col].notna() & ~df[col].str.strip().str.lower().isin(["nan", ""])
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise GazeFormatError(path, i + 2, f"column {col!r} value {df[col].iloc[i]!r} is not a number")
        vals[col] = num.to_numpy(float)
    valid = np.ones(len(df), bool)
    if "valid" in df.columns:
        valid = df["valid"].str.strip().str.lower().isin(["1", "true", "yes"]).to_numpy()
    mov = df["movie"] if "movie" in df.columns and movie is None else (movie or path.stem)
    out = sample_table(df["subject"].to_numpy(), "", vals["t"], vals["x"], vals["y"], valid)
    out["movie"] = mov if isinstance(mov, str) else mov.astype(str).to_numpy()
    return out


#: DIEM event flags: -1 error, 0 blink, 1 fixation, 2 saccade (Mital et al. 2011).
DIEM_EVENTS = {-1.0: "error", 0.0: "blink", 1.0: "fixation", 2.0: "saccade"}

_HEADER_RE = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*(.*?)\s*$")

#: DIEM's own file names: ``<participant>.asc_<n>_<video>`` (stem), e.g. ``diem5s01.asc_15_arctic_bears_1066x710``.
_DIEM_NAME_RE = re.compile(r"^(?P<subject>[^._]+)\.asc_(?P<n>\d+)_(?P<movie>.+)$")


def load_crcns(path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None) -> pd.DataFrame:
    """Load one CRCNS eye-1 ``*.e-ceyeS`` file (one subject, one clip).

    The sampling period comes from ``period = <rate>Hz`` (240 Hz if absent); the
    first ``trash`` samples are dropped; times are ``i * 1000 / rate`` ms from the
    first kept sample. Subject and movie default to the data set's own layout
    ``data-orig/<subject>/<clip>.e-ceyeS`` (also ``data-mtv``, or any parent folder
    named by upper-case initials such as ``JZ``): the folder is the subject and the
    whole stem the clip, since clip names carry hyphens (``tv-news01``); otherwise
    to the two parts of the stem ``<subject>-<clip>`` (or the whole stem).

    Returns
    -------
    DataFrame with :data:`SAMPLE_COLUMNS` plus ``status`` and attribute
    ``attrs["px_per_deg"]`` when the header gives ``ppd``.
    """
    path = Path(path)
    header: dict[str, str] = {}
    rows: list[list[float]] = []
    layout = None  # (column names of the kept base columns, allowed row lengths)
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = _HEADER_RE.match(line)
            if m:
                header[m.group(1).lower()] = m.group(2)
                if m.group(1).lower() == "cols":
                    layout = _crcns_cols(path, lineno, m.group(2))
                continue
            toks = line.split()
            if layout is None:
                layout = _crcns_by_count(path, lineno, len(toks))
            names, allowed = layout
            if len(toks) not in allowed:
                raise GazeFormatError(path, lineno, f"{len(toks)} columns where the layout {names} allows "
                                                    f"{sorted(allowed)}")
            rows.append([_float(path, lineno, t, "value") for t in toks[: len(names)]])
    if not rows:
        raise GazeFormatError(path, None, "no samples")
    rate = 240.0
    if "period" in header:
        m = re.match(r"^([0-9.]+)\s*hz$", header["period"].strip().lower())
        if not m:
            raise GazeFormatError(path, None, f"period {header['period']!r} is not '<rate>Hz'")
        rate = float(m.group(1))
    trash = int(float(header.get("trash", 0) or 0))
    data = np.asarray(rows, float)[trash:]
    col = {n: i for i, n in enumerate(layout[0])}
    x, y = data[:, col["x"]], data[:, col["y"]]
    status = data[:, col["status"]].astype(int) if "status" in col else np.zeros(len(data), int)
    valid = ~np.isin(status, (2, 3))
    subj, mov = _crcns_names(path)
    df = sample_table(subject or subj, movie or mov, np.arange(len(data)) * 1000.0 / rate, x, y, valid)
    df["status"] = status
    if "ppd" in header:
        df.attrs["px_per_deg"] = _float(path, None, header["ppd"], "ppd")
    return df


def _crcns_names(path: Path) -> tuple[str, str]:
    """Subject and clip of a CRCNS file: ``data-orig/<subject>/<clip>.e-ceyeS`` or ``<subject>-<clip>.e-ceyeS``."""
    stem = path.name.split(".")[0]
    if path.parent.parent.name in ("data-orig", "data-mtv") or re.fullmatch(r"[A-Z]{2,3}", path.parent.name):
        return path.parent.name, stem
    parts = stem.split("-", 1)
    return parts[0], (parts[1] if len(parts) == 2 else stem)


def _crcns_cols(path, lineno, value) -> tuple[list[str], set[int]]:
    """Layout from ``cols = x y pd status *targetx *targety ...``.

    Asterisked columns (iLab's markEye: filled only at saccade onsets) may be absent
    from a row; the columns before the first asterisk are kept.
    """
    names = value.replace(",", " ").lower().split()
    n_base = next((i for i, n in enumerate(names) if n.startswith("*")), len(names))
    base = names[:n_base]
    if "x" not in base or "y" not in base:
        raise GazeFormatError(path, lineno, f"cols = {value!r} names no 'x' and 'y' column before the '*' columns")
    return base, {n_base, len(names)}


def _crcns_by_count(path, lineno, n) -> tuple[list[str], set[int]]:
    """Layout of a file without ``cols``: 2 x y; 3 + status; 4 + pd; 7 / 8 add 4 saccade-target columns."""
    layouts = {2: ["x", "y"], 3: ["x", "y", "status"], 4: ["x", "y", "pd", "status"]}
    base = {7: 3, 8: 4}.get(n, n)
    if base not in layouts:
        raise GazeFormatError(path, lineno, f"{n} columns; CRCNS rows have 2, 3, 4, 7 or 8")
    return layouts[base], {base, base + 4}


def load_diem(
    path: str | os.PathLike,
    *,
    subject: str | None = None,
    movie: str | None = None,
    frames_per_s: float = 30.0,
    screen_px: tuple[float, float] | None = None,
    movie_px: tuple[float, float] | None = None,
    fit: str = "contain",
) -> pd.DataFrame:
    """Load a DIEM ``event_data/<participant>.asc_<n>_<video>.txt`` file (one row per frame).

    Subject and movie default to ``<participant>`` and ``<video>`` of that name (or,
    for a name without ``.asc_<n>_``, the parts before and after the first ``_``).
    Time of row with frame number ``f`` (1-based) is ``(f - 1) * 1000 / frames_per_s``.
    An eye's sample is invalid when its event flag is -1 (error) or 0 (blink). With
    ``screen_px`` and ``movie_px`` (width, height) the screen coordinates are mapped
    to the movie's pixels (the movie shown centred, scaled per ``fit``).
    """
    path = Path(path)
    frames, xs, ys, valid = [], [], [], []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            toks = line.split()
            if len(toks) != 9:
                raise GazeFormatError(
                    path, lineno, f"{len(toks)} fields; DIEM rows have 9 (frame lx ly ldil levent rx ry rdil revent)"
                )
            v = [_float(path, lineno, t, "field") for t in toks]
            eyes = [(v[1], v[2], v[4]), (v[5], v[6], v[8])]
            for ev in (v[4], v[8]):
                if ev not in DIEM_EVENTS:
                    raise GazeFormatError(path, lineno, f"event flag {ev:g} is not one of {sorted(DIEM_EVENTS)}")
            good = [(ex, ey) for ex, ey, ev in eyes if ev > 0 and np.isfinite(ex) and np.isfinite(ey)]
            frames.append(v[0])
            if good:
                xs.append(np.mean([g[0] for g in good]))
                ys.append(np.mean([g[1] for g in good]))
                valid.append(True)
            else:
                xs.append(np.nan)
                ys.append(np.nan)
                valid.append(False)
    if not frames:
        raise GazeFormatError(path, None, "no samples")
    stem = path.stem
    named = _DIEM_NAME_RE.match(stem)
    if named:
        subj, mov = named.group("subject"), named.group("movie")
    else:
        subj, _, mov = stem.partition("_")
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    if (screen_px is None) != (movie_px is None):
        raise ValueError(f"DIEM file {path}: give both screen_px and movie_px to map screen to movie pixels")
    if screen_px is not None:
        xs, ys = screen_to_movie(xs, ys, screen_px, movie_px, fit=fit)
    return sample_table(
        subject or subj, movie or mov or stem, frames_to_ms(np.asarray(frames) - 1, frames_per_s), xs, ys, valid
    )


def load_gazecom(
    path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None, min_confidence: float = 0.5
) -> pd.DataFrame:
    """Load a GazeCom ``.coord`` file (``gaze w h``, ``geometry distance d width w height h``, samples).

    Samples (``t_us x y confidence``) with ``confidence < min_confidence`` are
    invalid; times are kept as recorded (us -> ms). ``attrs`` carries the screen size
    in px (``screen_px``), the geometry in metres (``geometry``: distance, width,
    height) and in mm (``screen_mm``: ``width_mm``, ``height_mm``, ``distance_mm``).
    """
    path = Path(path)
    t, xs, ys, conf = [], [], [], []
    screen = geometry = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith(("#", "%")):
                continue
            toks = line.split()
            if toks[0] == "gaze":
                if len(toks) != 3:
                    raise GazeFormatError(path, lineno, "'gaze' line must be 'gaze <width> <height>'")
                screen = [_float(path, lineno, s, "size") for s in toks[1:]]
                continue
            if toks[0] == "geometry":
                geometry = _geometry(path, lineno, toks[1:])
                continue
            if len(toks) != 4:
                raise GazeFormatError(
                    path, lineno, f"{len(toks)} fields; GazeCom samples are '<t_us> <x> <y> <confidence>'"
                )
            a, b, c, d = (_float(path, lineno, s, "field") for s in toks)
            t.append(a)
            xs.append(b)
            ys.append(c)
            conf.append(d)
    if screen is None:
        raise GazeFormatError(path, None, "no 'gaze <width> <height>' line")
    if not t:
        raise GazeFormatError(path, None, "no samples")
    t = np.asarray(t) / 1000.0
    stem = path.stem
    df = sample_table(subject or stem, movie or stem, t, xs, ys, np.asarray(conf) >= min_confidence)
    df.attrs["screen_px"] = screen
    df.attrs["geometry"] = geometry
    if geometry:
        df.attrs["screen_mm"] = {f"{k}_mm": 1000.0 * v for k, v in geometry.items()
                                 if k in ("width", "height", "distance")}
    return df


def _geometry(path, lineno, toks) -> dict[str, float]:
    """``distance 0.45 width 0.4 height 0.225`` (key-value pairs) or ``distance 0.45 0.4 0.225``."""
    if toks and all(t.isalpha() for t in toks[0::2]) and len(toks) % 2 == 0:
        return {k.lower(): _float(path, lineno, v, f"geometry {k}") for k, v in zip(toks[0::2], toks[1::2])}
    if toks and toks[0] == "distance" and len(toks) == 4:
        vals = [_float(path, lineno, v, "geometry value") for v in toks[1:]]
        return dict(zip(("distance", "width", "height"), vals))
    raise GazeFormatError(path, lineno, f"geometry line {' '.join(toks)!r} is not 'distance <d> width <w> height <h>'")


def load_arff(
    path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None, min_confidence: float = 0.5
) -> pd.DataFrame:
    """Load a GazeCom ARFF recording (``@ATTRIBUTE time/x/y/confidence``, ``@DATA`` rows).

    Times are in us as recorded (-> ms); ``%@METADATA`` values (``width_px``,
    ``height_px``, ``distance_mm``, ...) go to ``attrs["metadata"]``, the screen
    size in px to ``attrs["screen_px"]`` and in mm to ``attrs["screen_mm"]``.
    Extra attributes (hand labels) are ignored.
    """
    path = Path(path)
    meta: dict[str, float] = {}
    attrs: list[str] = []
    rows: list[list[float]] = []
    in_data = False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if line.lower().startswith("%@metadata"):
                parts = line.split()
                if len(parts) != 3:
                    raise GazeFormatError(path, lineno, "metadata line must be '%@METADATA <key> <value>'")
                meta[parts[1].lower()] = _float(path, lineno, parts[2], f"metadata {parts[1]}")
                continue
            if not line or line.startswith("%"):
                continue
            low = line.lower()
            if low.startswith("@attribute"):
                parts = line.split()
                if len(parts) < 3:
                    raise GazeFormatError(path, lineno, "attribute line must be '@ATTRIBUTE <name> <type>'")
                attrs.append(parts[1].lower())
            elif low.startswith("@data"):
                missing = [a for a in ("time", "x", "y") if a not in attrs]
                if missing:
                    raise GazeFormatError(path, lineno, f"ARFF lacks attribute(s) {missing}")
                in_data = True
            elif low.startswith("@relation"):
                continue
            elif not in_data:
                raise GazeFormatError(path, lineno, "data row before '@DATA'")
            else:
                toks = [t.strip() for t in line.split(",")]
                if len(toks) != len(attrs):
                    raise GazeFormatError(path, lineno, f"{len(toks)} fields where @ATTRIBUTE declares {len(attrs)}")
                rows.append([_float(path, lineno, toks[attrs.index(a)], a) if toks[attrs.index(a)] != "?"
                             else np.nan for a in ("time", "x", "y")]
                            + [_float(path, lineno, toks[attrs.index("confidence")], "confidence")
                               if "confidence" in attrs else 1.0])
    if not rows:
        raise GazeFormatError(path, None, "no samples")
    d = np.asarray(rows, float)
    stem = path.stem
    df = sample_table(subject or stem, movie or stem, d[:, 0] / 1000.0, d[:, 1], d[:, 2], d[:, 3] >= min_confidence)
    df.attrs["metadata"] = meta
    if "width_px" in meta and "height_px" in meta:
        df.attrs["screen_px"] = [meta["width_px"], meta["height_px"]]
    df.attrs["screen_mm"] = {k: meta[k] for k in ("width_mm", "height_mm", "distance_mm") if k in meta}
    return df

