"""Screen geometry of gaze recordings: visual angle to screen pixels, screen to movie pixels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["deg_to_screen_px", "screen_to_movie"]


def deg_to_screen_px(x_deg, y_deg, screen: Mapping[str, Any], *, y_up: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Visual angle from the screen centre -> screen pixels from the top left (flat screen).

    ``x_px = W / 2 + d tan(x) * W / width_mm`` with ``d`` the viewing distance (mm);
    pixels are taken square.
    """
    need = [k for k in ("width_px", "height_px", "width_mm", "distance_mm") if k not in screen]
    if need:
        raise ValueError(f"screen geometry lacks {need}: positions in degrees need them")
    px_per_mm = float(screen["width_px"]) / float(screen["width_mm"])
    d = float(screen["distance_mm"])
    x = float(screen["width_px"]) / 2 + d * np.tan(np.radians(np.asarray(x_deg, float))) * px_per_mm
    dy = d * np.tan(np.radians(np.asarray(y_deg, float))) * px_per_mm
    y = float(screen["height_px"]) / 2 + (-dy if y_up else dy)
    return x, y


def screen_to_movie(x, y, screen_px, movie_px, *, fit: str = "contain") -> tuple[np.ndarray, np.ndarray]:
    """Screen pixels -> movie pixels, for a movie shown centred on the screen.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Gaze on the screen (pixels from the top left).
    screen_px, movie_px : (width, height)
    fit : {'contain', 'native', 'stretch'}
        ``contain``: scaled by ``min(Ws / Wm, Hs / Hm)`` and centred; ``native``: unscaled,
        centred; ``stretch``: scaled to the whole screen.
    """
    (ws, hs), (wm, hm) = map(float, screen_px[:2]), map(float, movie_px[:2])
    if fit == "stretch":
        sx, sy = ws / wm, hs / hm
    elif fit in ("contain", "native"):
        sx = sy = min(ws / wm, hs / hm) if fit == "contain" else 1.0
    else:
        raise ValueError(f"screen fit {fit!r} is not one of contain, native, stretch")
    x0, y0 = (ws - sx * wm) / 2, (hs - sy * hm) / 2
    return (np.asarray(x, float) - x0) / sx, (np.asarray(y, float) - y0) / sy
