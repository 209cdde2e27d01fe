"""Run a motion model on a stimulus store and write its response store.

A response store (one per model and stimulus) holds

``flow`` : float32, dims ``(t, y, x, component)``, components ``(u, v)`` in px/frame
    One sample per stimulus frame. For pair models ``flow[t]`` is the motion
    between frames ``t - 1`` and ``t`` and ``flow[0] = 0`` (no motion has been seen
    yet); stream models are causal and give their own ``flow[t]``.
``mean_flow`` : float64, dims ``(t, component)``, px/frame
    The domain mean of each frame's stored ``flow`` (the input ``vbar`` of RR-7317
    eq. 3, :func:`psybench.motion.population.domain_mean_flow`), computed from the
    flow in memory as it is written: the readouts read these kilobytes instead of
    decoding the whole flow (the same bits as reducing the stored flow). A store
    without it (written before, or by other code) is reduced from ``flow``.
``p`` : float32, dims ``(t, y, x, velocity)``, optional
    A distributed velocity representation, with the velocities (px/frame) in the
    array attribute ``velocities``; written only when asked for
    (``write_population``, default True here; the workflow's ``motion.write_population``,
    default off): the
    readouts use ``flow`` (the readout of RR-7317 eq. 2 a model computes itself),
    and ``p`` is t x H x W x V float32, tens of times the size of ``flow``.

``flow`` and ``p`` are compressed with Blosc-LZ4 over byte-shuffled float32
(:data:`FLOW_COMPRESSORS`, :mod:`psybench.io.codecs`).

A batch (:func:`run_motion_model_batch`) runs one model on many stimuli in one
process, so that interpreter start-up, imports and model resolution are paid
once per batch; each stimulus still gets its own store, identical to the store
:func:`run_motion_model` writes alone.

Frames are read and processed in blocks along time, so memory does not grow
with movie length. A model whose output has the wrong shape or non-finite
values stops the run with a :class:`~psybench.registry.ModelError` naming it.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from psybench.handoff import as_model, describe_model
from psybench.io.codecs import FLOAT_COMPRESSORS
from psybench.io.integrity import open_group, verify_store
from psybench.io.store import StreamSpec, write_store_stream
from psybench.model_checks import (
    call_model,
    check_maps,
    exits_are_errors,
    model_blocks,
    model_failure,
    read_only,
)
from psybench.motion.display import Display
from psybench.motion.population import domain_mean_flow
from psybench.progress import progress
from psybench.registry import DEFAULT_BATCH_SIZE, ModelError, ModelSpec

__all__ = [
    "FLOW_COMPRESSORS",
    "batched_pair_blocks",
    "motion_response_blocks",
    "paired_stores",
    "run_motion_model",
    "run_motion_model_batch",
]


#: The codec of the responses' ``flow`` and ``p``: :data:`psybench.io.codecs.FLOAT_COMPRESSORS`.
FLOW_COMPRESSORS = FLOAT_COMPRESSORS


def motion_response_blocks(
    spec: ModelSpec, frames: Any, display: Display, *, block_frames: int = 16, threads: int = 1,
    population: bool = True, stimulus: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, np.ndarray]]:
    """Yield response blocks ``{"flow": (t, H, W, 2) [, "p": (t, H, W, V)]}`` aligned with ``frames``.

    Parameters
    ----------
    spec : ModelSpec
        A motion model of kind ``"pair"``, ``"stream"`` or ``"pairs"`` (a batched deep model,
        built once here by :func:`psybench.deep.built` and fed by :func:`batched_pair_blocks`).
    frames : array_like or dask.array.Array, shape (T, H, W)
        Luminance in [0, 1].
    display : Display
    block_frames : int
        Frames read per block.
    threads : int
        Worker threads for pair models (OpenCV and NumPy release the GIL); torch's threads
        for a ``pairs`` model.
    population : bool
        False: a stream model that can skip its population (a ``return_p`` keyword, the
        built-in bio-inspired models) is asked not to build ``p``; its flow is the same
        (a run-time switch, not a model parameter: it is not recorded).
    """
    n_t, height, width = frames.shape
    switches = {}
    if not population and "return_p" in inspect.signature(spec.algorithm.function).parameters:
        switches["return_p"] = False
    if spec.kind == "stream" and "stimulus" in inspect.signature(spec.algorithm.function).parameters:
        switches["stimulus"] = dict(stimulus or {})

    def load(a: int, b: int) -> np.ndarray:
        block = frames[a:b]
        block = block.compute() if hasattr(block, "compute") else np.asarray(block)
        # read-only: a model that writes into its input frames raises (naming it) instead of
        # changing the frames the next pair or model sees
        return read_only(np.asarray(block, dtype=np.float32))

    if spec.kind == "pair":
        def pair(i: int, f0: np.ndarray, f1: np.ndarray) -> np.ndarray:
            out = call_model(spec, f0, f1, where=f"frames {i - 1}-{i}", expected=(height, width, 2), **switches)
            return out.astype(np.float32, copy=False)

        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            for start in range(0, n_t, block_frames):
                stop = min(n_t, start + block_frames)
                lo = max(0, start - 1)
                block = load(lo, stop)
                idx = list(range(max(start, 1), stop))
                # consumed by pool.map within this iteration
                flows = list(pool.map(lambda i: pair(i, block[i - 1 - lo], block[i - lo]), idx))  # noqa: B023
                out = np.zeros((stop - start, height, width, 2), np.float32)
                if flows:
                    out[stop - start - len(flows):] = np.stack(flows)
                yield {"flow": out}
    elif spec.kind == "stream":
        chunks = (load(a, min(n_t, a + block_frames)) for a in range(0, n_t, block_frames))
        start = 0
        for block in model_blocks(spec, call_model(spec, chunks, where="", display=display, **switches)):
            if not isinstance(block, dict):
                raise ModelError(
                    f"model {spec.name!r} yielded {type(block).__name__}, expected a dict like {{'flow': array}}"
                )
            for key, value in block.items():  # the store would turn a list into an array: refuse it here
                if not isinstance(value, np.ndarray):
                    check_maps(spec.name, key, value, (), f"the block from frame {start}")
            start += len(block.get("flow", ()))
            yield block
    elif spec.kind == "pairs":
        from psybench.deep import built  # torch only for a deep model's job

        with built(spec, threads=threads) as (model, _):  # once per job, released after the last batch
            yield from batched_pair_blocks(model, frames, name=spec.name,
                                           batch_size=spec.batch_size or DEFAULT_BATCH_SIZE)
    else:
        raise ModelError(
            f"model {spec.name!r}: kind {spec.kind!r} is not a motion model kind ('pair', 'pairs' or 'stream')"
        )


def batched_pair_blocks(
    model: Any, frames: Any, *, name: str, batch_size: int = DEFAULT_BATCH_SIZE,
) -> Iterator[dict[str, np.ndarray]]:
    """Yield ``{"flow": (t, H, W, 2)}`` blocks of a batched pair model (kind ``"pairs"``) along ``frames``.

    The pairs ``(t - 1, t)`` for ``t = 1 .. T - 1`` go to ``model(frames0, frames1)`` in
    consecutive batches of ``batch_size`` (the last one shorter), each read from the store
    on its own, so that memory does not grow with movie length; ``flow[0] = 0`` as for a
    ``pair`` model. The frames are float32 copies that the model may write into (torch
    warns on read-only arrays).

    Parameters
    ----------
    model : callable
        ``model(frames0, frames1) -> flows``: ``frames0``, ``frames1`` ndarray, shape (B, H, W),
        float32 luminance in [0, 1]; ``flows`` ndarray, shape (B, H, W, 2), px/frame,
        ``frames0[b](x) ~ frames1[b](x + flows[b](x))``.
    frames : array_like or zarr.Array, shape (T, H, W)
    name : str
        The model's configured name (for the messages).
    batch_size : int
        Pairs per call.

    Raises
    ------
    ModelError
        If the model raises, or returns anything but a finite float array of shape (B, H, W, 2).
    """
    n_t, height, width = frames.shape
    if n_t and n_t < 2:
        yield {"flow": np.zeros((n_t, height, width, 2), np.float32)}
    for start in range(1, n_t, batch_size):
        stop = min(n_t, start + batch_size)
        block = frames[start - 1:stop]
        block = np.asarray(block.compute() if hasattr(block, "compute") else block, dtype=np.float32)
        where = f"frames {start - 1}-{stop - 1}"
        try:  # two copies: a model that writes into frames0 does not change frames1
            flows = model(block[:-1].copy(), block[1:].copy())
        except ModelError:
            raise
        except Exception as exc:
            raise model_failure(name, exc, where) from exc
        flows = check_maps(name, "flow", flows, (stop - start, height, width, 2), where).astype(np.float32, copy=False)
        if start == 1:  # no motion has been seen at frame 0
            flows = np.concatenate([np.zeros((1, height, width, 2), np.float32), flows])
        yield {"flow": flows}


def run_motion_model(
    spec: ModelSpec | Mapping[str, Any],
    stimulus_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    code_hash: str = "",
    threads: int = 1,
    block_frames: int = 16,
    write_population: bool = True,
    show_progress: bool = True,
) -> Path:
    """Run ``spec`` on the stimulus store at ``stimulus_path`` and write ``out_path``.

    The response store's attributes carry the stimulus attributes (display
    mapping, stimulus parameters, ground truth), the model description and
    ``code_hash``. ``spec`` may also be the model's description
    (:func:`psybench.handoff.describe_model`) or config entry. A model's population ``p`` (stream models
    with a ``velocities`` grid) is stored only if ``write_population``; ``flow``
    is the same either way. ``show_progress``: a line per block with the time left
    (:mod:`psybench.progress`); a batch reports per stimulus instead.
    """
    spec = as_model(spec, track="motion")
    verify_store(stimulus_path, deep=True)  # a corrupted chunk must not be read silently
    stim = open_group(Path(stimulus_path))  # the frames read block by block with Zarr: no Dask to import
    frames = stim["frames"]
    display = Display.from_config(stim.attrs["display"])
    n_t, height, width = frames.shape
    velocities = getattr(spec.algorithm.function, "velocities", None)
    specs = {
        "flow": StreamSpec(
            (n_t, height, width, 2), "float32", ("t", "y", "x", "component"),
            attrs={
                "units": "px/frame",
                "components": ["u", "v"],
                "convention": "frame[t-1](x) ~ frame[t](x + flow[t](x))",
            },
            compressors=FLOW_COMPRESSORS,
        ),
        "mean_flow": StreamSpec(
            (n_t, 2), "float64", ("t", "component"),
            attrs={"units": "px/frame", "components": ["u", "v"],
                   "description": "domain mean of each frame's flow (psybench.motion.population.domain_mean_flow)"},
        ),
    }
    if velocities is not None and write_population:
        if callable(velocities):  # a grid in physical units needs the display (px/deg, frames/s) to be px/frame
            takes = inspect.signature(velocities).parameters
            wants = "display" in takes or any(p.kind is p.VAR_KEYWORD for p in takes.values())
            velocities = velocities(display=display, **spec.params) if wants else velocities(**spec.params)
        velocities = np.asarray(velocities, dtype=float)
        specs["p"] = StreamSpec(
            (n_t, height, width, len(velocities)), "float32", ("t", "y", "x", "velocity"),
            attrs={"velocities": velocities.tolist(), "velocity_units": "px/frame"}, compressors=FLOW_COMPRESSORS,
        )

    def check(name: str, block: np.ndarray, start: int) -> None:
        if name not in specs:
            raise ModelError(f"model {spec.name!r} yielded an unknown output {name!r}")
        if block.ndim != len(specs[name].shape):
            raise ModelError(
                f"model {spec.name!r} yielded {name!r} of shape {block.shape} from frame {start}, "
                f"expected (t,) + {tuple(specs[name].shape[1:])}"
            )
        check_maps(spec.name, name, block, (block.shape[0],) + tuple(specs[name].shape[1:]),
                      f"frames {start}-{start + block.shape[0] - 1}")

    attrs = {
        "stage": "responses",
        "display": stim.attrs["display"],
        "stimulus": stim.attrs.get("stimulus", {}),
        "model": describe_model(spec),
        "code_hash": code_hash,
    }
    if spec.deep:  # torch and CUDA versions, the device and the determinism settings the model runs under
        from psybench.deep import environment_attrs, resolve_device, torch_session

        device = resolve_device(spec.device, model=spec.name)
        with torch_session(threads=threads, device=device):
            attrs["environment"] = environment_attrs(device)
    blocks = motion_response_blocks(spec, frames, display, block_frames=block_frames, threads=threads,
                                    population=write_population, stimulus=attrs["stimulus"])
    if show_progress:  # a batch reports per stimulus instead (run_motion_model_batch)
        blocks = progress(blocks, f"motion responses of {spec.name} ({block_frames}-frame blocks)",
                          total=-(-n_t // block_frames))
    if velocities is not None and not write_population:  # computed by the model, not stored
        blocks = ({k: v for k, v in b.items() if k != "p"} if isinstance(b, dict) else b for b in blocks)
    blocks = _with_mean_flow(spec, blocks)
    try:
        # the velocity coordinate labels p, stored only with write_population (velocities then resolved above)
        coords = display.coords(n_t, height, width, velocities=velocities if "p" in specs else None)
        with exits_are_errors(spec.name, f"stimulus {Path(stimulus_path).name}"):  # the model runs as blocks are read
            return write_store_stream(out_path, specs, blocks, attrs, check=check, coords=coords)
    except ValueError as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"model {spec.name!r}: {exc}") from exc


def _with_mean_flow(spec: ModelSpec, blocks: Iterator[Any]) -> Iterator[Any]:
    """Each block with the domain mean of its flow as stored (float32) added after it, as ``mean_flow``.

    A block that the writer's check will refuse (not a dict, a flow of the wrong shape)
    passes unchanged, so that the check names the model's fault.
    """
    for block in blocks:
        if isinstance(block, dict) and "mean_flow" in block:
            raise ModelError(f"model {spec.name!r} yielded 'mean_flow', which the response stage computes itself")
        flow = block.get("flow") if isinstance(block, dict) else None
        if isinstance(flow, np.ndarray) and flow.ndim == 4 and flow.shape[-1] == 2:
            # the float32 values the store holds (the writer casts the same way)
            block = {**block, "mean_flow": domain_mean_flow(flow.astype(np.float32, copy=False))}
        yield block


def run_motion_model_batch(
    spec: ModelSpec | Mapping[str, Any],
    stimulus_paths: Sequence[str | os.PathLike],
    out_paths: Sequence[str | os.PathLike],
    **kwargs: Any,
) -> list[Path]:
    """Run one model on many stimuli in one process: :func:`run_motion_model` per pair.

    Parameters
    ----------
    spec : ModelSpec or mapping
        The model, or its description (resolved once for the whole batch).
    stimulus_paths, out_paths : sequence of path-like, length N
        Stimulus stores and their response stores, pairwise (same store name).
    **kwargs
        Passed to :func:`run_motion_model` (``code_hash``, ``threads``,
        ``block_frames``, ``write_population``).

    Returns
    -------
    list of pathlib.Path, length N

    Raises
    ------
    ValueError
        If the lists differ in length or a pair names different stimuli.
    """
    pairs = paired_stores(stimulus_paths, out_paths, "stimulus store", "response output")
    spec = as_model(spec, track="motion")
    return [run_motion_model(spec, src, dst, show_progress=False, **kwargs)
            for src, dst in progress(pairs, f"motion responses of {spec.name} (stimuli)")]


def paired_stores(
    inputs: Sequence[str | os.PathLike], outputs: Sequence[str | os.PathLike], what_in: str, what_out: str
) -> list[tuple[str | os.PathLike, str | os.PathLike]]:
    """Pair a stage's input and output stores of one batch, one stimulus each (same store name).

    Raises
    ------
    ValueError
        If the lengths differ or a pair names different stimuli (``what_in``/``what_out``
        name the two kinds of store in the message).
    """
    inputs, outputs = list(inputs), list(outputs)
    if len(inputs) != len(outputs):
        raise ValueError(f"{len(inputs)} {what_in}s but {len(outputs)} {what_out}s")
    for src, dst in zip(inputs, outputs):
        if Path(src).name != Path(dst).name:
            raise ValueError(f"{what_in} {src} does not match {what_out} {dst} (different stimulus)")
    return list(zip(inputs, outputs))
