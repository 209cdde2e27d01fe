"""The one model hand-off: what every track's jobs receive of a model, and how they rebuild it.

The workflow resolves each model once, while the Snakefile is parsed
(:func:`psybench.registry.resolve_model`), and passes :func:`describe_model`'s JSON-able
description as a rule's param; the job rebuilds the same
:class:`~psybench.registry.ModelSpec` with :func:`model_from_description`, the same way
for motion, attention and IntPhys. :func:`as_model` takes any of the three forms a
caller of the library may hold (a spec, its description, a config entry).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from psybench.registry import KINDS, TRACK_KINDS, ModelError, ModelSpec, resolve_model

__all__ = ["describe_model", "model_from_description", "as_model", "job_threads", "job_resource"]


def describe_model(spec: ModelSpec) -> dict[str, Any]:
    """The JSON-able description of a resolved model that every track's jobs receive.

    ``{name, algorithm, source, kind, params, params_hash}``: ``params`` hold every
    parameter, defaults filled; ``algorithm`` is the registered name, or the
    ``package.module:function`` path of a user's ``callable`` (``source: "user"``). The
    workflow resolves each model once, while the Snakefile is parsed, and passes this
    description as a rule's param (Snakemake compares it to rerun a job whose model
    changed, and its bytes are part of a cached job's key); the job rebuilds the model
    with :func:`model_from_description`. The kind names the track
    (:data:`TRACK_KINDS`; ``track`` is added for a kind two tracks share). The response
    stores record it as their ``model`` attribute.

    A deep model (:mod:`psybench.deep`) adds ``factory: true`` (a builder), its
    ``weights`` path and the file's ``weights_digest`` (a checkpoint rewritten at the
    same path changes the description, so exactly that model's jobs rerun), its
    ``device``, and the ``batch_size`` of any batched model; an IntPhys stream model
    fitted on the train split adds ``train: true``. Other models' descriptions have none
    of these keys.
    """
    out: dict[str, Any] = {
        "name": spec.name,
        "algorithm": spec.algorithm.name,
        "source": spec.algorithm.source,
        "kind": spec.kind,
        "params": dict(spec.params),
        "params_hash": spec.params_hash,
    }
    if _track_of_kind(spec.kind) != spec.track:  # a kind two tracks share (stream): name the track
        out["track"] = spec.track
    if spec.algorithm.factory:
        out["factory"] = True
    if spec.weights is not None:
        from psybench.deep import weights_digest

        out["weights"] = spec.weights
        out["weights_digest"] = weights_digest(spec.weights)
    if spec.algorithm.factory:
        out["device"] = spec.device
    if spec.deep:
        out["batch_size"] = spec.batch_size
    if spec.train:
        out["train"] = True
    return out


def _track_of_kind(kind: Any, track: Any = None) -> str:
    """The track of a described kind: ``track`` if the description names one, else the first track having it."""
    if track is not None:
        if track not in TRACK_KINDS or kind not in TRACK_KINDS[track]:
            raise ModelError(f"model description: kind {kind!r} is not a kind of track {track!r}")
        return track
    for name, kinds in TRACK_KINDS.items():
        if kind in kinds:
            return name
    raise ModelError(f"model description: kind {kind!r} is none of {list(KINDS)}")


def model_from_description(description: Mapping[str, Any]) -> ModelSpec:
    """The :class:`ModelSpec` that :func:`describe_model` described, imported again in a job's process.

    The same for every track: the algorithm is looked up in the registry (a user's
    ``callable`` imported from its path) and the parameters checked again.

    Raises
    ------
    ModelError
        Naming the model, if the description lacks a key, its algorithm is gone, or
        the rebuilt parameters hash differently (the algorithm's defaults changed since
        the description was written).
    """
    missing = [k for k in ("name", "algorithm", "kind", "params") if k not in description]
    if missing:
        raise ModelError(f"model description {dict(description)!r} lacks {missing} (see describe_model)")
    user = description.get("source", "builtin") == "user"
    entry: dict[str, Any] = {"name": description["name"], "params": dict(description["params"])}
    entry["callable" if user else "algorithm"] = description["algorithm"]
    if user:
        entry["kind"] = description["kind"]
        if description.get("factory"):
            entry["factory"] = True
    for key in ("weights", "device", "batch_size", "resources", "train"):
        if description.get(key) is not None:
            entry[key] = description[key]
    spec = resolve_model(entry, track=_track_of_kind(description["kind"], description.get("track")))
    recorded = description.get("params_hash")
    if recorded is not None and recorded != spec.params_hash:
        raise ModelError(f"model {spec.name!r}: its parameters hash to {spec.params_hash}, not {recorded} as "
                         "described (the algorithm's defaults changed since the workflow was planned)")
    digest = description.get("weights_digest")
    if digest is not None and spec.weights is not None:
        from psybench.deep import weights_digest

        now = weights_digest(spec.weights)
        if now != digest:
            raise ModelError(f"model {spec.name!r}: weights file {os.fspath(spec.weights)!r} changed since the "
                             f"workflow was planned (digest {now}, planned {digest}); run the workflow again")
    return spec


def as_model(model: ModelSpec | Mapping[str, Any], *, track: str) -> ModelSpec:
    """A :class:`ModelSpec` from a resolved spec, its description, or a config entry of ``track``.

    A description (the mapping :func:`describe_model` returns, recognised by its
    ``params_hash``) is rebuilt with :func:`model_from_description`; a config entry
    (``{name, algorithm | callable, params}``) is resolved with :func:`resolve_model`.
    """
    if isinstance(model, ModelSpec):
        spec = model
    elif isinstance(model, Mapping) and "params_hash" in model:
        spec = model_from_description(model)
    elif isinstance(model, Mapping):
        spec = resolve_model(model, track=track)
    else:
        raise ModelError(f"expected a model (ModelSpec, its description or a config entry), "
                         f"got {type(model).__name__}")
    if spec.track != track:
        raise ModelError(f"model {spec.name!r} belongs to track {spec.track!r}, not {track!r}")
    return spec


def job_threads(specs: Iterable[ModelSpec], default: int) -> int:
    """The Snakemake ``threads`` of a job running ``specs``: the largest ``resources.threads`` they ask for.

    ``default`` (the rule's own) when none asks; a job running several models (an
    attention movie's feature stores) takes the most any of them asks, since they run
    one after the other. Torch's thread count is the job's threads (:mod:`psybench.deep`).
    """
    return max((int(s.resources["threads"]) for s in specs if "threads" in s.resources), default=default)


def job_resource(specs: Iterable[ModelSpec], key: str, default: Any) -> Any:
    """The Snakemake resource ``key`` (``mem_mb``, ``runtime``, ``gpu``) of a job running ``specs``.

    The largest value the models' ``resources`` give, else ``default`` (the rule's own).
    ``gpu`` is Snakemake's standard GPU resource: global in scope, so ``snakemake
    --resources gpu=N`` runs at most N GPU jobs at once on a workstation, and the SLURM
    executor asks for ``--gpus`` per job (profiles/slurm).
    """
    given = [s.resources[key] for s in specs if key in s.resources]
    return max(given) if given else default
