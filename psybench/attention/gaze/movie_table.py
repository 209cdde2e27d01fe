"""The gaze stage of a configured movie: synthetic observers or recorded files, to a per-frame table."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.defaults import IVT_THRESHOLD_DEG_S
from psybench.attention.gaze.datasets import PREFIX
from psybench.attention.gaze.formats import load_gaze
from psybench.attention.gaze.frames import ivt_filter, resample_to_frames
from psybench.attention.gaze.geometry import movie_px_per_deg, recording_screen, to_movie_pixels
from psybench.attention.gaze.synthetic import synthetic_observers
from psybench.attention.gaze.validity import MAX_LOST_SHARE, clean_recording, lost_share, screen_bounds
from psybench.io.store import open_store
from psybench.io.tables import write_table
from psybench.units import frames_to_ms

__all__ = ["COUNT_COLUMNS", "write_gaze_table"]

#: Columns of the gaze stage's sample counts (one row per gaze file): the samples, those the
#: recording flagged, those marked by each validity rule in turn (``off_movie``: on the screen,
#: off the movie's picture), saccades (I-VT, when on), the valid samples left, the share lost
#: (:func:`~psybench.attention.gaze.validity.lost_share`) and the configured bound it is warned
#: against; then the geometry used: the screen's and the shown movie's size in px (``WxH``, empty
#: when unknown) and where each came from, with the screen's size in mm
#: (:func:`~psybench.attention.gaze.geometry.recording_screen`: ``config``, ``file``, ``assumed``, ``none``),
#: and the movie pixels per degree I-VT used (empty without I-VT).
COUNT_COLUMNS = ["movie", "file", "samples", "flagged", "no_time", "off_screen", "off_movie", "outside_movie",
                 "saccade", "valid", "lost_share", "max_lost_share", "screen_px", "screen_from", "movie_px",
                 "movie_from", "size_mm_from", "px_per_deg"]


def _loader_options(movie: str, spec: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """Keyword arguments of the loader: the column mapping and screen geometry of the config entry."""
    screen = spec.get("screen") or {}
    if fmt == "table":
        if not spec.get("gaze_columns"):
            raise ValueError(f"attention.movies.{movie}: gaze_format 'table' needs gaze_columns (the column mapping)")
        # units to screen pixels only: screen to movie pixels is to_movie_pixels', for every format
        on_screen = {k: v for k, v in screen.items() if k not in ("movie_px", "fit")}
        return {"columns": dict(spec["gaze_columns"]), "screen": on_screen, "movie": movie}
    if fmt.startswith(PREFIX) and screen.get("origin"):
        return {"origin": screen["origin"]}
    if spec.get("gaze_onset_message"):
        if fmt != "eyelink":
            raise ValueError(f"attention.movies.{movie}: gaze_onset_message needs gaze_format 'eyelink', not {fmt!r}")
        return {"onset_message": spec["gaze_onset_message"]}
    return {}


def _load_recordings(movie: str, spec: Mapping[str, Any], source_size, duration_ms: float):
    """Load, map to movie pixels and clean every gaze file of ``movie``: the samples and their counts."""
    files = spec["gaze"] if isinstance(spec["gaze"], (list, tuple)) else [spec["gaze"]]
    if not files:
        raise ValueError(f"attention.movies.{movie}.gaze lists no file")
    fmt = spec.get("gaze_format", "auto")
    max_lost = float(spec.get("max_lost_share", MAX_LOST_SHARE))
    pieces, counts = [], []
    for i, f in enumerate(files):
        raw = load_gaze(f, fmt=fmt, **_loader_options(movie, spec, fmt))
        screen = recording_screen(raw, spec.get("screen"), f, source_size)
        size = source_size or screen.get("movie_px")
        raw = to_movie_pixels(raw, screen, size, f)
        # off-screen samples, gaze off the movie's picture (letterbox bars), samples without a time or outside
        # the movie are invalid; a file left with none in the movie is an error naming it
        bounds = screen_bounds(size, screen) if size else None
        area = (0.0, 0.0, float(size[0]), float(size[1])) if size else None
        samples, n = clean_recording(raw, f, bounds, duration_ms=duration_ms, max_lost_share=max_lost,
                                     movie_area=area)
        samples["_file"] = i
        samples["_px_per_deg"] = movie_px_per_deg(screen, size) or np.nan  # from the geometry, for I-VT
        pieces.append(samples)
        src = screen["sources"]
        counts.append({"movie": movie, "file": str(f), "samples": n["samples"], "flagged": n["already_invalid"],
                       "no_time": n["no_time"], "off_screen": n["off_screen"], "off_movie": n["off_movie"],
                       "outside_movie": n["outside_movie"], "saccade": 0, "valid": n["valid"],
                       "lost_share": lost_share(n), "max_lost_share": max_lost,
                       "screen_px": _size(screen.get("width_px"), screen.get("height_px")),
                       "screen_from": src["screen_px"], "movie_px": _size(*(screen.get("movie_px") or [None, None])),
                       "movie_from": src["movie_px"], "size_mm_from": src["size_mm"], "px_per_deg": None})
    return pd.concat(pieces, ignore_index=True), counts


def _ivt(movie: str, samples: pd.DataFrame, ivt: Mapping[str, Any], movie_ppd, counts: list[dict]) -> pd.DataFrame:
    """I-VT with the configured px_per_deg, else the movie's, else each file's own geometry (its screen in px and
    mm and viewing distance, :func:`~psybench.attention.gaze.geometry.movie_px_per_deg`)."""
    threshold = float(ivt.get("threshold_deg_s", IVT_THRESHOLD_DEG_S))
    ppd = ivt.get("px_per_deg") or movie_ppd
    samples["_valid_before_ivt"] = samples["valid"].to_numpy(bool)
    if ppd:
        for row in counts:
            row["px_per_deg"] = float(ppd)
        return ivt_filter(samples, px_per_deg=float(ppd), threshold_deg_s=threshold)
    own = samples.groupby("_file")["_px_per_deg"].first() if "_px_per_deg" in samples else pd.Series(dtype=float)
    if own.empty or not np.isfinite(own.to_numpy(float)).all():
        raise ValueError(f"attention.movies.{movie}.ivt: px_per_deg is unknown (neither configured, nor the "
                         "movie's, nor stated by every gaze file's screen geometry); set ivt.px_per_deg")
    for i, value in own.items():
        counts[int(i)]["px_per_deg"] = float(value)
    return pd.concat([ivt_filter(g, px_per_deg=float(own[i]), threshold_deg_s=threshold)
                      for i, g in samples.groupby("_file", sort=True)], ignore_index=True)


def _size(w, h) -> str:
    """``WxH`` of a size in px (``%g``), empty when unknown."""
    return f"{float(w):g}x{float(h):g}" if w is not None and h is not None else ""


def write_gaze_table(
    movie: str, spec: Mapping[str, Any], stimulus: str | os.PathLike, out: str | os.PathLike, *,
    counts_out: str | os.PathLike | None = None,
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
        (geometry, screen-to-movie mapping, applied to every format by
        :func:`~psybench.attention.gaze.geometry.to_movie_pixels`), ``max_lost_share``
        and ``ivt``.
    stimulus : path-like
        The movie's stimulus store (frame rate, frame count, planted objects).
    out : path-like
        The ``.csv`` table to write (with its ``.parquet`` sibling).
    counts_out : path-like, optional
        A ``.csv`` of the sample counts, one row per gaze file (:data:`COUNT_COLUMNS`;
        no row for synthetic observers).

    Raises
    ------
    GazeFormatError
        A file without a valid sample, or none within the movie's time, naming it.
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
        counts = []
    elif "gaze" in spec:
        samples, counts = _load_recordings(movie, spec, store.attrs.get("source_size"), frames_to_ms(n_frames, fps))
        samples["movie"] = movie
    else:
        raise ValueError(f"attention.movies.{movie}: needs 'observers' (synthetic) or 'gaze' (files)")
    ivt = spec.get("ivt") or {}
    if ivt.get("enabled", False):
        samples = _ivt(movie, samples, ivt, store.attrs.get("px_per_deg"), counts)
        if counts:
            saccade = samples["_valid_before_ivt"].to_numpy(bool) & ~samples["valid"].to_numpy(bool)
            per_file = np.bincount(samples["_file"].to_numpy(int), weights=saccade, minlength=len(counts))
            for row, k in zip(counts, per_file):
                row["saccade"], row["valid"] = int(k), row["valid"] - int(k)
    table = resample_to_frames(samples, frames_per_s=fps, n_frames=n_frames, movie=movie)
    write_table(table, out)
    if counts_out is not None:
        write_table(pd.DataFrame(counts, columns=COUNT_COLUMNS), counts_out, parquet=False)
    return table
