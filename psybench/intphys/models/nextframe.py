"""A streamed next-frame predictor and its surprise.

A per-pixel linear autoregression of frame t+1 on the 3x3 neighbourhood of
frame t (downsampled gray), trained by streaming the training stores with Dask
(:func:`train_nextframe`); the surprise of a movie is its worst frame
prediction error (:func:`nextframe_surprise`). A linear stand-in for the
future-prediction baselines of Riochet et al. 2018 (IntPhys V1.0, "Baseline
results"), trained, like them, on the possible-only training split.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psybench.intphys.models.observation import Observation, luminance, map_movies
from psybench.io.atomic import atomic_output
from psybench.progress import progress
from psybench.registry import register

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["train_nextframe", "train_nextframe_stores", "nextframe_surprise"]

NEXTFRAME_REFERENCE = ("Riochet et al. 2018 (IntPhys V1.0), \"Baseline results\": plausibility from "
                       "future-prediction error (here a linear next-frame regression)")


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
        g = luminance(movie, size).astype(np.float64)
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
    import dask  # here: the registry imports this module at planning, without Dask

    blocks = [b for s in scenes for b in s.to_delayed().ravel()]
    if not blocks:
        raise ValueError("train_nextframe: no training movies")
    xtx = np.zeros((size * size, 10, 10))
    xty = np.zeros((size * size, 10))
    n = 0
    step = max(1, int(threads))
    for i in progress(range(0, len(blocks), step), "IntPhys next-frame training (blocks of movies)"):
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
    from psybench.io.store import open_store  # here: see train_nextframe

    scenes = [open_store(p)["scene"] for p in store_paths]
    fit = train_nextframe(scenes, size=size, ridge=ridge, threads=threads)
    out = Path(out_path)
    with atomic_output(out) as tmp:  # the temporary keeps the .npz suffix, so np.savez adds none
        np.savez(tmp, **fit)
    return out


@register("nextframe", track="intphys", kind="plausibility", reference=NEXTFRAME_REFERENCE,
          bounds={"threads": (0, 256)})
def nextframe_surprise(observation: Observation, *, weights: Any, scale: float = 0.01,
                       threads: int = 1) -> pd.Series:
    """Worst next-frame prediction error of the trained regression.

    Parameters
    ----------
    weights : path-like or dict
        The ``.npz`` from :func:`train_nextframe_stores` (or its dict); the
        workflow passes the output of rule ``intphys_train``.
    scale : float
        P = exp(-s / scale) with s = max_t mean |prediction - g_{t+1}|.
    """
    import pandas as pd
    fit = dict(np.load(weights)) if not isinstance(weights, dict) else weights
    w, size = np.asarray(fit["weights"]), int(fit["size"])

    def one(i, movie):
        g = luminance(movie, size)
        pred = np.einsum("tpf,pf->tp", _features(g[:-1]), w)
        err = np.abs(pred - g[1:].reshape(g.shape[0] - 1, -1)).mean(axis=1)
        return math.exp(-float(err.max()) / scale)

    return pd.Series(map_movies(one, [observation.scene], threads), index=list(observation.movies), dtype=float)
