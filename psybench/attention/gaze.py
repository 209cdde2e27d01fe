"""Gaze data: loaders, resampling to frames, I-VT filtering, synthetic observers, controls.

Raw samples (what the loaders return) are a DataFrame with columns
``subject, movie, t_ms, x, y, valid``: time in ms from movie onset, position in
source pixels of the movie (x rightwards, y downwards). :func:`resample_to_frames`
turns them into the tidy per-frame table every later stage reads::

    subject, movie, frame, t_ms, x, y, valid

one row per subject and frame (``t_ms`` = frame onset), written with
:func:`psybench.io.tables.write_table`.

Formats (see ``reference/attention.md``):

* simple CSV: header with at least ``subject,t,x,y`` (t in ms; optional ``movie``,
  ``valid``);
* CRCNS eye-1 (``*.e-ceyeS``): ``key = value`` header lines (``period = 240Hz``,
  ``ppd``, ``trash`` samples to skip, optional ``cols``), ``#`` comments, then rows of
  2, 3, 4, 7 or 8 columns (x y [pd] [status] [targetx targety ampl interval]); status
  2 (blink) and 3 (saccade in blink) are invalid;
* DIEM ``event_data`` txt: tab-separated rows ``frame lx ly ldil levent rx ry rdil
  revent`` at the movie's frame rate (frames counted from 1); an eye is valid when
  its coordinates are finite and positive; the gaze is the mean of valid eyes;
* GazeCom: ``gaze <w> <h>``, ``geometry distance <d> <w> <h>`` lines, then samples
  ``<t in us> <x> <y> <confidence>`` (250 Hz).

Synthetic data (section 5.1 of Shic & Scassellati 2007 for the controls):

* :func:`synthetic_observers` -- people-like scanpaths (fixations of 200-400 ms,
  saccades, drift, noise) following the planted target or the lure of a pop-out
  scene with a per-observer preference;
* :func:`random_saccade_scanpaths` -- "random saccades (RS)";
* :func:`random_physiological_scanpaths` -- "random physiological (RP)", the
  conditional sampling model with spill search.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "GazeFormatError",
    "SAMPLE_COLUMNS",
    "FRAME_COLUMNS",
    "load_csv",
    "load_crcns",
    "load_diem",
    "load_gazecom",
    "load_gaze",
    "ivt_filter",
    "resample_to_frames",
    "synthetic_observers",
    "random_saccade_scanpaths",
    "random_physiological_scanpaths",
]

SAMPLE_COLUMNS = ["subject", "movie", "t_ms", "x", "y", "valid"]
FRAME_COLUMNS = ["subject", "movie", "frame", "t_ms", "x", "y", "valid"]


class GazeFormatError(ValueError):
    """A gaze file does not follow its format; the message names the file and line."""

    def __init__(self, path, line: int | None, message: str):
        self.path = Path(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else f"{self.path}"
        super().__init__(f"{where}: {message}")


def _samples(subject, movie, t_ms, x, y, valid) -> pd.DataFrame:
    n = len(t_ms)
    df = pd.DataFrame(
        {
            "subject": [str(subject)] * n if isinstance(subject, str) else [str(s) for s in subject],
            "movie": [str(movie)] * n,
            "t_ms": np.asarray(t_ms, float),
            "x": np.asarray(x, float),
            "y": np.asarray(y, float),
            "valid": np.asarray(valid, bool),
        }
    )
    df.loc[~np.isfinite(df["x"]) | ~np.isfinite(df["y"]), "valid"] = False
    return df[SAMPLE_COLUMNS]


def _float(path, lineno, token, what):
    try:
        return float(token)
    except ValueError:
        raise GazeFormatError(path, lineno, f"{what} {token!r} is not a number") from None


# --- loaders ------------------------------------------------------------------------
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
    out = _samples(df["subject"].to_numpy(), "", vals["t"], vals["x"], vals["y"], valid)
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
    df = _samples(subj, mov, np.arange(len(data)) * 1000.0 / rate, x, y, valid)
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
                raise GazeFormatError(path, lineno, f"{len(toks)} fields; DIEM rows have 9 (frame lx ly ldil levent rx ry rdil revent)")
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
    return _samples(subject or subj, movie or mov or stem, (np.asarray(frames) - 1) * 1000.0 / frames_per_s, xs, ys, valid)


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
                raise GazeFormatError(path, lineno, f"{len(toks)} fields; GazeCom samples are '<t_us> <x> <y> <confidence>'")
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
    df = _samples(subject or stem, movie or stem, t - t[0], xs, ys, np.asarray(conf) >= min_confidence)
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


# --- cleaning and resampling ----------------------------------------------------------
def ivt_filter(samples: pd.DataFrame, *, px_per_deg: float, threshold_deg_s: float = 30.0) -> pd.DataFrame:
    """Mark saccade samples invalid with the velocity-threshold rule I-VT.

    Salvucci & Goldberg (2000): point-to-point velocity ``|p_i - p_{i-1}| / dt``
    (deg/s, via ``px_per_deg``); samples above ``threshold_deg_s`` (30 deg/s in
    Shic & Scassellati 2007, section 5.1) are saccades. The first sample of each
    track takes the velocity of the second. Returns a copy with ``valid`` updated
    and a ``velocity_deg_s`` column.
    """
    if not px_per_deg > 0:
        raise ValueError(f"ivt_filter: px_per_deg must be > 0, got {px_per_deg!r}")
    out = samples.sort_values(["subject", "movie", "t_ms"], kind="stable").reset_index(drop=True)
    vel = np.full(len(out), np.nan)
    for _, idx in out.groupby(["subject", "movie"], sort=False).indices.items():
        sub = out.iloc[idx]
        dt = np.diff(sub["t_ms"].to_numpy()) / 1000.0
        dist = np.hypot(np.diff(sub["x"].to_numpy()), np.diff(sub["y"].to_numpy())) / px_per_deg
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(dt > 0, dist / dt, np.nan)
        if len(v):
            vel[idx] = np.concatenate([[v[0]], v])
    out["velocity_deg_s"] = vel
    out["valid"] = out["valid"].to_numpy() & ~(vel > threshold_deg_s)
    return out


def resample_to_frames(
    samples: pd.DataFrame, *, frames_per_s: float, n_frames: int, movie: str | None = None
) -> pd.DataFrame:
    """Average the valid samples shown during each frame: the tidy per-frame table.

    Frame ``i`` is on screen during ``[i, i + 1) * 1000 / frames_per_s`` ms; its gaze
    is the mean of the valid samples in that interval, and is invalid (NaN, ``valid``
    False) when there is none.

    Returns
    -------
    DataFrame with :data:`FRAME_COLUMNS`, ``n_frames`` rows per subject, sorted.
    """
    if not frames_per_s > 0 or n_frames < 1:
        raise ValueError(f"resample_to_frames: need frames_per_s > 0 and n_frames >= 1, got {frames_per_s}, {n_frames}")
    frame_ms = 1000.0 / frames_per_s
    pieces = []
    for (subject, mov), sub in samples.groupby(["subject", "movie"], sort=True):
        f = np.floor(sub["t_ms"].to_numpy() / frame_ms + 1e-9).astype(int)
        ok = sub["valid"].to_numpy() & (f >= 0) & (f < n_frames)
        sx = np.bincount(f[ok], weights=sub["x"].to_numpy()[ok], minlength=n_frames)
        sy = np.bincount(f[ok], weights=sub["y"].to_numpy()[ok], minlength=n_frames)
        cnt = np.bincount(f[ok], minlength=n_frames)
        with np.errstate(invalid="ignore", divide="ignore"):
            x = np.where(cnt > 0, sx / np.maximum(cnt, 1), np.nan)
            y = np.where(cnt > 0, sy / np.maximum(cnt, 1), np.nan)
        pieces.append(
            pd.DataFrame(
                {
                    "subject": str(subject),
                    "movie": str(movie if movie is not None else mov),
                    "frame": np.arange(n_frames),
                    "t_ms": np.arange(n_frames) * frame_ms,
                    "x": x,
                    "y": y,
                    "valid": cnt > 0,
                }
            )
        )
    if not pieces:
        return pd.DataFrame({c: [] for c in FRAME_COLUMNS})
    return pd.concat(pieces, ignore_index=True)[FRAME_COLUMNS]


# --- synthetic observers ------------------------------------------------------------
def synthetic_observers(
    target_xy: np.ndarray,
    lure_xy: np.ndarray,
    *,
    p_target: Sequence[float],
    frames_per_s: float,
    source_size: tuple[int, int],
    seed: int = 0,
    movie: str = "A",
    sample_hz: float = 60.0,
    fixation_ms: tuple[float, float] = (200.0, 400.0),
    saccade_ms: float = 40.0,
    landing_sd_px: float = 8.0,
    drift_px_per_sqrt_s: float = 10.0,
    noise_px: float = 3.0,
    subject_prefix: str = "obs",
) -> pd.DataFrame:
    """People-like scanpaths that follow a pop-out scene's target or lure.

    Observer ``i`` makes fixations of uniform duration in ``fixation_ms``; for each,
    it picks the target with probability ``p_target[i]`` and the lure (distractor 1, an
    ordinary distractor by default) otherwise, makes a saccade of ``saccade_ms`` (straight line, landing
    error N(0, ``landing_sd_px``)), then pursues the object as it moves, plus a
    random-walk drift (``drift_px_per_sqrt_s``) and white tracker noise
    (``noise_px``). Sampled at ``sample_hz``; starts at the screen centre.

    Parameters
    ----------
    target_xy, lure_xy : ndarray, shape (T, 2)
        Object centres per frame (source px), from :func:`~psybench.attention.stimuli.render_popout`.
    p_target : sequence of float
        One preference per observer (its length is the number of observers).

    Returns
    -------
    DataFrame with :data:`SAMPLE_COLUMNS`; subjects ``<prefix>00``, ``<prefix>01`` ...
    """
    target_xy = np.asarray(target_xy, float)
    lure_xy = np.asarray(lure_xy, float)
    if target_xy.shape != lure_xy.shape or target_xy.ndim != 2 or target_xy.shape[1] != 2:
        raise ValueError(f"target_xy and lure_xy must both have shape (T, 2); got {target_xy.shape}, {lure_xy.shape}")
    for p in p_target:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_target values must lie in [0, 1], got {p!r}")
    T = len(target_xy)
    w, h = source_size
    duration_ms = T * 1000.0 / frames_per_s
    ts = np.arange(0.0, duration_ms, 1000.0 / sample_hz)
    fidx = np.minimum((ts * frames_per_s / 1000.0).astype(int), T - 1)
    objects = np.stack([target_xy, lure_xy])  # (2, T, 2)
    ss = np.random.SeedSequence(seed)
    frames = []
    for i, (p, child) in enumerate(zip(p_target, ss.spawn(len(p_target)))):
        rng = np.random.default_rng(child)
        xy = np.empty((len(ts), 2))
        pos = np.array([w / 2, h / 2], float)
        k = 0
        while k < len(ts):
            obj = 0 if rng.random() < p else 1
            n_sac = max(1, int(round(saccade_ms * sample_hz / 1000.0)))
            n_fix = max(1, int(round(rng.uniform(*fixation_ms) * sample_hz / 1000.0)))
            k_land = min(k + n_sac, len(ts) - 1)
            offset = rng.normal(0.0, landing_sd_px, 2)
            land = objects[obj, fidx[k_land]] + offset
            # saccade: straight line; avoid sweeping across the screen when the object wrapped
            for j in range(n_sac):
                if k >= len(ts):
                    break
                a = (j + 1) / n_sac
                xy[k] = (1 - a) * pos + a * land
                k += 1
            drift = np.zeros(2)
            for _ in range(n_fix):
                if k >= len(ts):
                    break
                drift += rng.normal(0.0, drift_px_per_sqrt_s * np.sqrt(1.0 / sample_hz), 2)
                xy[k] = objects[obj, fidx[k]] + offset + drift
                k += 1
            pos = xy[k - 1].copy()
        xy += rng.normal(0.0, noise_px, xy.shape)
        xy[:, 0] = np.clip(xy[:, 0], 0, w - 1e-6)
        xy[:, 1] = np.clip(xy[:, 1], 0, h - 1e-6)
        frames.append(_samples(f"{subject_prefix}{i:02d}", movie, ts, xy[:, 0], xy[:, 1], np.ones(len(ts), bool)))
    return pd.concat(frames, ignore_index=True)


def _frame_table(subject, movie, xy, frames_per_s):
    n = len(xy)
    return pd.DataFrame(
        {
            "subject": subject,
            "movie": movie,
            "frame": np.arange(n),
            "t_ms": np.arange(n) * 1000.0 / frames_per_s,
            "x": xy[:, 0],
            "y": xy[:, 1],
            "valid": True,
        }
    )[FRAME_COLUMNS]


def _reflect(v, hi):
    v = np.mod(v, 2 * hi)
    return np.where(v > hi, 2 * hi - v, v)


def random_saccade_scanpaths(
    n_frames: int,
    *,
    source_size: tuple[int, int],
    frames_per_s: float,
    seed: int = 0,
    n: int = 1,
    jump_prob: float = 0.1,
    max_jump_frac: float = 0.5,
    movie: str = "A",
    subject_prefix: str = "rs",
) -> pd.DataFrame:
    """Random-saccade (RS) control scanpaths, one row per frame (section 5.1, item 2).

    Gaze waits at a location and, at each frame with probability ``jump_prob``,
    jumps by a distance uniform in ``[0, max_jump_frac * width]`` at an angle uniform
    in [0, 360) deg; positions are reflected at the frame edges. Starts uniformly.
    """
    w, h = source_size
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        xy = np.empty((n_frames, 2))
        pos = rng.uniform([0, 0], [w, h])
        for t in range(n_frames):
            if t and rng.random() < jump_prob:
                r = rng.uniform(0, max_jump_frac * w)
                a = rng.uniform(0, 2 * np.pi)
                pos = np.array([_reflect(pos[0] + r * np.cos(a), w - 1e-6), _reflect(pos[1] + r * np.sin(a), h - 1e-6)])
            xy[t] = pos
        out.append(_frame_table(f"{subject_prefix}{i:02d}", movie, xy, frames_per_s))
    return pd.concat(out, ignore_index=True)


def random_physiological_scanpaths(
    human_tracks: Iterable[np.ndarray],
    n_frames: int,
    *,
    source_size: tuple[int, int],
    frames_per_s: float,
    seed: int = 0,
    n: int = 1,
    spill: float = 0.05,
    movie: str = "A",
    subject_prefix: str = "rp",
) -> pd.DataFrame:
    """Random-physiological (RP) control scanpaths: the conditional sampling model of section 5.1.

    ``g(0)`` is the screen centre and ``g(t + 1) = g(t) + dr (cos a, sin a)``. With
    per-frame step lengths ``d(k)`` and signed direction changes ``da(k)`` of the
    human tracks:

    * ``dr`` ~ p(d(t + 1) | d(t)): spill search as the paper states it -- the
      ``spill`` fraction of all human time points, *centred at d(t)* in the order of
      their step lengths (a window of ``k = spill x N`` consecutive ranks around the
      rank of ``d(t)``, shifted inwards at the ends), then one of them at random, whose
      next step is ``dr``;
    * ``da`` ~ p(da(t + 1) | d(t + 1), d(t)): the ``k`` time points nearest to
      ``(dr, d(t))`` in the Euclidean plane of (next, previous) step lengths (both
      scaled by the pooled step SD), one of them at random.

    Departure: the paper writes ``da`` as ``|a(t + 1) - a(t)|``; we sample the signed
    change (a magnitude alone would make every path turn one way). Positions are
    reflected at the edges. The ``n`` scanpaths are generated in lockstep (one
    vectorised search per frame), each from its own random stream.

    Parameters
    ----------
    human_tracks : iterable of ndarray, shape (T_i, 2)
        Per-frame gaze of the physiological recordings (source px; NaN rows skipped).
    """
    d_prev, d_next, dalpha = [], [], []
    for track in human_tracks:
        track = np.asarray(track, float)
        track = track[np.all(np.isfinite(track), axis=1)]
        if len(track) < 3:
            continue
        step = np.diff(track, axis=0)
        d = np.hypot(step[:, 0], step[:, 1])
        a = np.arctan2(step[:, 1], step[:, 0])
        d_prev.append(d[:-1])
        d_next.append(d[1:])
        dalpha.append((np.diff(a) + np.pi) % (2 * np.pi) - np.pi)
    if not d_prev:
        raise ValueError("random_physiological_scanpaths needs at least one human track with >= 3 valid frames")
    d_prev, d_next, dalpha = (np.concatenate(v) for v in (d_prev, d_next, dalpha))
    if not 0 < spill <= 1:
        raise ValueError(f"spill fraction must lie in (0, 1], got {spill!r}")
    N = len(d_prev)
    k = max(1, int(round(spill * N)))
    order = np.argsort(d_prev, kind="stable")
    d_prev_sorted = d_prev[order]
    w, h = source_size
    scale = max(np.std(np.concatenate([d_prev, d_next])), 1e-9)
    pn, pp = (d_next / scale).astype(np.float32), (d_prev / scale).astype(np.float32)
    # each scanpath's own stream: initial heading, then per frame one pick in each search
    alpha = np.empty(n)
    pick_dr = np.empty((n, n_frames), int)
    pick_da = np.empty((n, n_frames), int)
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(n)):
        r = np.random.default_rng(child)
        alpha[i] = r.uniform(0, 2 * np.pi)
        pick_dr[i] = r.integers(k, size=n_frames)
        pick_da[i] = r.integers(k, size=n_frames)
    xy = np.empty((n, n_frames, 2))
    g = np.tile([w / 2.0, h / 2.0], (n, 1))
    d_t = np.zeros(n)
    rows = np.arange(n)
    for t in range(n_frames):
        xy[:, t] = g
        # dr: a window of k ranks centred at the rank of d(t)
        lo = np.clip(np.searchsorted(d_prev_sorted, d_t) - k // 2, 0, N - k)
        dr = d_next[order[lo + pick_dr[:, t]]]
        # da: the k nearest (next, previous) pairs to (dr, d(t))
        if k < N:
            dist = np.square(pn[None, :] - (dr / scale).astype(np.float32)[:, None])  # squared: same order
            dist += np.square(pp[None, :] - (d_t / scale).astype(np.float32)[:, None])
            near = np.argpartition(dist, k - 1, axis=1)[:, :k]
            alpha = alpha + dalpha[near[rows, pick_da[:, t]]]
        else:
            alpha = alpha + dalpha[pick_da[:, t]]
        g = np.stack([_reflect(g[:, 0] + dr * np.cos(alpha), w - 1e-6), _reflect(g[:, 1] + dr * np.sin(alpha), h - 1e-6)], axis=1)
        d_t = dr
    return pd.concat(
        [_frame_table(f"{subject_prefix}{i:02d}", movie, xy[i], frames_per_s) for i in range(n)], ignore_index=True
    )
