"""Plausibility models for IntPhys: P(movie) in [0, 1], higher = more plausible.

Every model is a function ``model(store, metadata, **params) -> pandas.Series``
(movie id -> P) where ``store`` is an opened ingest store
(:func:`psybench.io.store.open_store`; arrays ``scene (movie, t, y, x, c)``,
``depth``, ``masks`` and the attribute ``movies``) and ``metadata`` the ingest
table rows of those movies. Models read one movie at a time (one storage chunk),
so memory does not depend on the number of movies.

Surprise-based models map a surprise ``s >= 0`` to ``P = exp(-s / scale)``: a
strictly decreasing map onto (0, 1], so L_R and L_A (rank statistics) do not
depend on ``scale``; it only keeps the numbers readable.

Models
------
constant, random_control
    Controls (chance level by construction).
flow_surprise
    Future prediction from optical flow: Farneback flow between frames t-1 and t
    extrapolates frame t to t+1; surprise = worst mean absolute prediction error.
nextframe_surprise (+ train_nextframe)
    A per-pixel linear autoregression of frame t+1 on the 3x3 neighbourhood of
    frame t (downsampled gray), trained by streaming the training stores with Dask;
    surprise = worst frame prediction error. A linear stand-in for the future
    prediction baselines of the IntPhys paper.
tracking_permanence
    Object tracking on the masks (and depth): objects vanishing or appearing
    where no occluder explains it, reappearing far from where they were going,
    or changing shape.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import cv2
import dask
import numpy as np
import pandas as pd

from psybench.io.store import open_store
from psybench.io.tables import read_table, write_table

__all__ = [
    "MODELS",
    "ModelSpecError",
    "constant",
    "random_control",
    "flow_surprise",
    "train_nextframe",
    "nextframe_surprise",
    "tracking_permanence",
    "resolve_model",
    "predict_shard",
    "train_nextframe_stores",
]


class ModelSpecError(ValueError):
    """A plausibility model is unknown or returned invalid scores; the message names it."""


def _movies(store) -> list[str]:
    return [str(m) for m in store.attrs["movies"]]


def _map_movies(fn: Callable[..., float], arrays: Sequence[Any], threads: int) -> list[float]:
    """``[fn(i, *movie_i) for each movie i]``, reading one storage chunk of movies at a time.

    ``arrays`` are Dask (or NumPy) arrays with movies on axis 0 and the same chunking
    along it (``None`` entries are passed through as ``None``); each chunk is loaded
    once and its movies are processed by ``threads`` threads.
    """
    ref = next(a for a in arrays if a is not None)
    bounds = np.cumsum((0,) + tuple(ref.chunks[0])) if hasattr(ref, "chunks") else np.array([0, ref.shape[0]])
    out: list[float] = []
    with ThreadPoolExecutor(max(1, threads)) as ex:
        for a, b in zip(bounds[:-1], bounds[1:]):
            blocks = [None if x is None else np.asarray(x[a:b]) for x in arrays]
            out.extend(ex.map(lambda j: fn(a + j, *[None if blk is None else blk[j] for blk in blocks]),
                              range(b - a)))
    return out


def _gray(scene_movie: np.ndarray, size: int | None = None) -> np.ndarray:
    """(T, H, W, 3) uint8 RGB -> (T, h, w) float32 luminance in [0, 1], optionally area-downsampled."""
    out = []
    for f in scene_movie:
        g = cv2.cvtColor(f, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
        if size is not None:
            g = cv2.resize(g, (size, size), interpolation=cv2.INTER_AREA)
        out.append(g)
    return np.stack(out)


# --------------------------------------------------------------------------- controls
def constant(store, metadata: pd.DataFrame, *, value: float = 0.5) -> pd.Series:
    """The same P for every movie: L_R = 0.5 (ties), L_R_strict = 0, L_A = 0.5."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"constant model: value {value!r} must be in [0, 1]")
    return pd.Series(float(value), index=_movies(store), dtype=float)


def random_control(store, metadata: pd.DataFrame, *, seed: int = 0) -> pd.Series:
    """Uniform random P, seeded per movie id (independent of sharding)."""
    ids = _movies(store)
    return pd.Series(
        [float(np.random.default_rng([seed, zlib.crc32(m.encode())]).random()) for m in ids], index=ids, dtype=float
    )


# --------------------------------------------------------------------------- flow
def _flow_error(gray: np.ndarray, params: dict) -> float:
    T, H, W = gray.shape
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    worst = 0.0
    g8 = (gray * 255).astype(np.uint8)
    for t in range(1, T - 1):
        flow = cv2.calcOpticalFlowFarneback(g8[t - 1], g8[t], None, params["pyr_scale"], params["levels"],
                                            params["winsize"], params["iterations"], params["poly_n"],
                                            params["poly_sigma"], 0)
        # constant velocity: what is at x at t was at x - flow at t-1 and will be at x + flow at t+1,
        # so I_{t+1}(x) ~ I_t(x - flow(x)) (backward warp with the local flow)
        pred = cv2.remap(gray[t], xx - flow[..., 0], yy - flow[..., 1], cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
        worst = max(worst, float(np.mean(np.abs(pred - gray[t + 1]))))
    return worst


def flow_surprise(
    store,
    metadata: pd.DataFrame,
    *,
    scale: float = 0.02,
    pyr_scale: float = 0.5,
    levels: int = 2,
    winsize: int = 9,
    iterations: int = 3,
    poly_n: int = 5,
    poly_sigma: float = 1.1,
    threads: int = 1,
) -> pd.Series:
    """Optical-flow extrapolation surprise (Farneback flow, OpenCV).

    For each t, flow F between gray frames t-1 and t predicts frame t+1 as
    I_t(x - F(x)); surprise s = max_t mean |prediction - I_{t+1}| (gray in [0, 1]),
    P = exp(-s / scale). Farneback parameters are OpenCV's.
    """
    params = dict(pyr_scale=pyr_scale, levels=levels, winsize=winsize, iterations=iterations, poly_n=poly_n,
                  poly_sigma=poly_sigma)
    scene = store["scene"]
    cv2.setNumThreads(1)

    def one(i, movie):
        return math.exp(-_flow_error(_gray(movie), params) / scale)

    return pd.Series(_map_movies(one, [scene], threads), index=_movies(store), dtype=float)


# --------------------------------------------------------------------------- next-frame predictor
def _features(g: np.ndarray) -> np.ndarray:
    """(T, h, w) -> (T, h*w, 10): bias + 3x3 neighbourhood (edge-replicated) per pixel."""
    T, h, w = g.shape
    p = np.pad(g, ((0, 0), (1, 1), (1, 1)), mode="edge")
    feats = [np.ones((T, h, w), g.dtype)]
    for dy in range(3):
        for dx in range(3):
            feats.append(p[:, dy : dy + h, dx : dx + w])
    return np.stack(feats, axis=-1).reshape(T, h * w, 10)


def _block_stats(block: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Sufficient statistics of one chunk of movies (m, T, H, W, 3)."""
    xtx = np.zeros((size * size, 10, 10))
    xty = np.zeros((size * size, 10))
    yy = np.zeros(size * size)
    n = 0
    for movie in block:
        g = _gray(movie, size).astype(np.float64)
        X = _features(g[:-1])  # (T-1, P, F)
        y = g[1:].reshape(g.shape[0] - 1, -1)  # (T-1, P)
        xtx += np.einsum("tpf,tpg->pfg", X, X)
        xty += np.einsum("tpf,tp->pf", X, y)
        yy += (y * y).sum(axis=0)
        n += X.shape[0]
    return xtx, xty, yy, n


def train_nextframe(
    scenes: Sequence[Any], *, size: int = 16, ridge: float = 1e-3, threads: int = 1
) -> dict[str, np.ndarray]:
    """Fit the per-pixel next-frame regression by streaming chunks of the training set.

    Parameters
    ----------
    scenes : sequence of dask.array.Array, each shape (movie, T, H, W, 3) uint8
        The ``scene`` arrays of the training stores.
    size : int
        Frames are converted to gray and area-downsampled to ``size x size``.
    ridge : float
        Ridge penalty lambda (per sample) added to X^T X (not to the bias).
    threads : int
        Chunks are processed ``threads`` at a time with Dask's threaded
        scheduler; only those chunks are ever in memory.

    Returns
    -------
    dict
        ``weights`` (size*size, 10) and ``n_samples``. For pixel p,
        ``g_{t+1}[p] ~ weights[p] . [1, 3x3 neighbourhood of g_t around p]``,
        the solution of ``(X^T X + lambda n I') w = X^T y`` from the summed
        statistics (each chunk contributes its own X^T X, X^T y).
    """
    blocks = [b for s in scenes for b in s.to_delayed().ravel()]
    if not blocks:
        raise ValueError("train_nextframe: no training movies")
    xtx = np.zeros((size * size, 10, 10))
    xty = np.zeros((size * size, 10))
    n = 0
    step = max(1, int(threads))
    for i in range(0, len(blocks), step):
        parts = dask.compute(*[dask.delayed(_block_stats)(b, size) for b in blocks[i : i + step]],
                             scheduler="threads", num_workers=step)
        for a, b, _, k in parts:
            xtx += a
            xty += b
            n += k
    reg = np.eye(10) * ridge * n
    reg[0, 0] = 0.0
    w = np.linalg.solve(xtx + reg[None], xty[..., None])[..., 0]
    return {"weights": w, "n_samples": np.int64(n), "size": np.int64(size)}


def train_nextframe_stores(store_paths: Sequence[str | os.PathLike], out_path: str | os.PathLike, *,
                           size: int = 16, ridge: float = 1e-3, threads: int = 1) -> Path:
    """Train :func:`train_nextframe` on ingest stores and save the weights (``.npz``) atomically."""
    scenes = [open_store(p)["scene"] for p in store_paths]
    fit = train_nextframe(scenes, size=size, ridge=ridge, threads=threads)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp-{os.getpid()}.npz")
    np.savez(tmp, **fit)
    os.replace(tmp, out)
    return out


def nextframe_surprise(store, metadata: pd.DataFrame, *, weights: Any, scale: float = 0.01,
                       threads: int = 1) -> pd.Series:
    """Worst next-frame prediction error of the trained regression.

    Parameters
    ----------
    weights : path-like or dict
        The ``.npz`` from :func:`train_nextframe_stores` (or its dict).
    scale : float
        P = exp(-s / scale) with s = max_t mean |prediction - g_{t+1}|.
    """
    fit = dict(np.load(weights)) if not isinstance(weights, dict) else weights
    w, size = np.asarray(fit["weights"]), int(fit["size"])
    scene = store["scene"]

    def one(i, movie):
        g = _gray(movie, size)
        pred = np.einsum("tpf,pf->tp", _features(g[:-1]), w)
        err = np.abs(pred - g[1:].reshape(g.shape[0] - 1, -1)).mean(axis=1)
        return math.exp(-float(err.max()) / scale)

    return pd.Series(_map_movies(one, [scene], threads), index=_movies(store), dtype=float)


# --------------------------------------------------------------------------- tracking
def _object_values(masks_grayscale: str | list) -> tuple[dict[int, str], list[int]]:
    pairs = json.loads(masks_grayscale) if isinstance(masks_grayscale, str) else masks_grayscale
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


def tracking_permanence(
    store,
    metadata: pd.DataFrame,
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

    P = exp(-surprise). Object ids are assumed stable within a movie (true of the
    V1.0 masks and of the generator; later releases may reshuffle them per frame).
    """
    params = dict(min_area=min_area, margin=margin, shape_tol=shape_tol, jump=jump, depth_jump_mm=depth_jump_mm)
    movies = _movies(store)
    meta = metadata.set_index("movie").reindex(movies)
    if meta["masks_grayscale"].isna().any():
        raise ModelSpecError("tracking_permanence: metadata lacks masks_grayscale for some movies of the store")
    masks, depth = store["masks"], store.arrays.get("depth")

    def one(i, m, d):
        objects, occluders = _object_values(meta["masks_grayscale"].iloc[i])
        if d is not None and not np.isfinite(d).all():
            d = None
        return math.exp(-_track_surprise(m, d, objects, occluders, params))

    return pd.Series(_map_movies(one, [masks, depth if use_depth else None], threads), index=movies, dtype=float)


MODELS: dict[str, Callable[..., pd.Series]] = {
    "constant": constant,
    "random": random_control,
    "flow": flow_surprise,
    "nextframe": nextframe_surprise,
    "tracking": tracking_permanence,
}


def resolve_model(kind: str) -> Callable[..., pd.Series]:
    """A built-in model name, or ``package.module:function`` for a user model."""
    if kind in MODELS:
        return MODELS[kind]
    if ":" in kind:
        mod, _, fn = kind.partition(":")
        try:
            return getattr(importlib.import_module(mod), fn)
        except (ImportError, AttributeError) as exc:
            raise ModelSpecError(f"plausibility model {kind!r} cannot be imported ({exc})") from exc
    raise ModelSpecError(f"unknown plausibility model {kind!r}; built in: {sorted(MODELS)} or 'module:function'")


def predict_shard(name: str, kind: str, store_path: str | os.PathLike, metadata_path: str | os.PathLike,
                  out_csv: str | os.PathLike, *, params: dict | None = None, threads: int = 1) -> pd.DataFrame:
    """Run model ``kind`` (config name ``name``) on one ingest store; write ``movie, p`` rows.

    Raises
    ------
    ModelSpecError
        Naming the model if it does not return one finite P in [0, 1] per movie.
    """
    fn = resolve_model(kind)
    store = open_store(store_path)
    meta = read_table(metadata_path)
    params = dict(params or {})
    if kind in ("flow", "nextframe", "tracking"):
        params.setdefault("threads", threads)
    p = pd.Series(fn(store, meta, **params), dtype=float)
    movies = _movies(store)
    if sorted(map(str, p.index)) != sorted(movies):
        raise ModelSpecError(f"model {name!r} returned scores for {len(p)} movies, the store has {len(movies)}")
    bad = p[~np.isfinite(p.to_numpy()) | (p < 0) | (p > 1)]
    if len(bad):
        raise ModelSpecError(f"model {name!r} returned P = {bad.iloc[0]!r} for movie {bad.index[0]!r}; need [0, 1]")
    df = pd.DataFrame({"movie": movies, "p": p.reindex(movies).to_numpy()})
    write_table(df, out_csv, parquet=False)
    return df
