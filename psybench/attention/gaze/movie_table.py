"""The gaze stage of a configured movie: synthetic observers or recorded files, to a per-frame table."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.defaults import IVT_THRESHOLD_DEG_S
from psybench.attention.gaze.frames import ivt_filter, resample_to_frames
from psybench.attention.gaze.loaders import load_gaze
from psybench.attention.gaze.synthetic import synthetic_observers
from psybench.attention.gaze.validity import clean_recording, screen_bounds
from psybench.io.store import open_store
from psybench.io.tables import write_table

__all__ = ["write_gaze_table"]


def _loader_options(movie: str, spec: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """Keyword arguments of the loader: the column mapping and screen geometry of the config entry."""
    screen = spec.get("screen") or {}
    if fmt == "table":
        if not spec.get("gaze_columns"):
            raise ValueError(f"attention.movies.{movie}: gaze_format 'table' needs gaze_columns (the column mapping)")
        return {"columns": dict(spec["gaze_columns"]), "screen": dict(screen), "movie": movie}
    if spec.get("gaze_onset_message"):
        if fmt != "eyelink":
            raise ValueError(f"attention.movies.{movie}: gaze_onset_message needs gaze_format 'eyelink', not {fmt!r}")
        return {"onset_message": spec["gaze_onset_message"]}
    if fmt == "diem" and "movie_px" in screen:
        return {"screen_px": (screen["width_px"], screen["height_px"]), "movie_px": tuple(screen["movie_px"]),
                "fit": screen.get("fit", "contain")}
    return {}


def write_gaze_table(
    movie: str, spec: Mapping[str, Any], stimulus: str | os.PathLike, out: str | os.PathLike
) -> pd.DataFrame:
    """Per-frame gaze table of ``movie``: synthetic observers (``observers``) or loaded files (``gaze``).

    Parameters
    ----------
    movie : str
        The movie's name (``attention.movies.<movie>`` in the config).
    spec : mapping
        Its config entry: ``observers`` (the pop-out scene's synthetic observers) or
        ``gaze`` (file or files) with ``gaze_format``, for ``table`` a column mapping
        ``gaze_columns`` (:mod:`~psybench.attention.gaze.tables`), optionally ``screen``
        (geometry, screen-to-movie mapping) and ``ivt``.
    stimulus : path-like
        The movie's stimulus store (frame rate, frame count, planted objects).
    out : path-like
        The ``.csv`` table to write (with its ``.parquet`` sibling).
    """
    store = open_store(stimulus)
    fps = float(store.attrs["frames_per_s"])
    n_frames = int(store["frames"].shape[0])
    if "observers" in spec:
        if "target_xy" not in store.arrays:
            raise ValueError(
                f"attention.movies.{movie}.observers needs a rendered popout movie (with a planted target)"
            )
        obs = dict(spec["observers"])
        if "p_target" not in obs:
            raise ValueError(f"attention.movies.{movie}.observers lacks 'p_target' (one preference per observer)")
        samples = synthetic_observers(
            np.asarray(store["target_xy"]), np.asarray(store["lure_xy"]),
            frames_per_s=fps, source_size=tuple(store.attrs["source_size"]), movie=movie, **obs,
        )
    elif "gaze" in spec:
        files = spec["gaze"] if isinstance(spec["gaze"], (list, tuple)) else [spec["gaze"]]
        if not files:
            raise ValueError(f"attention.movies.{movie}.gaze lists no file")
        fmt = spec.get("gaze_format", "auto")
        # off-screen samples and samples without a time are invalid; a file left with none is an error
        size = store.attrs.get("source_size") or (spec.get("screen") or {}).get("movie_px")
        bounds = screen_bounds(size, spec.get("screen")) if size else None
        samples = pd.concat([clean_recording(load_gaze(f, fmt=fmt, **_loader_options(movie, spec, fmt)), f, bounds)
                             for f in files], ignore_index=True)
        samples["movie"] = movie
    else:
        raise ValueError(f"attention.movies.{movie}: needs 'observers' (synthetic) or 'gaze' (files)")
    ivt = spec.get("ivt") or {}
    if ivt.get("enabled", False):
        ppd = ivt.get("px_per_deg") or store.attrs.get("px_per_deg")
        if not ppd:
            raise ValueError(f"attention.movies.{movie}.ivt: px_per_deg is unknown; set ivt.px_per_deg")
        samples = ivt_filter(
            samples, px_per_deg=float(ppd), threshold_deg_s=float(ivt.get("threshold_deg_s", IVT_THRESHOLD_DEG_S))
        )
    table = resample_to_frames(samples, frames_per_s=fps, n_frames=n_frames, movie=movie)
    write_table(table, out)
    return table
