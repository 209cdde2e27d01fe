"""Objects of IntPhys masks without names: per-frame segments linked into tracks.

The released test split (and the dev archive) carries mask PNGs but no status.json
naming their gray values (bootphon/intphys ``Tools/make_archives.py`` keeps the
metadata back). The renderer draws, in every frame anew, one random unused gray
value per actor (``Source/intphys/MasksCapture.cpp``, ``CaptureActor``: each
frame's actor map starts empty and takes ``RandRange(0, 255)``), with all wall
pieces, axis cylinders and pills merged into one actor each. So within one frame a
gray value is one actor, and across frames gray values mean nothing.

:func:`link_tracks` turns such masks into stable track ids, using nothing but the
masks themselves. Assumptions (from the scene design of Riochet et al. 2018,
IntPhys V1.0, "Dev and Test", and the renderer above), each a fixed criterion,
not fitted to any data:

1. One gray value in one frame is one actor (the renderer's per-frame map).
2. The camera is fixed within a movie and actors move little between consecutive
   frames: a segment continues the previous frame's segment it overlaps most
   (intersection over union, greedy from the largest; ``min_iou``). A segment
   with no overlap continues an unlinked segment of the previous frame whose
   centroid lies within ``max_step`` x its size (``sqrt(area)``) and whose area
   is within a factor ``max_area_ratio``: an object does not move farther than a
   few of its own sizes from one frame to the next.
3. Floor, walls and sky extend past both sides of the image: a track whose
   extent covers ``background_span`` of the image width in at least half of its
   frames is background. Objects and occluders are narrower (an occluder as wide
   as the image would be taken for background: its objects' disappearances then
   count as unexplained in all four movies of a quadruplet alike).
4. An object hidden by something nearer keeps its identity: a track that starts
   away from the image edge, after frame 0, continues the most recently ended
   foreground track that ended away from the edge (nearest last centroid among
   those), so that continuity and shape constancy are tested across the
   occlusion, as with named masks.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["link_tracks", "LINK_DEFAULTS"]

#: The fixed criteria of :func:`link_tracks` (module docstring, assumptions 2-4).
LINK_DEFAULTS = {"min_iou": 0.05, "max_step": 3.0, "max_area_ratio": 3.0, "background_span": 0.9, "edge": 2}


def _segments(frame: np.ndarray, edge: int) -> dict[int, dict]:
    """Per gray value of one frame: area, centroid (x, y), x extent, touches the edge."""
    H, W = frame.shape
    flat = frame.reshape(-1).astype(np.intp)
    area = np.bincount(flat, minlength=256)
    cols = np.zeros((256, W), bool)  # which gray values occur in which column / row
    rows = np.zeros((256, H), bool)
    cols[frame, np.arange(W)[None, :]] = True
    rows[frame, np.arange(H)[:, None]] = True
    sx = np.bincount(flat, np.tile(np.arange(W, dtype=np.float64), H), 256)
    sy = np.bincount(flat, np.repeat(np.arange(H, dtype=np.float64), W), 256)
    out = {}
    for g in np.flatnonzero(area):
        c, r = np.flatnonzero(cols[g]), np.flatnonzero(rows[g])
        out[int(g)] = {
            "area": int(area[g]), "c": np.array([sx[g] / area[g], sy[g] / area[g]]),
            "span": (c[-1] - c[0] + 1) / W,
            "edge": bool(r[0] < edge or c[0] < edge or r[-1] >= H - edge or c[-1] >= W - edge),
        }
    return out


def _link_frame(prev: np.ndarray, cur: np.ndarray, sp: dict, sc: dict, p: dict) -> dict[int, int]:
    """Map gray values of ``cur`` to gray values of ``prev`` (assumption 2)."""
    joint = np.bincount(prev.reshape(-1).astype(np.intp) * 256 + cur.reshape(-1), minlength=65536)
    pairs = []
    for k in np.flatnonzero(joint):
        a, b = divmod(int(k), 256)
        iou = joint[k] / (sp[a]["area"] + sc[b]["area"] - joint[k])
        if iou >= p["min_iou"]:
            pairs.append((iou, a, b))
    link: dict[int, int] = {}
    used: set[int] = set()
    for _, a, b in sorted(pairs, reverse=True):
        if a not in used and b not in link:
            link[b] = a
            used.add(a)
    for b in sorted(set(sc) - set(link), key=lambda g: -sc[g]["area"]):  # no overlap: nearest similar segment
        best, dist = None, math.inf
        for a in set(sp) - used:
            ratio = sc[b]["area"] / sp[a]["area"]
            d = float(np.linalg.norm(sc[b]["c"] - sp[a]["c"]))
            if (1 / p["max_area_ratio"] <= ratio <= p["max_area_ratio"]
                    and d <= p["max_step"] * math.sqrt(max(sp[a]["area"], 1)) and d < dist):
                best, dist = a, d
        if best is not None:
            link[b] = best
            used.add(best)
    return link


def link_tracks(masks: np.ndarray, **criteria) -> tuple[np.ndarray, list[int], list[int]]:
    """Stable track ids for masks whose gray values carry no names (and may change per frame).

    Parameters
    ----------
    masks : ndarray, shape (T, H, W), uint8
        Gray values of one movie, as stored by ingest.
    **criteria
        Overrides of :data:`LINK_DEFAULTS`.

    Returns
    -------
    ids : ndarray, shape (T, H, W), uint16
        Track id of every pixel (1, 2, ... in order of first appearance).
    foreground : list of int
        Track ids of objects and occluders (not background, assumption 3).
    background : list of int
        Track ids of floor, walls and sky.
    """
    p = {**LINK_DEFAULTS, **criteria}
    masks = np.asarray(masks)
    if masks.ndim != 3:
        raise ValueError(f"link_tracks: masks must have shape (T, H, W), got {masks.shape}")
    T = masks.shape[0]
    segs = [_segments(masks[t], p["edge"]) for t in range(T)]
    track_of: list[dict[int, int]] = [{} for _ in range(T)]
    frames_of: dict[int, list[tuple[int, int]]] = {}

    def new_track():
        k = len(frames_of) + 1
        frames_of[k] = []
        return k

    for t in range(T):
        link = _link_frame(masks[t - 1], masks[t], segs[t - 1], segs[t], p) if t else {}
        for g in sorted(segs[t], key=lambda g: -segs[t][g]["area"]):
            k = track_of[t - 1][link[g]] if g in link else new_track()
            track_of[t][g] = k
            frames_of[k].append((t, g))
    span = {k: np.median([segs[t][g]["span"] for t, g in fr]) for k, fr in frames_of.items()}
    background = {k for k, s in span.items() if s >= p["background_span"]}
    # assumption 4: a track born away from the edge after frame 0 continues the foreground track that ended
    # most recently away from the edge (nearest last centroid among those ending at that frame)
    merged: dict[int, int] = {}
    last: dict[int, tuple[int, int]] = {k: fr[-1] for k, fr in frames_of.items()}  # per family root

    def root(k):
        while k in merged:
            k = merged[k]
        return k

    for k in sorted(frames_of, key=lambda k: (frames_of[k][0][0], k)):
        t0, g0 = frames_of[k][0]
        if k in background or t0 == 0 or segs[t0][g0]["edge"]:
            continue
        dormant = []
        for r in {root(j) for j in frames_of if j not in background} - {root(k)}:
            t1, g1 = last[r]
            if t1 < t0 and not segs[t1][g1]["edge"]:
                dormant.append((t1, -float(np.linalg.norm(segs[t1][g1]["c"] - segs[t0][g0]["c"])), -r, r))
        if dormant:
            r = max(dormant)[3]
            merged[k] = r
            last[r] = max(last[r], last[k])
    roots = sorted({root(k) for k in frames_of}, key=lambda k: frames_of[k][0][0] * 1000 + k)
    number = {r: i + 1 for i, r in enumerate(roots)}
    ids = np.zeros(masks.shape, np.uint16)
    for t in range(T):
        lut = np.zeros(256, np.uint16)
        for g, k in track_of[t].items():
            lut[g] = number[root(k)]
        ids[t] = lut[masks[t]]
    fg = sorted({number[root(k)] for k in frames_of if k not in background})
    bg = sorted({number[root(k)] for k in background})
    return ids, fg, bg
