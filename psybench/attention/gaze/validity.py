"""Validity of recorded gaze samples: off-screen positions and non-finite times are invalid.

Loaders mark what their format flags (blinks, tracking loss, low confidence) and
non-finite positions (:func:`psybench.attention.gaze.columns.sample_table`). A
recording can still hold positions no eye looked at (a tracker writing 1e9 px or
a sentinel far outside the display) or samples without a time; averaged into a
frame they would move its gaze point anywhere. :func:`clean_recording` marks them
invalid, logs how many of each it found, and refuses a recording left with no
valid sample (a header and no rows, or only lost samples), naming the file.

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

from psybench.attention.gaze.geometry import screen_to_movie
from psybench.attention.gaze.loaders import GazeFormatError

__all__ = ["OFF_SCREEN_MARGIN", "screen_bounds", "mark_invalid", "clean_recording"]

log = logging.getLogger(__name__)

#: Fraction of the screen's size a sample may lie beyond its edge and stay valid.
OFF_SCREEN_MARGIN = 0.1


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
    samples: pd.DataFrame, bounds: Sequence[float] | None, *, margin: float = OFF_SCREEN_MARGIN
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Mark samples with a non-finite time or a position beyond ``bounds`` (+ margin) invalid.

    Parameters
    ----------
    samples : DataFrame
        Raw samples (:data:`psybench.attention.gaze.columns.SAMPLE_COLUMNS`).
    bounds : (x0, y0, x1, y1) or None
        The screen in the samples' pixels (:func:`screen_bounds`); None: unknown
        (a store without ``source_size`` and no screen geometry), positions unchecked.
    margin : float
        Fraction of the screen's width (height) allowed beyond its edges.

    Returns
    -------
    samples : DataFrame
        A copy with ``valid`` updated.
    counts : dict
        ``{"samples", "already_invalid", "no_time", "off_screen", "valid"}``: the
        rows, those the loader had marked, those newly marked for each reason
        (a sample with both counts as ``no_time``), and the valid rows left.
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
    off_screen = valid & ~no_time & ~inside
    out["valid"] = valid & ~no_time & ~off_screen
    counts = {
        "samples": len(out), "already_invalid": int((~valid).sum()), "no_time": int(no_time.sum()),
        "off_screen": int(off_screen.sum()), "valid": int(out["valid"].sum()),
    }
    return out, counts


def clean_recording(
    samples: pd.DataFrame, path: str | os.PathLike, bounds: Sequence[float] | None, *,
    margin: float = OFF_SCREEN_MARGIN,
) -> pd.DataFrame:
    """:func:`mark_invalid` one loaded file, log its counts, refuse it without a valid sample.

    Raises
    ------
    GazeFormatError
        Naming ``path`` when no sample is left valid.
    """
    out, n = mark_invalid(samples, bounds, margin=margin)
    log.warning(
        "gaze file %s: %d of %d samples valid; invalid: %d flagged by the recording, %d without a finite time, "
        "%d off the screen (beyond %.0f %% of its size)",
        path, n["valid"], n["samples"], n["already_invalid"], n["no_time"], n["off_screen"], 100 * margin,
    )
    if n["valid"] == 0:
        raise GazeFormatError(
            path, None,
            f"no valid gaze sample ({n['samples']} rows: {n['already_invalid']} flagged invalid, "
            f"{n['no_time']} without a finite time, {n['off_screen']} off the screen)",
        )
    return out
