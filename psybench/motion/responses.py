"""Run a motion model on a stimulus store and write its response store.

A response store (one per model and stimulus) holds

``flow`` : float32, dims ``(t, y, x, component)``, components ``(u, v)`` in px/frame
    One sample per stimulus frame. For pair models ``flow[t]`` is the motion
    between frames ``t - 1`` and ``t`` and ``flow[0] = 0`` (no motion has been seen
    yet); stream models are causal and give their own ``flow[t]``.
``p`` : float32, dims ``(t, y, x, velocity)``, optional
    A distributed velocity representation, with the velocities (px/frame) in the
    array attribute ``velocities``.

Frames are read and processed in blocks along time, so memory does not grow
with movie length. A model whose output has the wrong shape or non-finite
values stops the run with a :class:`~psybench.registry.ModelError` naming it.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from psybench.io.store import StreamSpec, open_store, write_store_stream
from psybench.motion.display import Display
from psybench.progress import progress
from psybench.registry import ModelError, ModelSpec, resolve_model

__all__ = ["motion_response_blocks", "run_motion_model"]


def _check_output(spec: ModelSpec, name: str, block: np.ndarray, expected: tuple[int, ...], where: str) -> None:
    if not isinstance(block, np.ndarray):
        raise ModelError(
            f"model {spec.name!r} returned {type(block).__name__} for {name!r} at {where}, expected an ndarray"
        )
    if not (np.issubdtype(block.dtype, np.integer) or np.issubdtype(block.dtype, np.floating)):
        raise ModelError(
            f"model {spec.name!r} returned {name!r} of dtype {block.dtype} at {where}, expected real numbers"
        )
    if block.shape != expected:
        raise ModelError(
            f"model {spec.name!r} returned {name!r} of shape {block.shape} at {where}, expected {expected}"
        )
    if not np.all(np.isfinite(block)):
        n = int(np.size(block) - np.count_nonzero(np.isfinite(block)))
        raise ModelError(f"model {spec.name!r} returned {n} non-finite value(s) (NaN/inf) in {name!r} at {where}")


def motion_response_blocks(
    spec: ModelSpec, frames: Any, display: Display, *, block_frames: int = 16, threads: int = 1
) -> Iterator[dict[str, np.ndarray]]:
    """Yield response blocks ``{"flow": (t, H, W, 2) [, "p": (t, H, W, V)]}`` aligned with ``frames``.

    Parameters
    ----------
    spec : ModelSpec
        A motion model of kind ``"pair"`` or ``"stream"``.
    frames : array_like or dask.array.Array, shape (T, H, W)
        Luminance in [0, 1].
    display : Display
    block_frames : int
        Frames read per block.
    threads : int
        Worker threads for pair models (OpenCV and NumPy release the GIL).
    """
    n_t, height, width = frames.shape
    func, params = spec.algorithm.function, dict(spec.params)

    def load(a: int, b: int) -> np.ndarray:
        block = frames[a:b]
        block = block.compute() if hasattr(block, "compute") else np.asarray(block)
        return np.asarray(block, dtype=np.float32)

    if spec.kind == "pair":
        def pair(i: int, f0: np.ndarray, f1: np.ndarray) -> np.ndarray:
            try:
                out = func(f0, f1, **params)
            except ModelError:
                raise
            except Exception as exc:
                raise ModelError(
                    f"model {spec.name!r} raised {type(exc).__name__} on frames {i - 1}-{i}: {exc}"
                ) from exc
            out = np.asarray(out) if not isinstance(out, np.ndarray) else out
            _check_output(spec, "flow", out, (height, width, 2), f"frames {i - 1}-{i}")
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
        try:
            gen = func(chunks, display=display, **params)
            for block in gen:
                if not isinstance(block, dict):
                    raise ModelError(
                        f"model {spec.name!r} yielded {type(block).__name__}, expected a dict like {{'flow': array}}"
                    )
                yield block
        except (ModelError, GeneratorExit):
            raise
        except Exception as exc:  # a model's own failure: name the model, keep the cause
            raise ModelError(f"model {spec.name!r} raised {type(exc).__name__}: {exc}") from exc
    else:
        raise ModelError(f"model {spec.name!r}: kind {spec.kind!r} is not a motion model kind ('pair' or 'stream')")


def model_from_description(description: Mapping[str, Any]) -> ModelSpec:
    """The :class:`ModelSpec` that :meth:`ModelSpec.to_attrs` described (e.g. in a rule's params).

    The workflow resolves each model once, while the Snakefile is parsed, and hands
    a job its JSON description (cacheable, and compared by Snakemake to detect a
    parameter change); the job's process imports the algorithm back from it.
    """
    key = "algorithm" if description.get("source", "builtin") == "builtin" else "callable"
    entry = {"name": description["name"], key: description["algorithm"], "params": dict(description["params"])}
    if key == "callable":
        entry["kind"] = description["kind"]
    return resolve_model(entry, track="motion")


def run_motion_model(
    spec: ModelSpec | Mapping[str, Any],
    stimulus_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    code_hash: str = "",
    threads: int = 1,
    block_frames: int = 16,
) -> Path:
    """Run ``spec`` on the stimulus store at ``stimulus_path`` and write ``out_path``.

    The response store's attributes carry the stimulus attributes (display
    mapping, stimulus parameters, ground truth), the model description and
    ``code_hash``. ``spec`` may also be the model's description
    (:func:`model_from_description`).
    """
    if not isinstance(spec, ModelSpec):
        spec = model_from_description(spec)
    stim = open_store(stimulus_path, deep=True)  # a corrupted chunk must not be read silently
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
        )
    }
    if velocities is not None:
        if callable(velocities):  # a grid in physical units needs the display (px/deg, frames/s) to be px/frame
            takes = inspect.signature(velocities).parameters
            wants = "display" in takes or any(p.kind is p.VAR_KEYWORD for p in takes.values())
            velocities = velocities(display=display, **spec.params) if wants else velocities(**spec.params)
        velocities = np.asarray(velocities, dtype=float)
        specs["p"] = StreamSpec(
            (n_t, height, width, len(velocities)), "float32", ("t", "y", "x", "velocity"),
            attrs={"velocities": velocities.tolist(), "velocity_units": "px/frame"},
        )

    def check(name: str, block: np.ndarray, start: int) -> None:
        if name not in specs:
            raise ModelError(f"model {spec.name!r} yielded an unknown output {name!r}")
        if block.ndim != len(specs[name].shape):
            raise ModelError(
                f"model {spec.name!r} yielded {name!r} of shape {block.shape} from frame {start}, "
                f"expected (t,) + {tuple(specs[name].shape[1:])}"
            )
        _check_output(spec, name, block, (block.shape[0],) + tuple(specs[name].shape[1:]),
                      f"frames {start}-{start + block.shape[0] - 1}")

    attrs = {
        "stage": "responses",
        "display": stim.attrs["display"],
        "stimulus": stim.attrs.get("stimulus", {}),
        "model": spec.to_attrs(),
        "code_hash": code_hash,
    }
    blocks = progress(motion_response_blocks(spec, frames, display, block_frames=block_frames, threads=threads),
                      f"motion responses of {spec.name} ({block_frames}-frame blocks)", total=-(-n_t // block_frames))
    try:
        return write_store_stream(out_path, specs, blocks, attrs, check=check)
    except ValueError as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"model {spec.name!r}: {exc}") from exc
