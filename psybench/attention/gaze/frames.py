"""Cleaning and resampling raw gaze samples: I-VT saccade filtering, per-frame averages."""

from __future__ import annotations

import numpy as np
import pandas as pd

from psybench.attention.defaults import IVT_THRESHOLD_DEG_S
from psybench.attention.gaze.columns import FRAME_COLUMNS
from psybench.units import frames_to_ms, ms_to_frames

__all__ = ["ivt_filter", "resample_to_frames"]


def ivt_filter(
    samples: pd.DataFrame, *, px_per_deg: float, threshold_deg_s: float = IVT_THRESHOLD_DEG_S
) -> pd.DataFrame:
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
    end_ms = frames_to_ms(n_frames, frames_per_s)
    pieces = []
    for (subject, mov), sub in samples.groupby(["subject", "movie"], sort=True):
        t = sub["t_ms"].to_numpy(float)
        # a NaN time cast to int is any frame: only finite times near the movie are placed
        near = np.isfinite(t) & (t > -end_ms) & (t < 2 * end_ms)
        q = np.full(len(t), -1, dtype=np.int64)
        q[near] = ms_to_frames(t[near], frames_per_s, rounding="floor")
        inside = (q >= 0) & (q < n_frames)
        f = np.where(inside, q, -1)
        ok = sub["valid"].to_numpy() & inside
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
                    "t_ms": frames_to_ms(np.arange(n_frames), frames_per_s),
                    "x": x,
                    "y": y,
                    "valid": cnt > 0,
                }
            )
        )
    if not pieces:
        return pd.DataFrame({c: [] for c in FRAME_COLUMNS})
    return pd.concat(pieces, ignore_index=True)[FRAME_COLUMNS]
