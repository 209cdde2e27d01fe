"""Deep (PyTorch) models: weights from local files, devices, threads and determinism.

A deep model is registered as a *factory* (:func:`psybench.registry.register` with
``factory=True``, or ``factory: true`` in a user's config entry): the registered
function is a builder ``build(*, weights, device, **params) -> model``, called once
per job inside :func:`torch_session`; the model it returns is then called on
batches (the signature is its kind's, :data:`psybench.registry.BATCHED_KINDS`) and
released at the end of the job. :func:`built` does all three.

Torch is imported inside the functions only: the rest of psybench imports and runs
without it. Nothing is ever downloaded: weights come from local files, loaded with
``torch.load(weights_only=True)`` and strict key matching, and their content digest
(:func:`weights_digest`) joins the model's description, hence its jobs' cache keys.

CPU results are the reproducible ones: :func:`torch_session` sets torch's thread
count to the job's threads, runs under ``torch.inference_mode()``, and turns off the
non-deterministic cuDNN autotuner and TF32 arithmetic (PyTorch documentation,
"Reproducibility"); :func:`environment_attrs` records these settings, with the torch
and CUDA versions, in every store a deep model's job writes.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from psybench.registry import ModelError, ModelSpec, device_problem

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "INSTALL_HINT",
    "require_torch",
    "load_weights",
    "weights_digest",
    "resolve_device",
    "device_problem",
    "torch_session",
    "environment_attrs",
    "build_model",
    "release",
    "built",
]

INSTALL_HINT = "pip install 'psybench[deep]'"
_CHUNK = 1 << 22  # bytes read at a time while digesting a weights file


def require_torch(model: str) -> Any:
    """The ``torch`` module; :class:`ModelError` naming ``model`` and the install command if it is missing."""
    try:
        import torch
    except ImportError as exc:
        raise ModelError(f"model {model!r} needs PyTorch, which is not installed ({exc}); "
                         f"install it with: {INSTALL_HINT}") from None
    return torch


def weights_digest(path: str | os.PathLike) -> str:
    """The content digest of a weights file: xxh3_128 hex, as the stores' array digests.

    Two files with the same bytes have the same digest wherever they lie; a file
    rewritten in place with other weights gets another one.
    """
    import xxhash

    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def load_weights(module: Any, path: str | os.PathLike, *, model: str) -> None:
    """Load a local weights file into ``module``, with strict key matching.

    Parameters
    ----------
    module : torch.nn.Module
        The network, built with random (or no) weights.
    path : path-like
        A file written by ``torch.save``: a state dict, or ``{"state_dict": ...}``.
        Read with ``weights_only=True`` (no pickled code runs) onto the CPU.
    model : str
        The model's name, for messages.

    Raises
    ------
    ModelError
        Naming the model and the file, if the file is missing or unreadable, holds no
        state dict, or its keys differ from the module's (the missing and unexpected
        keys are listed) or a tensor's shape does not fit.
    """
    torch = require_torch(model)
    try:
        state = torch.load(os.fspath(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # missing file, not a torch file, pickled code
        raise ModelError(f"model {model!r}: cannot read weights file {os.fspath(path)!r}: {exc}") from None
    if isinstance(state, Mapping) and "state_dict" in state and isinstance(state["state_dict"], Mapping):
        state = state["state_dict"]
    if not isinstance(state, Mapping):
        raise ModelError(f"model {model!r}: weights file {os.fspath(path)!r} holds a {type(state).__name__}, "
                         "not a state dict (write it with torch.save(module.state_dict(), path))")
    expected = set(module.state_dict())
    missing = sorted(expected - set(state))
    unexpected = sorted(set(state) - expected)
    if missing or unexpected:
        raise ModelError(f"model {model!r}: weights file {os.fspath(path)!r} does not match the network: "
                         f"missing keys {_few(missing)}, unexpected keys {_few(unexpected)}")
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as exc:  # a shape mismatch
        raise ModelError(f"model {model!r}: weights file {os.fspath(path)!r} does not fit the network: {exc}") from None


def _few(keys: list[str], n: int = 8) -> str:
    return repr(keys) if len(keys) <= n else f"{keys[:n]!r} and {len(keys) - n} more"


def resolve_device(device: str, *, model: str) -> torch.device:
    """The torch device of a configured ``device``.

    ``"auto"`` is ``cuda:0`` when CUDA is available, else the CPU; ``"cuda"`` is the
    current CUDA device. An unavailable CUDA device is a :class:`ModelError` naming
    the model and the devices there are.
    """
    problem = device_problem(device)
    if problem:
        raise ModelError(f"model {model!r}: {problem}")
    torch = require_torch(model)
    if device == "auto":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(device.partition(":")[2] or 0)
    if index >= n:
        there = "no CUDA device is available" if n == 0 else f"{n} CUDA device(s) are available (cuda:0..cuda:{n - 1})"
        raise ModelError(f"model {model!r}: device {device!r} is not available: {there}; "
                         "set device: cpu or auto in the model entry")
    return torch.device(device)


@contextlib.contextmanager
def torch_session(*, threads: int, device: Any = None) -> Iterator[None]:
    """Run a job's model inside: ``threads`` torch threads, inference mode, deterministic settings.

    Sets ``torch.set_num_threads(threads)`` (torch would otherwise take every core,
    however many the job was given), turns off the cuDNN autotuner and TF32 for
    matmul and cuDNN, and enters ``torch.inference_mode()``; restores what it changed
    on exit. ``device`` is accepted for symmetry with :func:`environment_attrs`.
    """
    torch = require_torch("?")
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    saved = (
        torch.get_num_threads(),
        torch.backends.cudnn.benchmark,
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
    torch.set_num_threads(threads)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        with torch.inference_mode():
            yield
    finally:
        torch.set_num_threads(saved[0])
        torch.backends.cudnn.benchmark = saved[1]
        torch.backends.cuda.matmul.allow_tf32 = saved[2]
        torch.backends.cudnn.allow_tf32 = saved[3]


def environment_attrs(device: Any) -> dict[str, Any]:
    """Torch, torchvision and CUDA versions, the device and the determinism settings in force.

    Written into the attributes of every store a deep model's job writes (call it
    inside :func:`torch_session` to record the settings the model ran under).
    """
    torch = require_torch("?")
    try:
        import torchvision

        vision = torchvision.__version__
    except ImportError:
        vision = None
    return {
        "torch": torch.__version__,
        "torchvision": vision,
        "cuda": torch.version.cuda,
        "device": str(device),
        "determinism": {
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
            "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
            "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        },
    }


def build_model(spec: ModelSpec, *, threads: int) -> tuple[Any, Any]:
    """``(model, device)``: a factory's model built once for a job, or a plain function bound to its params.

    A factory (``spec.algorithm.factory``) is called as ``build(weights=spec.weights,
    device=device, **spec.params)`` under ``threads`` torch threads; ``weights`` is
    None when the entry names none. A plain function comes back bound to its
    parameters, with device None: it is called on batches as it is. Call the model
    inside :func:`torch_session`; :func:`built` does both and releases the model.
    """
    if not spec.algorithm.factory:
        return functools.partial(spec.algorithm.function, **spec.params), None
    torch = require_torch(spec.name)
    device = resolve_device(spec.device, model=spec.name)
    torch.set_num_threads(threads)
    try:
        model = spec.algorithm.function(weights=spec.weights, device=device, **spec.params)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(f"model {spec.name!r}: building it failed: {type(exc).__name__}: {exc}") from exc
    if model is None or not callable(model):
        raise ModelError(f"model {spec.name!r}: its builder {spec.algorithm.name!r} returned "
                         f"{type(model).__name__}, not a callable model")
    return model, device


def release(device: Any) -> None:
    """Free the CUDA cache after a model on ``device`` was deleted (nothing on the CPU)."""
    if device is not None and getattr(device, "type", None) == "cuda":
        import torch

        torch.cuda.empty_cache()


@contextlib.contextmanager
def built(spec: ModelSpec, *, threads: int) -> Iterator[tuple[Any, Any]]:
    """Yield ``(model, device)`` inside :func:`torch_session` (factories) and release the model after.

    A plain (non-factory) function is yielded bound to its parameters, device None,
    and torch is not imported.
    """
    if not spec.algorithm.factory:
        yield build_model(spec, threads=threads)
        return
    device = resolve_device(spec.device, model=spec.name)
    with torch_session(threads=threads, device=device):
        model, device = build_model(spec, threads=threads)
        try:
            yield model, device
        finally:
            del model
            release(device)
