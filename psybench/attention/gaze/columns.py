"""The two gaze tables every gaze module builds: raw samples and the per-frame table.

Raw samples (what the loaders and the synthetic observers return) have columns
:data:`SAMPLE_COLUMNS`: time in ms from movie onset, position in source pixels of
the movie (x rightwards, y downwards). The tidy per-frame table
(:func:`psybench.attention.gaze.frames.resample_to_frames`) has :data:`FRAME_COLUMNS`,
one row per subject and frame (``t_ms`` = frame onset). A file that does not give
them raises :class:`GazeFormatError`, naming the file and line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from psybench.units import frames_to_ms

__all__ = ["GazeFormatError", "SAMPLE_COLUMNS", "FRAME_COLUMNS", "sample_table", "frame_table", "frame_tables"]

SAMPLE_COLUMNS = ["subject", "movie", "t_ms", "x", "y", "valid"]
FRAME_COLUMNS = ["subject", "movie", "frame", "t_ms", "x", "y", "valid"]


class GazeFormatError(ValueError):
    """A gaze file does not follow its format; the message names the file and line."""

    def __init__(self, path, line: int | None, message: str):
        self.path = Path(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else f"{self.path}"
        super().__init__(f"{where}: {message}")


def sample_table(subject, movie, t_ms, x, y, valid) -> pd.DataFrame:
    """Raw samples of one subject (or one subject per sample) as :data:`SAMPLE_COLUMNS`;
    non-finite positions are invalid."""
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


def frame_table(subject, movie, xy, frames_per_s) -> pd.DataFrame:
    """Per-frame table (:data:`FRAME_COLUMNS`) of one trajectory ``xy`` (n_frames, 2), every frame valid."""
    return frame_tables([subject], movie, np.asarray(xy, float)[None], frames_per_s)


def frame_tables(subjects, movie, xy, frames_per_s) -> pd.DataFrame:
    """:func:`frame_table` of n trajectories ``xy`` (n, n_frames, 2) with their ``subjects``, one after the
    other (the table ``pd.concat`` of the n tables gives, built at once)."""
    xy = np.asarray(xy, float)
    n, T = xy.shape[:2]
    frames = np.arange(T)
    return pd.DataFrame(
        {
            "subject": np.repeat(np.array([str(s) for s in subjects], dtype=object), T),
            "movie": movie,
            "frame": np.tile(frames, n),
            "t_ms": np.tile(frames_to_ms(frames, frames_per_s), n),
            "x": xy[:, :, 0].ravel(),
            "y": xy[:, :, 1].ravel(),
            "valid": True,
        }
    )[FRAME_COLUMNS]

