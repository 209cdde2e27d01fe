"""A model entry's deep-model keys: weights, device, batch size and resources, checked.

Used by :func:`psybench.registry.resolve_model`; each message names the key (the
registry prefixes the model's name). A *deep* model is a factory (a builder called
once per job, :mod:`psybench.deep`) or a model of a batched kind
(:data:`psybench.registry.BATCHED_KINDS`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_BATCH_SIZE", "RESOURCE_KEYS", "device_problem", "resources_problem", "deep_entry_keys"]

DEFAULT_BATCH_SIZE = 8  # frames (motion: pairs) per call of a batched model whose entry gives none
# Keys of a model entry's ``resources``: they become the Snakemake threads and resources of its jobs.
RESOURCE_KEYS = ("threads", "mem_mb", "runtime", "gpu")
_DEVICE = re.compile(r"^(auto|cpu|cuda|cuda:(0|[1-9][0-9]*))$")


def device_problem(device: Any) -> str | None:
    """What is wrong with a configured device, or None (``auto``, ``cpu``, ``cuda``, ``cuda:N``)."""
    if not isinstance(device, str) or not _DEVICE.match(device):
        return f"'device' must be one of auto, cpu, cuda, cuda:N (N = 0, 1, ...), got {device!r}"
    return None


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def resources_problem(resources: Any) -> str | None:
    """What is wrong with a model entry's ``resources``, or None.

    ``{threads: int >= 1, mem_mb: number > 0, runtime: minutes > 0, gpu: int >= 0}``,
    each optional.
    """
    if not isinstance(resources, Mapping):
        return f"'resources' must be a mapping with keys among {list(RESOURCE_KEYS)}, got {resources!r}"
    unknown = sorted(set(resources) - set(RESOURCE_KEYS))
    if unknown:
        return f"'resources' has unknown key(s) {unknown}; accepted: {list(RESOURCE_KEYS)}"
    for key, value in resources.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key == "threads" and not _positive_int(value):
            return f"'resources.threads' must be an integer >= 1, got {value!r}"
        if key == "gpu" and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return f"'resources.gpu' must be a non-negative integer (GPUs per job), got {value!r}"
        if key in ("mem_mb", "runtime") and not (number and value > 0):
            unit = "MB" if key == "mem_mb" else "minutes"
            return f"'resources.{key}' must be a number > 0 ({unit}), got {value!r}"
    return None


def deep_entry_keys(
    entry: Mapping[str, Any], *, factory: bool, deep: bool, algorithm: str, kind: str, track: str = ""
) -> dict[str, Any]:
    """The checked ``weights``, ``device``, ``batch_size``, ``resources`` and ``train`` of a model entry.

    ``weights`` and ``device`` belong to factories (``factory``), ``batch_size`` to
    deep models (``deep``: factories and batched kinds), ``resources`` to any model,
    ``train`` (fit on the train split before scoring) to IntPhys ``"stream"`` models.
    Keys the entry leaves out are left out, but a deep model always gets a batch size.
    Raises ValueError naming the key (the registry adds the model's name).
    """
    out: dict[str, Any] = {}
    for key in ("weights", "device"):
        if entry.get(key) is not None and not factory:
            raise ValueError(f"{key!r} applies to a factory model (a builder, 'factory: true'); "
                             f"{algorithm!r} is a plain function")
    weights = entry.get("weights")
    if weights is not None:
        if not isinstance(weights, (str, os.PathLike)) or not os.fspath(weights):
            raise ValueError(f"'weights' must be the path of a local file, got {weights!r}")
        weights = os.fspath(weights)
        if not os.path.exists(weights):
            raise ValueError(f"'weights' file {weights!r} does not exist "
                             f"(relative paths are read from {os.getcwd()})")
        if not os.path.isfile(weights):
            raise ValueError(f"'weights' {weights!r} is not a file")
        out["weights"] = weights
    device = entry.get("device")
    if device is not None:
        if (problem := device_problem(device)) is not None:
            raise ValueError(f"{problem}")
        out["device"] = device
    batch_size = entry.get("batch_size")
    if batch_size is not None:
        if not deep:
            raise ValueError(f"'batch_size' applies to a deep model (a factory or a batched kind), not kind {kind!r}")
        if not _positive_int(batch_size):
            raise ValueError(f"'batch_size' must be an integer >= 1, got {batch_size!r}")
    if deep:
        out["batch_size"] = batch_size if batch_size is not None else DEFAULT_BATCH_SIZE
    resources = entry.get("resources")
    if resources is not None:
        if (problem := resources_problem(resources)) is not None:
            raise ValueError(f"{problem}")
        out["resources"] = dict(resources)
    train = entry.get("train")
    if train is not None:
        if not isinstance(train, bool):
            raise ValueError(f"'train' must be true or false, got {train!r}")
        if train and (track, kind) != ("intphys", "stream"):
            raise ValueError(f"'train' applies to an intphys 'stream' model (fitted on the train split), "
                             f"not a {track or 'this'} {kind!r} model")
        if train:
            out["train"] = True
    return out
