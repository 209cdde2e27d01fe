"""Feature maps of the attention models, streamed over time (Shic & Scassellati 2007, sec. 2.2, 5.2).

The saliency-model interface
----------------------------
A saliency model of the attention track (a *feature family*) is a function ::

    f(frames, *, **params) -> maps

* ``frames``: ndarray, shape (t, H, W), float32 luminance in [0, 1] on the model
  grid (40x30 by default): a block of consecutive frames of one movie;
* ``maps``: ndarray, shape (t, H, W, K), the model's *base maps*, K channels, one
  sample per input frame, causal (a map of frame i may use frames <= i only);
* ``params``: the arguments after ``frames``, ordinary or keyword-only, with a
  default or set by the config entry under ``params`` (``psybench models`` lists them;
  :mod:`psybench.model_params`).

A function that needs the frames before its block declares it with an attribute
``f.history_frames = n``; it is then called as ``f(frames, history=past, **params)``
with ``past`` the (up to n, H, W) frames preceding the block (``None`` for the
first block). An optional attribute ``f.channels`` names the K channels (a
sequence of K names, or a format string such as ``"G{}"``).

psybench's families are registered with
``@register(name, track="attention", kind="saliency")``: ``raw`` and ``pyramid``
(:mod:`psybench.attention.families`) and ``itti``
(:mod:`psybench.attention.itti`). A user's function is named in the config as
``callable: package.module:function``, without editing psybench. The feature
*vector* of a point (sec. 5.2) is assembled later
(:func:`psybench.attention.tuning.feature_vectors`): the base maps in the ``L x L``
neighbourhood of the point at the two past times -100 ms and -300 ms, so
ND = K x L^2 x 2; ``L`` belongs to the model's config entry, not to the function
(:mod:`psybench.attention.models`).

Streaming: :func:`feature_maps` builds a Dask array whose time chunks are computed
independently, each from its own frames plus the frames of history the model
declares (3 for the Itti model's motion modality; before frame 0 the Itti model
repeats the first frame, i.e. no motion at onset). Memory is bounded by the chunk
size, not the movie length.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np

from psybench.attention.defaults import CHUNK_FRAMES, LAGS_MS
from psybench.attention.grid_coords import grid_coords
from psybench.io.store import ArraySpec, open_store, write_store
from psybench.model_checks import check_maps, exits_are_errors, model_failure, read_only
from psybench.registry import ModelError, get_algorithm, list_algorithms, load_callable

__all__ = ["saliency_function", "channel_names", "feature_maps", "write_feature_store", "write_feature_stores"]


def saliency_function(model: str | Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    """``(name, function)`` of a feature family.

    Parameters
    ----------
    model : str or callable
        A registered attention saliency model (``"raw"``, ``"pyramid"``, ``"itti"``
        or a plugin's), a ``"package.module:function"`` path, or the function itself.
    """
    if callable(model):
        return f"{model.__module__}:{model.__qualname__}", model
    if isinstance(model, str) and ":" in model:
        return model, load_callable(model, model=model)
    known = [a.name for a in list_algorithms("attention")]
    if model not in known:
        raise ValueError(f"saliency model {model!r} is not one of {known} (the registered attention saliency "
                         "models) nor a 'package.module:function' path")
    return model, get_algorithm(model, track="attention").function


def channel_names(func: Callable[..., Any], n: int) -> list[str]:
    """Names of the ``n`` channels of ``func``'s maps (its ``channels`` attribute, else c0, c1, ...)."""
    names = getattr(func, "channels", "c{}")
    if isinstance(names, str):
        return [names.format(i) for i in range(n)]
    names = [str(c) for c in names]
    return names if len(names) == n else [f"c{i}" for i in range(n)]


def _block(src: np.ndarray, drop: int, name: str, func: Callable[..., Any], params: Mapping[str, Any]) -> np.ndarray:
    """Maps of ``src[drop:]``, the model reading ``src[:drop]`` as history if it declares some."""
    src = read_only(np.asarray(src, np.float32))  # a model writing into its input raises, naming it
    t, H, W = src[drop:].shape
    where = f"a block of {t} frames"
    try:
        if getattr(func, "history_frames", 0):
            out = func(src[drop:], history=src[:drop] if drop else None, **params)
        else:
            out = func(src[drop:], **params)
    except ModelError:  # a ModelExit (exits_are_errors) already names the model
        raise
    except Exception as exc:
        raise model_failure(name, exc, where, label="saliency model") from exc
    maps = check_maps(name, "maps", out, (t, H, W, None), where, label="saliency model")
    return maps.astype(np.float32, copy=False)


def feature_maps(frames, *, model: str | Callable[..., Any], chunk_frames: int = CHUNK_FRAMES, **params) -> da.Array:
    """Base maps of a movie as a lazily computed Dask array, shape (T, H, W, K), float32.

    Each chunk of ``chunk_frames`` frames is computed by one task from its frames
    and the history the model declares (none for raw and pyramid, 3 frames for
    Itti), so computing the array (e.g. while writing a store) streams over time.

    Parameters
    ----------
    frames : ndarray or dask.array.Array, shape (T, H, W)
    model : str or callable
        The feature family (see :func:`saliency_function`).
    chunk_frames : int
    **params
        Keyword parameters of the family's function.
    """
    name, func = saliency_function(model)
    if chunk_frames < 1:
        raise ValueError(f"chunk_frames must be >= 1, got {chunk_frames!r}")
    frames = (
        frames
        if isinstance(frames, da.Array)
        else da.from_array(np.asarray(frames, np.float32), chunks=(chunk_frames, -1, -1))
    )
    if frames.ndim != 3:
        raise ValueError(f"frames must have shape (T, H, W), got {frames.shape}")
    T, H, W = frames.shape
    # the channel count K, from the maps of the first frame
    C = _block(np.asarray(frames[:1]), 0, name, func, dict(params)).shape[-1]
    history = int(getattr(func, "history_frames", 0))
    blocks = []
    for a in range(0, T, chunk_frames):
        b = min(T, a + chunk_frames)
        lo = max(0, a - history)
        task = dask.delayed(_block)(frames[lo:b], a - lo, name, func, dict(params))
        blocks.append(da.from_delayed(task, shape=(b - a, H, W, C), dtype=np.float32))
    return da.concatenate(blocks, axis=0)


def write_feature_store(
    stimulus: str | os.PathLike,
    out: str | os.PathLike,
    *,
    model: str | Callable[..., Any],
    chunk_frames: int = CHUNK_FRAMES,
    lags_ms: tuple[float, ...] = LAGS_MS,
    num_workers: int | None = None,
    code_hash: str | None = None,
    **params,
) -> Path:
    """Compute the base maps of a stimulus store and write them as a feature store.

    The store holds ``maps`` (dims t, y, x, channel) and attributes ``features``
    (saliency model, parameters, channel names), ``lags_ms`` and the stimulus' ``frames_per_s``,
    ``grid`` and ``source_size``.
    """
    name, func = saliency_function(model)
    stim = open_store(stimulus)
    frames = stim["frames"].astype(np.float32)
    with exits_are_errors(name, f"movie {Path(stimulus).name}", label="saliency model"):  # maps computed as written
        maps = feature_maps(frames, model=func, chunk_frames=chunk_frames, **params)
        names = channel_names(func, maps.shape[-1])
        attrs = {k: stim.attrs.get(k) for k in ("frames_per_s", "grid", "source_size", "px_per_deg", "stimulus")}
        attrs.update(
            {
                "features": {"model": name, "params": dict(params), "channels": names},
                "lags_ms": [float(x) for x in lags_ms],
                "code_hash": code_hash,
            }
        )
        return write_store(
            out, {"maps": ArraySpec(maps, ("t", "y", "x", "channel"), attrs={"channels": names})}, attrs,
            num_workers=num_workers, coords=grid_coords(attrs, maps.shape[0]),
        )


def write_feature_stores(
    stimulus: str | os.PathLike,
    stores: list[Mapping[str, Any]],
    *,
    chunk_frames: int = CHUNK_FRAMES,
    lags_ms: tuple[float, ...] = LAGS_MS,
    num_workers: int | None = None,
) -> list[Path]:
    """:func:`write_feature_store` of one stimulus for several saliency models, in one process.

    The workflow's one job per movie: the interpreter, imports and stimulus check are
    paid once for every model instead of once per model; each store is the one
    :func:`write_feature_store` writes alone (it is called in turn).

    Parameters
    ----------
    stores : list of mappings with keys ``out`` (store path), ``model`` (family),
        ``params`` (its keyword parameters) and ``code_hash``
    """
    return [
        write_feature_store(stimulus, s["out"], model=s["model"], chunk_frames=chunk_frames, lags_ms=lags_ms,
                            num_workers=num_workers, code_hash=s.get("code_hash"), **dict(s.get("params") or {}))
        for s in stores
    ]
