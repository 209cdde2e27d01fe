"""A model function's parameters, read from its signature (used by :mod:`psybench.registry`).

A model function takes its kind's data arguments first, positionally (``frame0,
frame1`` for a motion ``pair`` model, ``chunks`` for a ``stream`` model, ``frames``
for an attention ``saliency`` model, ``observation`` for an IntPhys
``plausibility`` model), then its parameters. A parameter may be an ordinary
argument with a default (``def estimate(frame0, frame1, radius=3)``), a
keyword-only one (``def estimate(frame0, frame1, *, radius=3)``) or one without a
default, which the config must then give (``params: {radius: 5}``); ``**kwargs``
accepts any name. The runner passes the parameters by keyword.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "DATA_ARGUMENTS",
    "RUNNER_KEYWORDS",
    "BUILDER_KEYWORDS",
    "builder_problem",
    "model_parameters",
    "data_argument_problem",
    "parameter_problem",
]

#: The data arguments each kind's runner passes positionally before the parameters.
DATA_ARGUMENTS = {
    "pair": ("frame0", "frame1"),
    "stream": ("chunks",),
    "saliency": ("frames",),
    "plausibility": ("observation",),
    # deep models' batched kinds (psybench.deep); intphys "stream" takes one ``movie``
    # iterator, as motion's "stream" takes ``chunks``
    "pairs": ("frames0", "frames1"),
    "features": ("frames",),
    "map": ("frames",),
}
#: Keywords the job passes to a factory's builder, never parameters (psybench.deep).
BUILDER_KEYWORDS = ("weights", "device")
#: Keywords a runner passes itself, never parameters: a stream model's ``display`` (and
#: ``stimulus``, the stimulus attributes, to a motion model that declares it: the reference
#: observer ``people``), and the ``history`` frames a saliency model that declares ``history_frames`` receives
#: (:mod:`psybench.attention.responses`).
RUNNER_KEYWORDS = ("display", "stimulus", "history")
_EXAMPLES = {
    "pair": "estimate(frame0, frame1, radius=3)",
    "stream": "estimate(chunks, *, display, gain=1.0)",
    "saliency": "maps(frames, sigma=2.0)",
    "plausibility": "plausibility(observation, k=3)",
}
_BY_POSITION = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def model_parameters(
    func: Callable[..., Any], kind: str, *, factory: bool = False
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The parameters of a model function of ``kind`` (or of a factory's builder).

    Parameters
    ----------
    func : callable
        The model function.
    kind : str
        Its interface, a key of :data:`DATA_ARGUMENTS`.
    factory : bool
        ``func`` is a builder ``build(*, weights, device, **params)``: it takes no data,
        and :data:`BUILDER_KEYWORDS` are not parameters.

    Returns
    -------
    defaults : dict
        ``{name: default}`` of every parameter with a default, in signature order.
    required : tuple of str
        Parameters without a default.

    Notes
    -----
    The first ``len(DATA_ARGUMENTS[kind])`` positional arguments are the data,
    whatever their names; every later argument that can be passed by keyword is a
    parameter. Positional-only arguments after the data, ``*args``, ``**kwargs`` and
    :data:`RUNNER_KEYWORDS` are not.
    """
    params = list(inspect.signature(func).parameters.values())
    positional = [p.name for p in params if p.kind in _BY_POSITION]
    data = set(BUILDER_KEYWORDS) if factory else set(positional[: len(DATA_ARGUMENTS.get(kind, ("data",)))])
    defaults: dict[str, Any] = {}
    required: list[str] = []
    for p in params:
        if p.name in data or p.name in RUNNER_KEYWORDS or p.kind not in _BY_KEYWORD:
            continue
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            defaults[p.name] = p.default
    return defaults, tuple(required)


def builder_problem(func: Callable[..., Any], *, path: str) -> str | None:
    """What is wrong with a factory's builder, or None: it must take ``weights`` and ``device`` by keyword."""
    params = inspect.signature(func).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    missing = [k for k in BUILDER_KEYWORDS if k not in params or params[k].kind not in _BY_KEYWORD]
    if missing:
        return (f"{path!r} is a factory but does not take {missing} by keyword; a builder is "
                "def build(*, weights, device, **params) -> model")
    return None


def data_argument_problem(func: Callable[..., Any], kind: str, *, path: str) -> str | None:
    """What is wrong with how ``func`` takes its kind's data arguments, or None.

    ``path`` names the function in the message (``"mypackage.flow:estimate"``).
    """
    params = list(inspect.signature(func).parameters.values())
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return None
    n = sum(p.kind in _BY_POSITION for p in params)
    need = DATA_ARGUMENTS.get(kind, ("data",))
    if n >= len(need):
        return None
    return (
        f"{path!r} takes {n} positional argument(s); a {kind!r} model takes {len(need)} ({', '.join(need)}), "
        f"then its parameters, e.g. def {_EXAMPLES.get(kind, 'f(data, p=1)')}"
    )


def parameter_problem(
    algorithm: str,
    kind: str,
    func: Callable[..., Any],
    defaults: Mapping[str, Any],
    required: tuple[str, ...],
    params: Mapping[str, Any],
) -> str | None:
    """What is wrong with the configured ``params`` of a model function, or None.

    Unknown names are refused unless ``func`` takes ``**kwargs``; parameters
    without a default must be given. The message says what is accepted and how a
    parameter is declared.
    """
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(func).parameters.values())
    accepted = sorted({*defaults, *required})
    unknown = sorted(set(params) - set(accepted))
    if unknown and not accepts_any:
        data = ", ".join(DATA_ARGUMENTS.get(kind, ("data",)))
        return (
            f"unknown parameter(s) {unknown} for algorithm {algorithm!r}; accepted: {accepted} "
            f"(a parameter is an argument after the data ({data}), e.g. def "
            f"{_EXAMPLES.get(kind, 'f(data, p=1)').split('(')[0]}({data}, {unknown[0]}=...), or **kwargs)"
        )
    missing = [key for key in required if key not in params]
    if missing:
        return (
            f"parameter(s) {missing} of {algorithm!r} have no default: give them under 'params' in the model's "
            f"entry (params: {{{missing[0]}: ...}}) or a default in the function's signature"
        )
    return None
