"""Validity of recorded gaze samples: off-screen positions, gaze off the movie's picture, non-finite times,
times outside the movie.

Loaders mark what their format flags (blinks, tracking loss, low confidence) and
non-finite positions (:func:`psybench.attention.gaze.columns.sample_table`). A
recording can still hold positions no eye looked at (a tracker writing 1e9 px or
a sentinel far outside the display) or samples without a time; averaged into a
frame they would move its gaze point anywhere. :func:`clean_recording` marks them
invalid, logs how many of each it found, and refuses a recording left with no
valid sample (a header and no rows, or only lost samples), naming the file. A
recording whose valid samples all lie outside the movie's time (an EyeLink file
on the tracker clock, whose times are ms since the tracker started) is refused
too, naming the file, rather than leaving a gaze table with no valid frame.

Off the movie: a sample on the screen but outside the movie's picture (on the
letterbox or pillarbox bars of a movie shown smaller than the screen, or just past
the frame's edge when the screen is the movie) looked at no cell of the movie. It is
marked invalid and counted under ``off_movie`` rather than moved onto the nearest edge
cell, where it would count as a fixation of the movie's border. It is real gaze, not
lost data, so it does not count towards the lost share.

Lost share: a recording that loses more than ``max_lost_share`` (default
:data:`MAX_LOST_SHARE`, a quarter) of its samples to its own flags, missing times
and off-screen positions is named in a warning: a whole quarter of a recording
gone usually means wrong screen geometry rather than blinks. Like the margin, this
bound was fixed before any data were read.

The margin: a video eye tracker's accuracy is 0.5-1 deg after calibration and
degrades towards the screen's edges (Holmqvist et al. 2011, *Eye tracking: a
comprehensive guide to methods and measures*, sec. 2.5), so gaze on the display's
border is legitimately reported a little outside it. Samples are kept up to
:data:`OFF_SCREEN_MARGIN` of the screen's width (height) beyond its left and right
(top and bottom) edges; this is a plausibility bound fixed before any data were
read, not a tuned value.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import GazeFormatError
from psybench.attention.gaze.geometry import screen_to_movie

__all__ = ["OFF_SCREEN_MARGIN", "MAX_LOST_SHARE", "screen_bounds", "mark_invalid", "lost_share", "clean_recording"]

log = logging.getLogger(__name__)

#: Fraction of the screen's size a sample may lie beyond its edge and stay valid.
OFF_SCREEN_MARGIN = 0.1

#: Default ``attention.movies.<movie>.max_lost_share``: a recording losing more of its samples is named in a warning.
MAX_LOST_SHARE = 0.25


def screen_bounds(source_size: Sequence[float], screen: Mapping[str, Any] | None = None) -> tuple[float, ...]:
    """The screen as ``(x0, y0, x1, y1)`` in movie pixels (the samples' coordinates).

    Without screen geometry (``width_px``, ``height_px`` and ``movie_px``) the
    movie's own frame ``source_size`` (width, height) is taken as the screen.
    """
    screen = screen or {}
    if all(k in screen for k in ("width_px", "height_px", "movie_px")):
        xs, ys = screen_to_movie([0.0, float(screen["width_px"])], [0.0, float(screen["height_px"])],
                                 (screen["width_px"], screen["height_px"]), screen["movie_px"],
                                 fit=screen.get("fit", "contain"))
        # movie pixels of the recording's movie_px, rescaled to the stored frame's source_size
        sx = float(source_size[0]) / float(screen["movie_px"][0])
        sy = float(source_size[1]) / float(screen["movie_px"][1])
        return float(xs[0] * sx), float(ys[0] * sy), float(xs[1] * sx), float(ys[1] * sy)
    return 0.0, 0.0, float(source_size[0]), float(source_size[1])


def mark_invalid(
    samples: pd.DataFrame, bounds: Sequence[float] | None, *, margin: float = OFF_SCREEN_MARGIN,
    duration_ms: float | None = None, movie_area: Sequence[float] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Mark samples with a non-finite time, a position beyond ``bounds`` (+ margin) or off the movie's picture,
    or a time outside the movie, invalid.

    Parameters
    ----------
    samples : DataFrame
        Raw samples (:data:`psybench.attention.gaze.columns.SAMPLE_COLUMNS`).
    bounds : (x0, y0, x1, y1) or None
        The screen in the samples' pixels (:func:`screen_bounds`); None: unknown
        (a store without ``source_size`` and no screen geometry), positions unchecked.
    margin : float
        Fraction of the screen's width (height) allowed beyond its edges.
    duration_ms : float, optional
        The movie's duration: samples outside ``[0, duration_ms)`` fall in no frame.
        None: times unchecked.
    movie_area : (x0, y0, x1, y1), optional
        The movie's picture in the samples' pixels, edges included (``(0, 0, width, height)``
        of the stored frames); samples on the screen but outside it are ``off_movie``.
        None: unchecked.

    Returns
    -------
    samples : DataFrame
        A copy with ``valid`` updated.
    counts : dict
        ``{"samples", "already_invalid", "no_time", "off_screen", "off_movie", "outside_movie", "valid"}``:
        the rows, those the loader had marked, those newly marked for each reason (in
        that order: a sample is counted under the first that applies), and the valid
        rows left.
    """
    x0, y0, x1, y1 = map(float, bounds) if bounds is not None else (-np.inf, -np.inf, np.inf, np.inf)
    with np.errstate(invalid="ignore"):
        mx, my = np.nan_to_num(margin * (x1 - x0)), np.nan_to_num(margin * (y1 - y0))
    out = samples.copy()
    valid = out["valid"].to_numpy(bool)
    t, x, y = (out[c].to_numpy(float) for c in ("t_ms", "x", "y"))
    no_time = valid & ~np.isfinite(t)
    with np.errstate(invalid="ignore"):
        inside = (x >= x0 - mx) & (x <= x1 + mx) & (y >= y0 - my) & (y <= y1 + my)
        during = (t >= 0) & (t < duration_ms) if duration_ms is not None else np.ones(len(t), bool)
        on_movie = np.ones(len(t), bool)
        if movie_area is not None:
            a0, b0, a1, b1 = map(float, movie_area)
            on_movie = (x >= a0) & (x <= a1) & (y >= b0) & (y <= b1)
    off_screen = valid & ~no_time & ~inside
    off_movie = valid & ~no_time & ~off_screen & ~on_movie
    outside_movie = valid & ~no_time & ~off_screen & ~off_movie & ~during
    out["valid"] = valid & ~no_time & ~off_screen & ~off_movie & ~outside_movie
    counts = {
        "samples": len(out), "already_invalid": int((~valid).sum()), "no_time": int(no_time.sum()),
        "off_screen": int(off_screen.sum()), "off_movie": int(off_movie.sum()),
        "outside_movie": int(outside_movie.sum()), "valid": int(out["valid"].sum()),
    }
    return out, counts


def lost_share(counts: Mapping[str, int]) -> float:
    """Share of a recording's samples lost to its own flags, missing times and off-screen positions.

    Samples outside the movie's time, gaze off the movie's picture (e.g. on letterbox bars)
    and saccades (I-VT) are not counted as lost: they are not the movie's, or not
    fixations, rather than lost data.
    """
    lost = counts["already_invalid"] + counts["no_time"] + counts["off_screen"]
    return lost / counts["samples"] if counts["samples"] else 1.0


def clean_recording(
    samples: pd.DataFrame, path: str | os.PathLike, bounds: Sequence[float] | None, *,
    margin: float = OFF_SCREEN_MARGIN, duration_ms: float | None = None,
    max_lost_share: float = MAX_LOST_SHARE, movie_area: Sequence[float] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """:func:`mark_invalid` one loaded file, log its counts, refuse it without a valid sample in the movie.

    A recording losing more than ``max_lost_share`` of its samples (:func:`lost_share`)
    gets a warning naming it.

    Returns
    -------
    samples, counts
        As :func:`mark_invalid`.

    Raises
    ------
    GazeFormatError
        Naming ``path`` when no sample is left valid, or when its valid samples all lie
        outside the movie's time (e.g. times on an eye tracker's clock).
    """
    out, n = mark_invalid(samples, bounds, margin=margin, duration_ms=duration_ms, movie_area=movie_area)
    share = lost_share(n)
    log.warning(
        "gaze file %s: %d of %d samples valid; invalid: %d flagged by the recording, %d without a finite time, "
        "%d off the screen (beyond %.0f %% of its size), %d on the screen but off the movie's picture, %d outside "
        "the movie's time",
        path, n["valid"], n["samples"], n["already_invalid"], n["no_time"], n["off_screen"], 100 * margin,
        n["off_movie"], n["outside_movie"],
    )
    if n["valid"] == 0 and n["outside_movie"] > 0:
        t = samples["t_ms"].to_numpy(float)[samples["valid"].to_numpy(bool) & np.isfinite(samples["t_ms"])]
        raise GazeFormatError(
            path, None,
            f"no valid sample within the movie's 0-{duration_ms:.0f} ms: its {n['outside_movie']} valid samples "
            f"span {np.min(t):.0f}-{np.max(t):.0f} ms (times on the eye tracker's clock? EyeLink files: set "
            "gaze_onset_message to the movie-onset MSG)",
        )
    if n["valid"] == 0:
        raise GazeFormatError(
            path, None,
            f"no valid gaze sample ({n['samples']} rows: {n['already_invalid']} flagged invalid, "
            f"{n['no_time']} without a finite time, {n['off_screen']} off the screen, {n['off_movie']} off the "
            "movie's picture)",
        )
    if share > max_lost_share:
        log.warning("gaze file %s loses %.0f %% of its samples (more than max_lost_share %.0f %%): %d flagged by "
                    "the recording, %d without a finite time, %d off the screen (screen geometry right?)",
                    path, 100 * share, 100 * max_lost_share, n["already_invalid"], n["no_time"], n["off_screen"])
    return out, n
