"""Synthetic gaze: people-like observers of a pop-out scene and the random controls.

* :func:`synthetic_observers` -- people-like scanpaths (fixations of 200-400 ms,
  saccades, drift, noise) following the planted target or the lure of a pop-out
  scene with a per-observer preference;
* :func:`random_saccade_scanpaths` -- "random saccades (RS)" (Shic & Scassellati
  2007, sec. 5.1);
* :func:`random_physiological_scanpaths` -- "random physiological (RP)", the
  conditional sampling model with spill search (Shic & Scassellati 2007, sec. 5.1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import frame_tables, sample_table
from psybench.units import frames_to_ms, ms_to_frames

__all__ = ["synthetic_observers", "random_saccade_scanpaths", "random_physiological_scanpaths"]


def synthetic_observers(
    target_xy: np.ndarray,
    lure_xy: np.ndarray,
    *,
    p_target: Sequence[float],
    frames_per_s: float,
    source_size: tuple[int, int],
    seed: int = 0,
    movie: str = "A",
    sample_hz: float = 60.0,
    fixation_ms: tuple[float, float] = (200.0, 400.0),
    saccade_ms: float = 40.0,
    landing_sd_px: float = 8.0,
    drift_px_per_sqrt_s: float = 10.0,
    noise_px: float = 3.0,
    subject_prefix: str = "obs",
) -> pd.DataFrame:
    """People-like scanpaths that follow a pop-out scene's target or lure.

    Observer ``i`` makes fixations of uniform duration in ``fixation_ms``; for each,
    it picks the target with probability ``p_target[i]`` and the lure (distractor 1, an
    ordinary distractor by default) otherwise, makes a saccade of ``saccade_ms`` (straight line, landing
    error N(0, ``landing_sd_px``)), then pursues the object as it moves, plus a
    random-walk drift (``drift_px_per_sqrt_s``) and white tracker noise
    (``noise_px``). Sampled at ``sample_hz``; starts at the screen centre.

    Parameters
    ----------
    target_xy, lure_xy : ndarray, shape (T, 2)
        Object centres per frame (source px), from :func:`~psybench.attention.stimuli.render_popout`.
    p_target : sequence of float
        One preference per observer (its length is the number of observers).

    Returns
    -------
    DataFrame with :data:`SAMPLE_COLUMNS`; subjects ``<prefix>00``, ``<prefix>01`` ...
    """
    target_xy = np.asarray(target_xy, float)
    lure_xy = np.asarray(lure_xy, float)
    if target_xy.shape != lure_xy.shape or target_xy.ndim != 2 or target_xy.shape[1] != 2:
        raise ValueError(f"target_xy and lure_xy must both have shape (T, 2); got {target_xy.shape}, {lure_xy.shape}")
    for p in p_target:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_target values must lie in [0, 1], got {p!r}")
    T = len(target_xy)
    w, h = source_size
    duration_ms = frames_to_ms(T, frames_per_s)
    ts = np.arange(0.0, duration_ms, 1000.0 / sample_hz)
    fidx = np.minimum(ms_to_frames(ts, frames_per_s, rounding="floor"), T - 1)
    objects = np.stack([target_xy, lure_xy])  # (2, T, 2)
    ss = np.random.SeedSequence(seed)
    frames = []
    for i, (p, child) in enumerate(zip(p_target, ss.spawn(len(p_target)))):
        rng = np.random.default_rng(child)
        xy = np.empty((len(ts), 2))
        pos = np.array([w / 2, h / 2], float)
        k = 0
        while k < len(ts):
            obj = 0 if rng.random() < p else 1
            n_sac = max(1, int(round(saccade_ms * sample_hz / 1000.0)))
            n_fix = max(1, int(round(rng.uniform(*fixation_ms) * sample_hz / 1000.0)))
            k_land = min(k + n_sac, len(ts) - 1)
            offset = rng.normal(0.0, landing_sd_px, 2)
            land = objects[obj, fidx[k_land]] + offset
            # saccade: straight line; avoid sweeping across the screen when the object wrapped
            for j in range(n_sac):
                if k >= len(ts):
                    break
                a = (j + 1) / n_sac
                xy[k] = (1 - a) * pos + a * land
                k += 1
            drift = np.zeros(2)
            for _ in range(n_fix):
                if k >= len(ts):
                    break
                drift += rng.normal(0.0, drift_px_per_sqrt_s * np.sqrt(1.0 / sample_hz), 2)
                xy[k] = objects[obj, fidx[k]] + offset + drift
                k += 1
            pos = xy[k - 1].copy()
        xy += rng.normal(0.0, noise_px, xy.shape)
        xy[:, 0] = np.clip(xy[:, 0], 0, w - 1e-6)
        xy[:, 1] = np.clip(xy[:, 1], 0, h - 1e-6)
        frames.append(sample_table(f"{subject_prefix}{i:02d}", movie, ts, xy[:, 0], xy[:, 1], np.ones(len(ts), bool)))
    return pd.concat(frames, ignore_index=True)

def _reflect(v, hi):
    v = np.mod(v, 2 * hi)
    return np.where(v > hi, 2 * hi - v, v)


def random_saccade_scanpaths(
    n_frames: int,
    *,
    source_size: tuple[int, int],
    frames_per_s: float,
    seed: int = 0,
    n: int = 1,
    jump_prob: float = 0.1,
    max_jump_frac: float = 0.5,
    movie: str = "A",
    subject_prefix: str = "rs",
) -> pd.DataFrame:
    """Random-saccade (RS) control scanpaths, one row per frame (section 5.1, item 2).

    Gaze waits at a location and, at each frame with probability ``jump_prob``,
    jumps by a distance uniform in ``[0, max_jump_frac * width]`` at an angle uniform
    in [0, 360) deg; positions are reflected at the frame edges. Starts uniformly.
    """
    w, h = source_size
    # One stream for all n paths, as drawn one by one: per path x0, y0, then per frame t >= 1
    # a jump test u and, when u < jump_prob, the jump's length and angle. The doubles are
    # drawn at once (the same numbers), walked to find each path's, then the paths move in step.
    T = int(n_frames)
    stream = np.random.default_rng(seed).random(n * (2 + 3 * max(0, T - 1))).tolist()
    start = np.empty((n, 2))
    jump = np.zeros((n, T), bool)
    length = np.zeros((n, T))
    angle = np.zeros((n, T))
    k = 0
    for i in range(n):
        start[i] = stream[k : k + 2]
        k += 2
        for t in range(1, T):
            if stream[k] < jump_prob:
                jump[i, t], length[i, t], angle[i, t] = True, stream[k + 1], stream[k + 2]
                k += 3
            else:
                k += 1
    pos = 0 + np.array([w, h], float) * start  # rng.uniform([0, 0], [w, h])
    length = max_jump_frac * w * length  # rng.uniform(0, max_jump_frac * w): 0 + range * u
    angle = 2 * np.pi * angle
    xy = np.empty((n, T, 2))
    for t in range(T):
        j = jump[:, t]
        if j.any():
            r, a = length[j, t], angle[j, t]
            pos[j] = np.stack([_reflect(pos[j, 0] + r * np.cos(a), w - 1e-6),
                               _reflect(pos[j, 1] + r * np.sin(a), h - 1e-6)], axis=1)
        xy[:, t] = pos
    return frame_tables([f"{subject_prefix}{i:02d}" for i in range(n)], movie, xy, frames_per_s)


def random_physiological_scanpaths(
    human_tracks: Iterable[np.ndarray],
    n_frames: int,
    *,
    source_size: tuple[int, int],
    frames_per_s: float,
    seed: int = 0,
    n: int = 1,
    spill: float = 0.05,
    movie: str = "A",
    subject_prefix: str = "rp",
) -> pd.DataFrame:
    """Random-physiological (RP) control scanpaths: the conditional sampling model of section 5.1.

    ``g(0)`` is the screen centre and ``g(t + 1) = g(t) + dr (cos a, sin a)``. With
    per-frame step lengths ``d(k)`` and signed direction changes ``da(k)`` of the
    human tracks:

    * ``dr`` ~ p(d(t + 1) | d(t)): spill search as the paper states it -- the
      ``spill`` fraction of all human time points, *centred at d(t)* in the order of
      their step lengths (a window of ``k = spill x N`` consecutive ranks around the
      rank of ``d(t)``, shifted inwards at the ends), then one of them at random, whose
      next step is ``dr``;
    * ``da`` ~ p(da(t + 1) | d(t + 1), d(t)): the ``k`` time points nearest to
      ``(dr, d(t))`` in the Euclidean plane of (next, previous) step lengths (both
      scaled by the pooled step SD), one of them at random.

    Departure: the paper writes ``da`` as ``|a(t + 1) - a(t)|``; we sample the signed
    change (a magnitude alone would make every path turn one way). Positions are
    reflected at the edges. The ``n`` scanpaths are generated in lockstep (one
    vectorised search per frame), each from its own random stream.

    Parameters
    ----------
    human_tracks : iterable of ndarray, shape (T_i, 2)
        Per-frame gaze of the physiological recordings (source px; NaN rows skipped).
    """
    d_prev, d_next, dalpha = [], [], []
    for track in human_tracks:
        track = np.asarray(track, float)
        track = track[np.all(np.isfinite(track), axis=1)]
        if len(track) < 3:
            continue
        step = np.diff(track, axis=0)
        d = np.hypot(step[:, 0], step[:, 1])
        a = np.arctan2(step[:, 1], step[:, 0])
        d_prev.append(d[:-1])
        d_next.append(d[1:])
        dalpha.append((np.diff(a) + np.pi) % (2 * np.pi) - np.pi)
    if not d_prev:
        raise ValueError("random_physiological_scanpaths needs at least one human track with >= 3 valid frames")
    d_prev, d_next, dalpha = (np.concatenate(v) for v in (d_prev, d_next, dalpha))
    if not 0 < spill <= 1:
        raise ValueError(f"spill fraction must lie in (0, 1], got {spill!r}")
    N = len(d_prev)
    k = max(1, int(round(spill * N)))
    order = np.argsort(d_prev, kind="stable")
    d_prev_sorted = d_prev[order]
    w, h = source_size
    scale = max(np.std(np.concatenate([d_prev, d_next])), 1e-9)
    pn, pp = (d_next / scale).astype(np.float32), (d_prev / scale).astype(np.float32)
    # each scanpath's own stream: initial heading, then per frame one pick in each search
    alpha = np.empty(n)
    pick_dr = np.empty((n, n_frames), int)
    pick_da = np.empty((n, n_frames), int)
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(n)):
        r = np.random.default_rng(child)
        alpha[i] = r.uniform(0, 2 * np.pi)
        pick_dr[i] = r.integers(k, size=n_frames)
        pick_da[i] = r.integers(k, size=n_frames)
    xy = np.empty((n, n_frames, 2))
    g = np.tile([w / 2.0, h / 2.0], (n, 1))
    d_t = np.zeros(n)
    rows = np.arange(n)
    for t in range(n_frames):
        xy[:, t] = g
        # dr: a window of k ranks centred at the rank of d(t)
        lo = np.clip(np.searchsorted(d_prev_sorted, d_t) - k // 2, 0, N - k)
        dr = d_next[order[lo + pick_dr[:, t]]]
        # da: the k nearest (next, previous) pairs to (dr, d(t))
        if k < N:
            dist = np.square(pn[None, :] - (dr / scale).astype(np.float32)[:, None])  # squared: same order
            dist += np.square(pp[None, :] - (d_t / scale).astype(np.float32)[:, None])
            near = np.argpartition(dist, k - 1, axis=1)[:, :k]
            alpha = alpha + dalpha[near[rows, pick_da[:, t]]]
        else:
            alpha = alpha + dalpha[pick_da[:, t]]
        g = np.stack(
            [_reflect(g[:, 0] + dr * np.cos(alpha), w - 1e-6), _reflect(g[:, 1] + dr * np.sin(alpha), h - 1e-6)],
            axis=1,
        )
        d_t = dr
    return frame_tables([f"{subject_prefix}{i:02d}" for i in range(n)], movie, xy, frames_per_s)
