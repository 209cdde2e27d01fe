"""Object-permanence plausibility from tracked mask objects (and depth).

Tests the three IntPhys principles on the masks (Riochet et al. 2018, IntPhys
V1.0, "Dev and Test"): O1 object permanence (objects vanishing or appearing
where no occluder explains it), O2 shape constancy (an object changing shape),
O3 spatio-temporal continuity (an object reappearing far from where it was
going).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from psybench.intphys.models.observation import Observation, map_movies
from psybench.intphys.models.tracking_links import link_tracks
from psybench.registry import register

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["tracking_permanence"]

TRACKING_REFERENCE = ("Riochet et al. 2018 (IntPhys V1.0), \"Dev and Test\": blocks O1 object permanence, "
                      "O2 shape constancy, O3 spatio-temporal continuity, tested on tracked masks")


def _object_values(pairs) -> tuple[dict[int, str], list[int]]:
    objects = {int(v): str(n) for v, n in pairs if str(n).startswith("object")}
    occluders = [int(v) for v, n in pairs if str(n).startswith("occluder")]
    return objects, occluders


def _track_surprise(masks: np.ndarray, depth: np.ndarray | None, objects: dict[int, str], occluders: list[int],
                    p: dict) -> float:
    T, H, W = masks.shape
    m = p["margin"]
    occ = np.isin(masks, occluders) if occluders else np.zeros_like(masks, bool)
    s = 0.0
    for v in objects:
        pix = masks == v
        area = pix.sum(axis=(1, 2))
        present = area >= p["min_area"]
        if not present.any():
            continue
        box, cen, fill, dep, border, near_occ = {}, {}, {}, {}, {}, {}
        for t in np.flatnonzero(present):
            ys, xs = np.nonzero(pix[t])
            y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
            box[t] = (max(y0 - m, 0), min(y1 + m, H), max(x0 - m, 0), min(x1 + m, W))
            cen[t] = np.array([xs.mean(), ys.mean()])
            fill[t] = area[t] / ((y1 - y0) * (x1 - x0))
            border[t] = y0 < m or x0 < m or y1 > H - m or x1 > W - m
            b = box[t]
            near_occ[t] = bool(occ[t, b[0]:b[1], b[2]:b[3]].any())
            if depth is not None:
                dep[t] = float(np.median(depth[t][pix[t]]))

        def covered(t, b, z):
            region = occ[t, b[0]:b[1], b[2]:b[3]]
            if depth is not None and z is not None:  # an occluder hides only what is behind it
                region = region & (depth[t, b[0]:b[1], b[2]:b[3]] < z)
            return bool(region.any())

        # frame-to-frame vanishing / appearing without an occluder to explain it
        for t in range(1, T):
            if present[t - 1] and not present[t] and not border[t - 1] and not covered(t, box[t - 1], dep.get(t - 1)):
                s += 1.0
            if present[t] and not present[t - 1] and not border[t] and not covered(t - 1, box[t], dep.get(t)):
                s += 1.0
        # permanence across occlusion: an object first seen late must have been hidden from the start,
        # one last seen early must still be hidden at the end
        seen = np.flatnonzero(present)
        first, last = seen[0], seen[-1]
        if first > 0 and not border[first] and not covered(0, box[first], dep.get(first)):
            s += 1.0
        if last < T - 1 and not border[last] and not covered(T - 1, box[last], dep.get(last)):
            s += 1.0
        # continuity and shape constancy on clean views (fully visible: away from occluders and edges)
        clean = [t for t in seen if not border[t] and not near_occ[t]]
        if len(clean) >= 2:
            f = np.array([fill[t] for t in clean])
            if f.max() - f.min() > p["shape_tol"]:
                s += 1.0
            # typical acceleration: 1.5 x the median over consecutive clean triplets (robust to the jump
            # being tested; for a sinusoid 1.5 x median |a| ~ 1.06 x max |a|)
            accs = [float(np.linalg.norm(cen[c] - 2 * cen[b] + cen[a]))
                    for a, b, c in zip(clean, clean[1:], clean[2:]) if c == b + 1 == a + 2]
            acc = 1.5 * float(np.median(accs)) if accs else 0.0
            jump = p["jump"] * W
            for i, (a, b) in enumerate(zip(clean, clean[1:])):
                vel = cen[a] - cen[a - 1] if i > 0 and clean[i - 1] == a - 1 else np.zeros(2)
                gap = b - a
                err = float(np.linalg.norm(cen[b] - (cen[a] + vel * gap)))
                if err > jump + 0.5 * acc * gap**2:
                    s += 1.0
                if depth is not None and abs(dep[b] - dep[a]) > p["depth_jump_mm"]:
                    s += 1.0
    return s


@register("tracking", track="intphys", kind="plausibility", reference=TRACKING_REFERENCE,
          bounds={"threads": (0, 256)})
def tracking_permanence(
    observation: Observation,
    *,
    min_area: int = 3,
    margin: int = 2,
    shape_tol: float = 0.12,
    jump: float = 0.15,
    depth_jump_mm: float = 400.0,
    use_depth: bool = True,
    threads: int = 1,
) -> pd.Series:
    """Object-permanence plausibility from tracked mask objects (and depth).

    Objects are the mask gray values named ``object_*`` in ``masks_grayscale``,
    occluders those named ``occluder_*``. An object counts as seen in a frame when
    it covers at least ``min_area`` px. Each of these events adds 1 to the surprise:

    * it vanishes (appears) between two frames, away from the image edge, where no
      occluder in front of it (depth) covers its last (new) place;
    * it is first seen after frame 0 at a place no occluder hid at frame 0, or last
      seen before the end at a place no occluder hides at the end (permanence
      across occlusion);
    * between two clean views (``margin`` px away from occluders and edges) its
      centroid lies more than ``jump * width + a * gap^2 / 2`` px from the
      constant-velocity prediction (a: 1.5 x its median observed acceleration), or
      its median depth changes by more than ``depth_jump_mm`` (continuity);
    * its fill ratio (area / bounding-box area; disk pi/4, square 1) varies by more
      than ``shape_tol`` over clean views (shape constancy).

    P = exp(-surprise). Object ids are stable within a movie: where a release
    reshuffles the gray values per frame, ingest maps every name to one id
    (:func:`psybench.intphys.ingest.mask_names`).

    Masks without names (the released test split, which has no status.json, and
    the dev archive's header-only status.json) are segmented and linked into
    tracks by :func:`~psybench.intphys.models.tracking_links.link_tracks`, from the
    masks alone (its documented assumptions: one gray value per actor and frame,
    linking by overlap, floor, walls and sky spanning the image width, identity
    kept across an occlusion). Every foreground track is then an object, and
    every other foreground track (occluder or object) can hide it where it is
    nearer (depth); the same events as above are counted.

    Raises
    ------
    ValueError
        When the observation has no masks, or naming the movie whose mask names
        include no ``object_*`` name (a constant would be a silent non-answer).
    """
    import pandas as pd
    params = dict(min_area=min_area, margin=margin, shape_tol=shape_tol, jump=jump, depth_jump_mm=depth_jump_mm)
    movies = list(observation.movies)
    if observation.masks is None:
        raise ValueError("tracking_permanence: the observation has no masks")
    names = observation.masks_grayscale or (None,) * len(movies)
    for movie, pairs in zip(movies, names):
        if pairs is not None and not _object_values(pairs)[0]:
            raise ValueError(f"tracking_permanence: movie {movie} names no object_* mask among "
                             f"{[n for _, n in pairs]}")
    masks, depth = observation.masks, observation.depth

    def one(i, m, d):
        if d is not None and not np.isfinite(d).all():
            d = None
        if names[i] is not None:
            objects, occluders = _object_values(names[i])
            return math.exp(-_track_surprise(m, d, objects, occluders, params))
        ids, fg, _background = link_tracks(m)  # no names: tracks from the masks alone
        return math.exp(-sum(_track_surprise(ids, d, {v: f"track_{v}"}, [u for u in fg if u != v], params)
                             for v in fg))

    return pd.Series(map_movies(one, [masks, depth if use_depth else None], threads), index=movies, dtype=float)
