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

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np

from psybench.attention.defaults import CHUNK_FRAMES, LAGS_MS
from psybench.attention.grid_coords import grid_coords
from psybench.handoff import as_model
from psybench.io.store import ArraySpec, open_store, write_store
from psybench.model_checks import call_model, exits_are_errors, model_label, read_only
from psybench.registry import ModelError, ModelSpec, list_algorithms, resolve_model

__all__ = ["saliency_model", "channel_names", "feature_maps", "write_feature_store", "write_feature_stores"]

#: What a saliency model may be given as: resolved, its description or config entry, a family name,
#: a ``package.module:function`` path, or the function itself.
SaliencyModelLike = ModelSpec | Mapping[str, Any] | str | Callable[..., Any]


def saliency_model(model: SaliencyModelLike, **params: Any) -> ModelSpec:
    """The resolved saliency model (a feature family) with ``params`` (the registry's resolver).

    Parameters
    ----------
    model : ModelSpec, mapping, str or callable
        A resolved model, its description (:func:`psybench.handoff.describe_model`,
        what the workflow's jobs receive) or config entry; or a registered attention
        saliency model (``"raw"``, ``"pyramid"``, ``"itti"`` or a plugin's), a
        ``"package.module:function"`` path or the function itself, named by that
        name or path.
    **params
        Its parameters (not with a resolved model or description, which carry theirs).
    """
    if isinstance(model, (ModelSpec, Mapping)):
        if params:
            raise ModelError(f"saliency model {getattr(model, 'name', None) or model.get('name')!r}: parameters "
                             f"{sorted(params)} given beside a resolved model or description, which carries its own")
        return as_model(model, track="attention")
    if callable(model):
        entry = {"name": f"{model.__module__}:{model.__qualname__}", "callable": model, "kind": "saliency"}
    elif isinstance(model, str) and ":" in model:
        entry = {"name": model, "callable": model, "kind": "saliency"}
    else:
        known = [a.name for a in list_algorithms("attention")]
        if model not in known:
            raise ModelError(f"saliency model {model!r} is not one of {known} (the registered attention saliency "
                             "models) nor a 'package.module:function' path")
        entry = {"name": model, "algorithm": model}
    return resolve_model({**entry, "params": params}, track="attention")


def channel_names(func: Callable[..., Any], n: int) -> list[str]:
    """Names of the ``n`` channels of ``func``'s maps (its ``channels`` attribute, else c0, c1, ...)."""
    names = getattr(func, "channels", "c{}")
    if isinstance(names, str):
        return [names.format(i) for i in range(n)]
    names = [str(c) for c in names]
    return names if len(names) == n else [f"c{i}" for i in range(n)]


def _block(spec: ModelSpec, src: np.ndarray, drop: int) -> np.ndarray:
    """Maps of ``src[drop:]``, the model reading ``src[:drop]`` as history if it declares some."""
    src = read_only(np.asarray(src, np.float32))  # a model writing into its input raises, naming it
    t, H, W = src[drop:].shape
    history = {"history": src[:drop] if drop else None} if getattr(spec.algorithm.function, "history_frames", 0) else {}
    maps = call_model(spec, src[drop:], where=f"a block of {t} frames", expected=(t, H, W, None), **history)
    return maps.astype(np.float32, copy=False)


def feature_maps(frames, *, model: SaliencyModelLike, chunk_frames: int = CHUNK_FRAMES, **params) -> da.Array:
    """Base maps of a movie as a lazily computed Dask array, shape (T, H, W, K), float32.

    Each chunk of ``chunk_frames`` frames is computed by one task from its frames
    and the history the model declares (none for raw and pyramid, 3 frames for
    Itti), so computing the array (e.g. while writing a store) streams over time.

    Parameters
    ----------
    frames : ndarray or dask.array.Array, shape (T, H, W)
    model : ModelSpec, mapping, str or callable
        The feature family (see :func:`saliency_model`).
    chunk_frames : int
    **params
        Keyword parameters of the family's function.
    """
    spec = saliency_model(model, **params)
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
    C = _block(spec, np.asarray(frames[:1]), 0).shape[-1]
    history = int(getattr(spec.algorithm.function, "history_frames", 0))
    block = functools.partial(_block, spec)  # the spec as it is: dask would rebuild a dataclass argument
    blocks = []
    for a in range(0, T, chunk_frames):
        b = min(T, a + chunk_frames)
        lo = max(0, a - history)
        task = dask.delayed(block)(frames[lo:b], a - lo)
        blocks.append(da.from_delayed(task, shape=(b - a, H, W, C), dtype=np.float32))
    return da.concatenate(blocks, axis=0)


def write_feature_store(
    stimulus: str | os.PathLike,
    out: str | os.PathLike,
    *,
    model: SaliencyModelLike,
    chunk_frames: int = CHUNK_FRAMES,
    lags_ms: tuple[float, ...] = LAGS_MS,
    num_workers: int | None = None,
    code_hash: str | None = None,
    movie_file: str | os.PathLike | None = None,
    **params,
) -> Path:
    """Compute the base maps of a stimulus store and write them as a feature store.

    The store holds ``maps`` (dims t, y, x, channel) and attributes ``features``
    (the family: registered name or ``package.module:function``; every parameter,
    defaults filled; channel names), ``lags_ms`` and the stimulus' ``frames_per_s``,
    ``grid`` and ``source_size``. ``model`` and ``params`` as :func:`saliency_model`.

    A model of kind ``features`` (a deep network, :mod:`psybench.attention.deep_models`)
    is built once (:func:`psybench.deep.built`, ``num_workers`` torch threads) and run on
    the movie's RGB frames (decoded again from ``movie_file`` when the stimulus was
    ingested from one) in batches of its ``batch_size``; its maps are area-pooled to the
    grid, and the store's attributes add the weights digest and the torch environment.
    """
    spec = saliency_model(model, **params)
    if spec.kind == "features":
        return _write_deep_feature_store(stimulus, out, spec, movie_file=movie_file, lags_ms=lags_ms,
                                         threads=num_workers or 1, code_hash=code_hash)
    stim = open_store(stimulus)
    frames = stim["frames"].astype(np.float32)
    # the maps are computed as they are written
    with exits_are_errors(spec.name, f"movie {Path(stimulus).name}", label=model_label(spec)):
        maps = feature_maps(frames, model=spec, chunk_frames=chunk_frames)
        names = channel_names(spec.algorithm.function, maps.shape[-1])
        attrs = {k: stim.attrs.get(k) for k in ("frames_per_s", "grid", "source_size", "px_per_deg", "stimulus")}
        attrs.update(
            {
                "features": {"model": spec.algorithm.name, "params": dict(spec.params), "channels": names},
                "lags_ms": [float(x) for x in lags_ms],
                "code_hash": code_hash,
            }
        )
        return write_store(
            out, {"maps": ArraySpec(maps, ("t", "y", "x", "channel"), attrs={"channels": names})}, attrs,
            num_workers=num_workers, coords=grid_coords(attrs, maps.shape[0]),
        )


def _write_deep_feature_store(stimulus, out, spec: ModelSpec, *, movie_file, lags_ms, threads: int,
                              code_hash) -> Path:
    """:func:`write_feature_store` of a ``features`` model: built once, run on RGB batches."""
    from psybench.attention.deep_models import write_rgb_feature_store
    from psybench.deep import built, environment_attrs, weights_digest

    description: dict[str, Any] = {"model": spec.algorithm.name, "params": dict(spec.params)}
    if spec.weights is not None:
        description["weights_digest"] = weights_digest(spec.weights)
    with exits_are_errors(spec.name, f"movie {Path(stimulus).name}", label=model_label(spec)), \
            built(spec, threads=threads) as (net, device):
        return write_rgb_feature_store(stimulus, out, model=net, description=description, movie_file=movie_file,
                                       batch_size=spec.batch_size, lags_ms=lags_ms, code_hash=code_hash,
                                       extra_attrs={"torch_environment": environment_attrs(device)})


def write_feature_stores(
    stimulus: str | os.PathLike | None,
    stores: list[Mapping[str, Any]],
    *,
    chunk_frames: int = CHUNK_FRAMES,
    lags_ms: tuple[float, ...] = LAGS_MS,
    num_workers: int | None = None,
    movie_file: str | os.PathLike | None = None,
) -> list[Path]:
    """:func:`write_feature_store` for several (model, stimulus) stores, in one process.

    The workflow's one job per feature family writes that family's store of every
    movie (so that a changed model, e.g. a new weights file, reruns its own job only):
    the interpreter, imports and set-up are paid once per job instead of once per
    store; each store is the one :func:`write_feature_store` writes alone (it is
    called in turn).

    Parameters
    ----------
    stimulus : path-like or None
        The stimulus store of every entry that names none.
    stores : list of mappings with keys ``out`` (store path), ``model`` (the model's
        description, :func:`psybench.handoff.describe_model`, or a family with its
        keyword ``params``), ``code_hash``, and optionally ``stimulus`` and
        ``movie_file`` (this store's own, in place of the arguments')
    movie_file : path-like, optional
        The movie file the stimulus was ingested from (RGB frames of ``features`` models).
    """
    out = []
    for s in stores:
        stim = s.get("stimulus", stimulus)
        if stim is None:
            raise ValueError(f"feature store {s['out']}: no stimulus store given")
        out.append(write_feature_store(stim, s["out"], model=s["model"], chunk_frames=chunk_frames, lags_ms=lags_ms,
                                       num_workers=num_workers, code_hash=s.get("code_hash"),
                                       movie_file=s.get("movie_file", movie_file), **dict(s.get("params") or {})))
    return out
