"""The model registry: named algorithms with parameter defaults, built in or user-supplied.

An *algorithm* is a Python callable registered once with :func:`register`
(psybench's own) or named ``package.module:function`` in the config (a user's).
A *model* is one configured use of an algorithm: a unique name, the algorithm,
and parameter values; the same algorithm may appear as several models with
different parameters (intra-technique evaluation, Cabezas & Trujillo 2011 (Pareto dominance
for disparity evaluation, VISAPP), sec. 3.3).

Every track's models are registered here (:data:`TRACKS`), each with the
interface (``kind``) its track runs (:data:`TRACK_KINDS`). Attention models are
``"saliency"``: ``f(frames, **params) -> maps`` with frames ``(t, H, W)`` on the
model grid and maps ``(t, H, W, K)`` (:mod:`psybench.attention.responses`). IntPhys
models are ``"plausibility"``: ``f(observation, **params) -> pandas.Series`` of
P(movie) from a :class:`psybench.intphys.models.Observation` (frames, depth, masks,
movie ids; never labels). Motion models come in two kinds:

``"pair"``
    ``f(frame0, frame1, **params) -> flow`` with frames ``ndarray, shape (H, W)``
    float32 luminance in [0, 1] and ``flow`` of shape ``(H, W, 2)`` in px/frame,
    components ``(u, v)`` = (rightward, downward), such that
    ``frame0(x) ~ frame1(x + flow(x))``. Classic optical flow; pairs are
    independent, so psybench streams and parallelises them.
``"stream"``
    ``f(chunks, *, display, **params) -> iterator of dict`` where ``chunks`` is an
    iterator over consecutive frame blocks ``ndarray, shape (t, H, W)`` and each
    yielded dict holds ``"flow"`` of shape ``(t, H, W, 2)`` (one sample per input
    frame, causal) and optionally ``"p"`` of shape ``(t, H, W, V)``, a distributed
    velocity representation over the velocities named by the function attribute
    ``velocities`` (``(V, 2)`` px/frame). Stateful models (recurrent dynamics in ms).

Example config entries::

    models:
      - {name: horn_schunck, algorithm: horn_schunck, params: {alpha: 1.0}}
      - {name: my_flow, callable: "mypackage.flow:estimate", kind: pair}
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from psybench.model_entry import (
    DEFAULT_BATCH_SIZE,
    RESOURCE_KEYS,
    deep_entry_keys,
    device_problem,
    resources_problem,
)
from psybench.model_params import (
    builder_problem,
    data_argument_problem,
    model_parameters,
    parameter_problem,
)
from psybench.provenance import params_hash

__all__ = [
    "Algorithm",
    "ModelSpec",
    "ModelError",
    "register",
    "get_algorithm",
    "list_algorithms",
    "list_models",
    "load_callable",
    "resolve_model",
    "device_problem",
    "resources_problem",
    "BATCHED_KINDS",
    "DEFAULT_BATCH_SIZE",
    "RESOURCE_KEYS",
]

TRACKS = ("motion", "attention", "intphys")
# The interfaces (kinds) a model of each track may have; the first is the default of a
# user ``callable`` whose config entry names none.
TRACK_KINDS = {
    "motion": ("pair", "stream", "pairs"),
    "attention": ("saliency", "features", "map"),
    "intphys": ("plausibility", "stream"),
}
KINDS = tuple(dict.fromkeys(k for kinds in TRACK_KINDS.values() for k in kinds))
DEFAULT_KIND = {track: kinds[0] for track, kinds in TRACK_KINDS.items()}
# The batched interfaces of deep models (psybench.deep), by track: the model is called on
# batches of at most ``batch_size`` frames (pairs) and gets its data as the kind says.
BATCHED_KINDS = {"motion": ("pairs",), "attention": ("features", "map"), "intphys": ("stream",)}

# Entry-point group through which an installed package adds algorithms: each entry
# point names a module (importing it runs its ``@register`` decorators) or a function
# decorated with :func:`register`.
ENTRY_POINT_GROUP = "psybench.models"
_ALGORITHMS: dict[str, Algorithm] = {}
_LOADED: set[str] = set()  # tracks whose built-in modules are imported ("plugins": entry points too)
# Modules whose import registers psybench's built-in algorithms, by track.
_BUILTIN_MODULES = {
    # motion: classic optical flow and the bio-inspired models
    "motion": (
        "psybench.motion.models.flow",
        "psybench.motion.models.motion_energy",
        "psybench.motion.models.v1mt",
        "psybench.motion.models.raft",  # RAFT (torch imported only when a job builds it)
        "psybench.motion.models.people",  # the reference observer (published human behaviour)
    ),
    # attention: saliency feature families, CNN features and map-output models
    "attention": ("psybench.attention.families", "psybench.attention.itti", "psybench.attention.deep_models",
                  "psybench.attention.map_models"),
    # intphys: plausibility models
    "intphys": ("psybench.intphys.models.controls", "psybench.intphys.models.flow", "psybench.intphys.models.nextframe",
                "psybench.intphys.models.tracking"),
}


class ModelError(ValueError):
    """A model is misconfigured or misbehaves; the message names the model."""


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """A registered algorithm: its callable, kind, track and parameter defaults."""

    name: str
    function: Callable[..., Any]
    track: str
    kind: str
    defaults: Mapping[str, Any]
    reference: str = ""
    description: str = ""
    source: str = "builtin"
    required: tuple[str, ...] = ()  # parameters without a default: the config must give them
    # {parameter: (smallest, largest)} accepted by config validation (None: open); declared with register
    bounds: Mapping[str, tuple[float | None, float | None]] = dataclasses.field(default_factory=dict)
    # a builder ``build(*, weights, device, **params) -> model`` called once per job (psybench.deep)
    factory: bool = False


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """One configured model: a unique name, its algorithm and parameter values.

    A deep model (a factory, or a batched kind) also has a ``weights`` file (or None),
    a ``device`` and a ``batch_size``; ``resources`` (threads, mem_mb, runtime, gpu) are
    the Snakemake resources of its jobs, for any model.
    """

    name: str
    algorithm: Algorithm
    params: Mapping[str, Any]
    weights: str | None = None
    device: str = "cpu"
    batch_size: int | None = None
    resources: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # an IntPhys stream model fitted (``fit(movies)``) on the train split before scoring
    train: bool = False

    @property
    def deep(self) -> bool:
        """A factory or a batched kind: it has a device and a batch size."""
        return self.algorithm.factory or self.kind in BATCHED_KINDS.get(self.track, ())

    @property
    def kind(self) -> str:
        return self.algorithm.kind

    @property
    def track(self) -> str:
        return self.algorithm.track

    @property
    def params_hash(self) -> str:
        return params_hash({"algorithm": self.algorithm.name, "params": dict(self.params)})


def register(
    name: str,
    *,
    track: str,
    kind: str,
    reference: str = "",
    description: str = "",
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    factory: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a built-in algorithm; its parameters with defaults are the defaults.

    Parameters are the arguments after the kind's data arguments (:func:`psybench.model_params.model_parameters`);
    psybench's own algorithms make them keyword-only, and give each a default.
    ``bounds`` ``{parameter: (smallest, largest)}`` (``None``: open) are the values
    config validation accepts (:func:`psybench.config_checks.check_model_params`),
    declared here next to the signature so that renaming a parameter is one edit: a
    bound naming no parameter of the function fails at registration.

    With ``factory=True`` the function is a builder, ``build(*, weights, device,
    **params) -> model`` (:mod:`psybench.deep`): its parameters are its keywords other
    than ``weights`` and ``device``, and the model it builds has the kind's signature.
    """
    if track not in TRACKS:
        raise ValueError(f"algorithm {name!r}: track must be one of {TRACKS}, got {track!r}")
    if kind not in TRACK_KINDS[track]:
        raise ValueError(
            f"algorithm {name!r}: kind must be one of {TRACK_KINDS[track]} for track {track!r}, got {kind!r}"
        )

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in _ALGORITHMS and _ALGORITHMS[name].function is not func:
            raise ValueError(f"algorithm {name!r} is registered twice")
        doc = (inspect.getdoc(func) or "").splitlines()
        if factory and (problem := builder_problem(func, path=name)):
            raise ValueError(f"algorithm {name!r}: {problem}")
        defaults, required = model_parameters(func, kind, factory=factory)
        unknown = sorted(set(bounds or {}) - {*defaults, *required})
        if unknown:
            raise ValueError(f"algorithm {name!r}: bounds name {unknown}, not parameters of the function "
                             f"(parameters: {sorted({*defaults, *required})})")
        for key, pair in (bounds or {}).items():
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise ValueError(f"algorithm {name!r}: bounds[{key!r}] must be (smallest, largest), got {pair!r}")
        _ALGORITHMS[name] = Algorithm(
            name=name,
            function=func,
            track=track,
            kind=kind,
            defaults=defaults,
            reference=reference,
            description=description or (doc[0] if doc else ""),
            bounds=dict(bounds or {}),
            factory=factory,
        )
        return func

    return deco


def _load_builtins(track: str | None = None) -> None:
    """Import the built-in model modules of ``track`` (default: every track), then installed plugins.

    Each module is imported once. Loading one track only keeps the start-up of a
    job light (the IntPhys models alone are slow to import): a motion job
    resolving its model needs the motion modules, not the others.
    """
    for name in [track] if track is not None else list(_BUILTIN_MODULES):
        if name in _LOADED:
            continue
        _LOADED.add(name)
        for mod in _BUILTIN_MODULES.get(name, ()):
            importlib.import_module(mod)
    if "plugins" not in _LOADED:
        _LOADED.add("plugins")
        _load_entry_points()


def _load_entry_points() -> None:
    """Register the algorithms that installed packages declare in :data:`ENTRY_POINT_GROUP`.

    An entry point ``name = "package.module"`` is imported (its ``@register``
    decorators run); ``name = "package.module:function"`` must name a function
    decorated with :func:`register`. A plugin that cannot be imported, or names a
    function that is not registered, raises :class:`ModelError` naming the entry point.
    What a plugin registers is listed with ``source = "plugin:<entry point value>"``.
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        before = set(_ALGORITHMS)
        try:
            obj = ep.load()
        except Exception as exc:
            raise ModelError(f"entry point {ep.name!r} ({ep.value}) of group {ENTRY_POINT_GROUP!r} "
                             f"cannot be loaded: {exc}") from exc
        if callable(obj) and not any(a.function is obj for a in _ALGORITHMS.values()):
            raise ModelError(f"entry point {ep.name!r} ({ep.value}) of group {ENTRY_POINT_GROUP!r}: "
                             "the function is not decorated with psybench.registry.register")
        for name in set(_ALGORITHMS) - before:  # what this plugin registered, shown as such
            _ALGORITHMS[name] = dataclasses.replace(_ALGORITHMS[name], source=f"plugin:{ep.value}")


def get_algorithm(name: str, *, track: str | None = None) -> Algorithm:
    """The registered algorithm ``name`` (built in or from a plugin); :class:`ModelError` lists the known ones.

    With ``track``, that track's modules are imported first, and the others only if
    ``name`` is not found there (to name it, or to report which track it belongs to).
    """
    _load_builtins(track)
    if name not in _ALGORITHMS:
        _load_builtins()
    try:
        return _ALGORITHMS[name]
    except KeyError:
        raise ModelError(f"unknown algorithm {name!r}; known: {sorted(_ALGORITHMS)}") from None


def list_algorithms(track: str | None = None) -> list[Algorithm]:
    """Every registered algorithm (of ``track``, if given), sorted by track and name."""
    _load_builtins(track)
    algos = sorted(_ALGORITHMS.values(), key=lambda a: (TRACKS.index(a.track) if a.track in TRACKS else 99, a.name))
    return [a for a in algos if track is None or a.track == track]


def list_models(track: str | None = None) -> list[dict[str, Any]]:
    """Rows ``{name, track, kind, params, source, reference, description}`` for the CLI.

    ``params`` lists every parameter with its default, ``name=default``.
    """
    if track is not None and track not in TRACKS:
        raise ModelError(f"unknown track {track!r}; tracks: {list(TRACKS)}")
    return [
        {
            "name": a.name,
            "track": a.track,
            "kind": a.kind,
            "params": ", ".join(f"{k}={v!r}" for k, v in a.defaults.items()),
            "source": a.source,
            "reference": a.reference,
            "description": a.description,
        }
        for a in list_algorithms(track)
    ]


def load_callable(path: str, *, model: str = "?") -> Callable[..., Any]:
    """Import ``package.module:function`` (the function may be dotted, ``mod:Class.method``)."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise ModelError(f"model {model!r}: callable must look like 'package.module:function', got {path!r}")
    mod_name, attr = path.split(":")
    try:
        obj: Any = importlib.import_module(mod_name)
    except Exception as exc:
        raise ModelError(f"model {model!r}: cannot import module {mod_name!r} ({exc})") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ModelError(f"model {model!r}: module {mod_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ModelError(f"model {model!r}: {path!r} is not callable")
    return obj


def resolve_model(entry: Mapping[str, Any], *, track: str | None = None) -> ModelSpec:
    """Turn one config entry into a :class:`ModelSpec`, checking parameter names.

    Parameters
    ----------
    entry : mapping
        ``{name, algorithm | callable, kind (for callables), params}``.
    track : str, optional
        Track the model must belong to (e.g. ``"motion"``).
    """
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"model entry {dict(entry)!r} has no 'name'")
    params = entry.get("params") or {}
    if not isinstance(params, Mapping):
        raise ModelError(f"model {name!r}: 'params' must be a mapping of parameter names to values, got {params!r}")
    params = dict(params)
    if "algorithm" in entry and "callable" in entry:
        raise ModelError(f"model {name!r}: give 'algorithm' or 'callable', not both")
    if "algorithm" in entry:
        try:
            algo = get_algorithm(entry["algorithm"], track=track)
        except ModelError as exc:
            raise ModelError(f"model {name!r}: {exc}") from None
    elif "callable" in entry:
        target = entry["callable"]  # "package.module:function", or the function itself (psybench.score)
        func = target if callable(target) else load_callable(target, model=name)
        path = target if isinstance(target, str) else f"{func.__module__}:{getattr(func, '__qualname__', func)}"
        user_track = track or entry.get("track", "motion")
        kind = entry.get("kind", DEFAULT_KIND.get(user_track, "pair"))
        allowed = TRACK_KINDS.get(user_track, KINDS)
        if kind not in allowed:
            raise ModelError(f"model {name!r}: kind must be one of {allowed} for track {user_track!r}, got {kind!r}")
        factory = entry.get("factory", False)
        if not isinstance(factory, bool):
            raise ModelError(f"model {name!r}: 'factory' must be true or false, got {factory!r}")
        problem = builder_problem(func, path=path) if factory else data_argument_problem(func, kind, path=path)
        if problem:
            raise ModelError(f"model {name!r}: {problem}")
        defaults, required = model_parameters(func, kind, factory=factory)
        algo = Algorithm(
            name=path,
            function=func,
            track=user_track,
            kind=kind,
            defaults=defaults,
            source="user",
            required=required,
            factory=factory,
        )
    else:
        raise ModelError(f"model {name!r}: needs 'algorithm' (built in) or 'callable' ('module:function')")
    if track is not None and algo.track != track:
        raise ModelError(f"model {name!r}: algorithm {algo.name!r} belongs to track {algo.track!r}, not {track!r}")
    problem = parameter_problem(algo.name, algo.kind, algo.function, algo.defaults, algo.required, params)
    if problem:
        raise ModelError(f"model {name!r}: {problem}")
    for key, value in params.items():
        default = algo.defaults.get(key)
        numeric_default = isinstance(default, (int, float)) and not isinstance(default, bool)
        if numeric_default and isinstance(value, str):
            raise ModelError(
                f"model {name!r}: parameter {key!r} must be a number, got the string {value!r} "
                "(YAML reads 1.0e9 as text: write 1.0e+9)"
            )
    merged = {**algo.defaults, **params}
    deep = algo.factory or algo.kind in BATCHED_KINDS.get(algo.track, ())
    if "factory" in entry and "algorithm" in entry:
        raise ModelError(f"model {name!r}: 'factory' belongs to a 'callable' entry (a built-in algorithm "
                         "is registered as a factory or not)")
    try:
        keys = deep_entry_keys(entry, factory=algo.factory, deep=deep, algorithm=algo.name, kind=algo.kind,
                               track=algo.track)
    except ValueError as exc:
        raise ModelError(f"model {name!r}: {exc}") from None
    return ModelSpec(name=name, algorithm=algo, params=merged, **keys)
