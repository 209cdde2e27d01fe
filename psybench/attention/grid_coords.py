"""Coordinates with units of the attention stores (frames and feature maps on the model grid).

Movies are reduced to the model grid (``grid = [width, height]`` cells, 40x30 by
default; Shic & Scassellati 2007, sec. 5.1) from source frames of ``source_size =
[width, height]`` pixels. Each cell's centre is given in degrees of visual angle
from the frame centre when the source's ``px_per_deg`` is known, else in source
pixels from the frame centre; time in ms from the movie's start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from psybench.io.coords import Coordinate
from psybench.units import frames_to_ms

__all__ = ["grid_coords"]


def grid_coords(attrs: Mapping[str, Any], n_t: int) -> dict[str, Coordinate]:
    """``t`` (ms), ``y`` and ``x`` (deg, or source px without ``px_per_deg``) of an attention store.

    Parameters
    ----------
    attrs : mapping
        The store attributes: ``frames_per_s``, ``grid``, ``source_size``,
        ``px_per_deg`` (may be None), optionally ``frame_times_ms`` (one per frame).
    n_t : int
        Number of frames.
    """
    times = attrs.get("frame_times_ms")
    if times is not None and len(times) == n_t:
        t = np.asarray(times, dtype=float)
    else:
        t = frames_to_ms(np.arange(n_t), attrs["frames_per_s"])
    gw, gh = (int(v) for v in attrs["grid"])
    sw, sh = (float(v) for v in (attrs.get("source_size") or (gw, gh)))
    ppd = attrs.get("px_per_deg")
    scale, units = (float(ppd), "deg") if ppd else (1.0, "source px")
    out = {"t": Coordinate(t, "ms", long_name="time from movie start")}
    for name, cells, size in (("y", gh, sh), ("x", gw, sw)):
        centres = ((np.arange(cells) + 0.5) * size / cells - size / 2) / scale
        out[name] = Coordinate(centres, units, long_name=f"{name} of the grid cell centre from the frame centre")
    return out
