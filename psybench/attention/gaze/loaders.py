"""Gaze file loaders: simple CSV, CRCNS eye-1, DIEM and GazeCom, to raw samples.

Every loader returns raw samples (:data:`~psybench.attention.gaze.columns.SAMPLE_COLUMNS`)
and raises :class:`GazeFormatError` naming the file and line of a malformed row.

Formats:

* simple CSV: header with at least ``subject,t,x,y`` (t in ms; optional ``movie``,
  ``valid``);
* CRCNS eye-1 (``*.e-ceyeS``, the crcns.org data set eye-1):
  ``key = value`` header lines (``period = 240Hz``, ``ppd``, ``trash`` samples to
  skip, optional ``cols``), ``#`` comments, then rows of 2, 3, 4, 7 or 8 columns
  (x y [pd] [status] [targetx targety ampl interval]); status 2 (blink) and 3
  (saccade in blink) are invalid;
* DIEM ``event_data`` txt (Mital et al. 2011): tab-separated rows ``frame lx ly
  ldil levent rx ry rdil revent`` at the movie's frame rate (frames counted from
  1); an eye is valid when its coordinates are finite and positive; the gaze is the
  mean of valid eyes;
* GazeCom (Dorr et al. 2010): ``gaze <w> <h>``, ``geometry distance <d> <w> <h>``
  lines, then samples ``<t in us> <x> <y> <confidence>`` (250 Hz).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import sample_table

__all__ = ["GazeFormatError", "load_csv", "load_crcns", "load_diem", "load_gazecom", "load_gaze"]


class GazeFormatError(ValueError):
    """A gaze file does not follow its format; the message names the file and line."""

    def __init__(self, path, line: int | None, message: str):
        self.path = Path(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else f"{self.path}"
        super().__init__(f"{where}: {message}")


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


_HEADER_RE = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*(.*?)\s*$")


def load_crcns(path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None) -> pd.DataFrame:
    """Load one CRCNS eye-1 ``*.e-ceyeS`` file (one subject, one clip).

    The sampling period comes from ``period = <rate>Hz`` (240 Hz if absent); the
    first ``trash`` samples are dropped; times are ``i * 1000 / rate`` ms from the
    first kept sample. Subject and movie default to the two parts of the file stem
    ``<subject>-<clip>`` (or the whole stem).

    Returns
    -------
    DataFrame with :data:`SAMPLE_COLUMNS` plus ``status`` and attribute
    ``attrs["px_per_deg"]`` when the header gives ``ppd``.
    """
    path = Path(path)
    header: dict[str, str] = {}
    rows: list[list[float]] = []
    ncols = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = _HEADER_RE.match(line)
            if m:
                header[m.group(1).lower()] = m.group(2)
                continue
            toks = line.split()
            if len(toks) not in (2, 3, 4, 7, 8):
                raise GazeFormatError(path, lineno, f"{len(toks)} columns; CRCNS rows have 2, 3, 4, 7 or 8")
            if ncols is None:
                ncols = len(toks)
            elif len(toks) != ncols:
                raise GazeFormatError(path, lineno, f"{len(toks)} columns where earlier rows have {ncols}")
            rows.append([_float(path, lineno, t, "value") for t in toks])
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
    x, y = data[:, 0], data[:, 1]
    status = np.zeros(len(data), int)
    if data.shape[1] == 3:
        status = data[:, 2].astype(int)
    elif data.shape[1] >= 4:
        status = data[:, 3].astype(int)
    valid = ~np.isin(status, (2, 3))
    stem = path.name.split(".")[0]
    parts = stem.split("-", 1)
    subj = subject or parts[0]
    mov = movie or (parts[1] if len(parts) == 2 else stem)
    df = sample_table(subj, mov, np.arange(len(data)) * 1000.0 / rate, x, y, valid)
    df["status"] = status
    if "ppd" in header:
        df.attrs["px_per_deg"] = _float(path, None, header["ppd"], "ppd")
    return df


def load_diem(
    path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None, frames_per_s: float = 30.0
) -> pd.DataFrame:
    """Load a DIEM ``event_data/<participant>_<video>.txt`` file (one row per frame).

    Time of row with frame number ``f`` (1-based) is ``(f - 1) * 1000 / frames_per_s``.
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
            eyes = [(v[1], v[2]), (v[5], v[6])]
            good = [(ex, ey) for ex, ey in eyes if np.isfinite(ex) and np.isfinite(ey) and ex > 0 and ey > 0]
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
    subj, _, mov = stem.partition("_")
    return sample_table(
        subject or subj, movie or mov or stem, (np.asarray(frames) - 1) * 1000.0 / frames_per_s, xs, ys, valid
    )


def load_gazecom(
    path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None, min_confidence: float = 0.5
) -> pd.DataFrame:
    """Load a GazeCom text file (``gaze w h``, ``geometry distance d w h``, samples ``t_us x y conf``).

    Samples with ``confidence < min_confidence`` are invalid. ``attrs`` carries the
    screen size in px and the geometry line's values.
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
                geometry = [_float(path, lineno, s, "geometry value") for s in toks[2:]] if len(toks) >= 3 else []
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
    df = sample_table(subject or stem, movie or stem, t - t[0], xs, ys, np.asarray(conf) >= min_confidence)
    df.attrs["screen_px"] = screen
    df.attrs["geometry"] = geometry
    return df


def load_gaze(path: str | os.PathLike, *, fmt: str = "auto", **kwargs) -> pd.DataFrame:
    """Load a gaze file in ``fmt`` ('csv', 'crcns', 'diem', 'gazecom' or 'auto' by name/content)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"gaze file {path} does not exist")
    if fmt == "auto":
        if path.suffix.lower() == ".csv":
            fmt = "csv"
        elif path.name.endswith(".e-ceyeS") or path.suffix == ".e-ceyeS":
            fmt = "crcns"
        else:
            with open(path, encoding="utf-8", errors="replace") as fh:
                first = next((ln.strip() for ln in fh if ln.strip() and not ln.startswith(("#", "%"))), "")
            fmt = "gazecom" if first.startswith("gaze ") else "diem"
    loaders = {"csv": load_csv, "crcns": load_crcns, "diem": load_diem, "gazecom": load_gazecom}
    if fmt not in loaders:
        raise ValueError(f"gaze format {fmt!r} for {path} is not one of {sorted(loaders)}")
    return loaders[fmt](path, **kwargs)
