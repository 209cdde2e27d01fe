"""Screen geometry of gaze recordings: visual angle to screen pixels, screen to movie pixels (every format)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["deg_to_screen_px", "screen_to_movie", "recording_screen", "to_movie_pixels", "movie_px_per_deg"]

log = logging.getLogger(__name__)


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


#: Screen keys a file may state (loaders put them in ``attrs["screen_px"]`` and ``attrs["screen_mm"]``).
_MM_KEYS = ("width_mm", "height_mm", "distance_mm")


def recording_screen(samples, screen: Mapping[str, Any] | None, path, source_size=None) -> dict[str, Any]:
    """The screen geometry of one loaded file: the config's ``screen``, each part the config leaves out taken
    from the file, and where each part came from.

    GazeCom (``gaze <w> <h>``, ``geometry distance .. width .. height ..``), ARFF
    (``%@METADATA width_px/height_px/width_mm/height_mm/distance_mm``), EyeLink
    (``DISPLAY_COORDS`` / ``GAZE_COORDS``) files and pymovements' dataset definitions
    state the screen their positions are in; the loaders put it in
    ``samples.attrs["screen_px"]`` (and ``["screen_mm"]``). A configured value wins (a
    disagreeing screen size is logged, naming the file). With a screen size known and
    no ``movie_px`` configured, the movie is taken as shown filling the screen at its
    own aspect ratio (``movie_px`` = ``source_size``, ``fit`` as configured, default
    ``contain``, as GazeCom shows its movies: Dorr, Martinetz, Gegenfurtner & Barth
    2010, J. Vis. 10(10)), logged when the screen's size differs from the movie's.

    Returns
    -------
    dict
        The ``screen`` mapping, plus ``sources``: ``{"screen_px", "size_mm", "movie_px"}``
        each ``config``, ``file``, ``assumed`` (``movie_px`` only) or ``none``.
    """
    out = {k: v for k, v in (screen or {}).items() if k != "sources"}
    sources = {}
    own = samples.attrs.get("screen_px")
    if "width_px" in out and "height_px" in out:
        sources["screen_px"] = "config"
        cfg = [float(out["width_px"]), float(out["height_px"])]
        if own is not None and cfg != [float(v) for v in own[:2]]:
            log.warning("gaze file %s states a %gx%g px screen, the config's screen is %gx%g px: using the "
                        "config's", path, *[float(v) for v in own[:2]], *cfg)
    elif own is not None:
        out["width_px"], out["height_px"] = (float(v) for v in own[:2])
        sources["screen_px"] = "file"
    else:
        sources["screen_px"] = "none"
    own_mm = {k: float(v) for k, v in (samples.attrs.get("screen_mm") or {}).items() if k in _MM_KEYS and v}
    from_file = [k for k in _MM_KEYS if k not in out and k in own_mm]
    out.update({k: own_mm[k] for k in from_file})
    given = [k for k in _MM_KEYS if k in (screen or {})]
    sources["size_mm"] = ("config+file" if given and from_file else "config" if given else
                          "file" if from_file else "none")
    if "movie_px" in out:
        sources["movie_px"] = "config"
    elif sources["screen_px"] != "none" and source_size is not None:
        out["movie_px"] = [float(v) for v in source_size[:2]]
        out.setdefault("fit", "contain")
        sources["movie_px"] = "assumed"
        if [float(out["width_px"]), float(out["height_px"])] != out["movie_px"]:
            log.warning("gaze file %s: a %gx%g px screen and no screen.movie_px: the %gx%g px movie is taken as "
                        "shown filling the screen (fit %s); set screen.movie_px and fit if it was not", path,
                        float(out["width_px"]), float(out["height_px"]), *out["movie_px"], out["fit"])
    else:
        sources["movie_px"] = "none"
    out["sources"] = sources
    return out


def to_movie_pixels(samples, screen: Mapping[str, Any], source_size, path):
    """Positions of one loaded file (screen pixels) -> pixels of the stored movie frames, for every format.

    This is the one place a recording's positions meet the movie: with ``screen.movie_px``
    (the movie's size as shown) they go through :func:`screen_to_movie` (``fit``) and
    are then scaled from ``movie_px`` to ``source_size`` (the stored frames' width and
    height, when they differ, e.g. a downscaled copy of the movie). Without ``movie_px``
    positions are taken as pixels of the movie already; a file stating a screen size
    other than ``source_size`` then gets a warning naming it (its positions are
    probably screen pixels).

    Parameters
    ----------
    samples : DataFrame
        Raw samples (:data:`~psybench.attention.gaze.columns.SAMPLE_COLUMNS`), x/y in screen pixels.
    screen : mapping
        :func:`recording_screen` of the file.
    source_size : (width, height) or None
        The stored frames' size; None: ``movie_px``.
    path : path-like
        The file, named in errors.

    Raises
    ------
    ValueError
        ``movie_px`` without a screen size (neither configured nor stated by the file).
    """
    if "movie_px" not in screen:
        own = samples.attrs.get("screen_px")
        if own is not None and source_size is not None and [float(v) for v in own[:2]] != [float(v) for v in
                                                                                          source_size[:2]]:
            log.warning("gaze file %s: positions on a %gx%g px screen taken as pixels of the %gx%g px movie; set "
                        "screen.movie_px (the movie's size as shown) to map them", path, *own[:2], *source_size[:2])
        return samples
    if "width_px" not in screen or "height_px" not in screen:
        raise ValueError(f"gaze file {path}: screen.movie_px needs screen.width_px and screen.height_px (the file "
                         "states no screen size)")
    x, y = screen_to_movie(samples["x"], samples["y"], (screen["width_px"], screen["height_px"]),
                           screen["movie_px"], fit=screen.get("fit", "contain"))
    if source_size is not None:
        x = x * float(source_size[0]) / float(screen["movie_px"][0])
        y = y * float(source_size[1]) / float(screen["movie_px"][1])
    out = samples.copy()
    out["x"], out["y"] = x, y
    return out


def movie_px_per_deg(screen: Mapping[str, Any], source_size) -> float | None:
    """Pixels of the stored movie frames per degree of visual angle at the screen's centre, from the geometry.

    One degree right of the centre is ``distance_mm * tan(1 deg)`` mm, i.e. that times
    ``width_px / width_mm`` screen pixels (:func:`deg_to_screen_px`), mapped to the movie
    (``movie_px``, ``fit``) and scaled to ``source_size`` as positions are
    (:func:`to_movie_pixels`). None when the screen's size in px and mm, the distance or
    ``movie_px`` is unknown.
    """
    if source_size is None or not all(k in screen for k in ("width_px", "height_px", "width_mm", "distance_mm",
                                                            "movie_px")):
        return None
    x, _ = deg_to_screen_px([0.0, 1.0], [0.0, 0.0], screen)
    mx, _ = screen_to_movie(x, [0.0, 0.0], (screen["width_px"], screen["height_px"]), screen["movie_px"],
                            fit=screen.get("fit", "contain"))
    return float((mx[1] - mx[0]) * float(source_size[0]) / float(screen["movie_px"][0]))
