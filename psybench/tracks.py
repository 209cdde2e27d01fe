"""What the core knows of a track, read from the track's own package: metrics and config checks.

The core names no track. Each track is a package (``psybench.<track>``, or the one
:data:`TRACK_PACKAGES` names) that declares, in its ``__init__``, its provenance
(``TITLE``, ``BENCHMARK``, ``PAPER``, ``BIBTEX``, ``EXPERIMENTS``, read by
:func:`psybench.benchmarks.benchmarks` and the labels) and:

``METRICS``
    a tuple of :class:`Metric`: every metric its score rows write, under the name
    written in the long table's ``metric`` column, with a label, a unit and a
    direction (lower or higher is better). :mod:`psybench.aggregate.labels` reads
    its labels and units from here, and the leaderboard check its metric names.

and optionally ``HEADLINE_METRICS``, the metric names a leaderboard of the track ranks by
default (:func:`headline_metrics`; absent: every metric but the 0/1 verdicts), and in
``<package>.config_checks`` a function ``check_config(config, models)``, the
checks of its config section that JSON Schema cannot express (files, cross-key
constraints), raising :class:`psybench.config.ConfigError`; optionally
``criterion_experiments(config)``, the experiments whose criteria a leaderboard of the
track may name (None: any; called for every track, run or not).
:func:`psybench.config_checks.check_cross_keys` calls them
for each track a run scores.

Declaring the provenance and the checks in the track, read through one lookup,
follows Brain-Score's benchmark plugins (each benchmark carries its own metadata)
and xarray's backends (the core calls each backend through one entry).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

__all__ = [
    "Metric",
    "TRACK_PACKAGES",
    "track_pipeline",
    "DIRECTIONS",
    "track_package",
    "track_metrics",
    "find_metric",
    "headline_metrics",
    "config_check",
    "criterion_experiments",
]

#: A metric's direction: which values are better.
DIRECTIONS = ("lower", "higher")
#: The package of a track whose package is not ``psybench.<track>`` (a track under
#: development, or the toy track of the tests).
TRACK_PACKAGES: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class Metric:
    """One metric a track writes in its score rows.

    Parameters
    ----------
    name : str
        The ``metric`` column's value, exactly as written (``"AUC-Judd"``); with
        ``prefix``, the start of every such name (``"median_rp_"`` for
        ``median_rp_<group>``).
    label : str
        How a page names it ("shuffled AUC").
    unit : str
        Its unit ("deg", "fraction", "0/1"); ``units`` may give another per
        experiment (the first part of the criterion's experiment).
    direction : {"lower", "higher"}
        Which values are better.
    prefix : bool
        ``name`` is a prefix of a family of metrics.
    units : mapping {experiment: unit}
        Units that differ by experiment (motion's error: deg, or a.u. for the
        grating size).
    """

    name: str
    label: str
    unit: str
    direction: str
    prefix: bool = False
    units: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"metric {self.name!r}: direction must be one of {DIRECTIONS}, got {self.direction!r}")
        object.__setattr__(self, "units", MappingProxyType(dict(self.units)))

    def matches(self, metric: str) -> bool:
        """Whether ``metric`` (a ``metric`` column value) is this metric."""
        return metric.startswith(self.name) if self.prefix else metric == self.name

    def unit_of(self, experiment: str = "") -> str:
        """The unit of this metric in ``experiment`` (the first part of a criterion's experiment)."""
        return self.units.get(experiment, self.unit)


def track_package(track: str) -> ModuleType:
    """The package of ``track`` (imported): :data:`TRACK_PACKAGES`, else ``psybench.<track>``."""
    return importlib.import_module(TRACK_PACKAGES.get(track, f"psybench.{track}"))


def track_metrics(track: str) -> tuple[Metric, ...]:
    """The metrics ``track`` declares (its package's ``METRICS``), checked to be :class:`Metric`."""
    metrics = tuple(track_package(track).METRICS)
    bad = [m for m in metrics if not isinstance(m, Metric)]
    if bad:
        raise TypeError(f"track {track!r}: METRICS must hold psybench.tracks.Metric, got {bad!r}")
    return metrics


def find_metric(track: str, metric: str) -> Metric | None:
    """The declaration of ``metric`` in ``track`` (an exact name before a prefix), or None."""
    declared = track_metrics(track)
    exact = [m for m in declared if not m.prefix and m.matches(metric)]
    return (exact or [m for m in declared if m.matches(metric)] or [None])[0]


def headline_metrics(track: str) -> tuple[str, ...] | None:
    """The metrics a leaderboard of ``track`` ranks by default (its package's ``HEADLINE_METRICS``), or None (all).

    A track whose rows hold several views of one entry (attention: the Table 1 groups of a
    model next to the chance controls scored with the same model) names here the ones that
    compare models, so that a leaderboard's fronts separate them.
    """
    names = getattr(track_package(track), "HEADLINE_METRICS", None)
    return None if names is None else tuple(str(n) for n in names)


def _checks_module(track: str) -> ModuleType | None:
    name = f"{track_package(track).__name__}.config_checks"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None  # a track without checks of its own
        raise


def track_pipeline(track: str) -> ModuleType:
    """The track's ``pipeline`` module: its stage functions, and ``score``, the chain of ``psybench.score``.

    Raises
    ------
    ValueError
        The track has no ``pipeline`` module (it cannot be scored in one process).
    """
    name = f"{track_package(track).__name__}.pipeline"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            raise ValueError(f"track {track!r} has no module {name} (its stages for psybench.score)") from None
        raise


def config_check(track: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], None] | None:
    """The track's ``check_config(config, models)``, or None when it has none."""
    return getattr(_checks_module(track), "check_config", None)


def criterion_experiments(track: str, config: Mapping[str, Any]) -> list[str] | None:
    """The experiments a leaderboard criterion of ``track`` may name in this run, or None (any)."""
    hook = getattr(_checks_module(track), "criterion_experiments", None)
    known = None if hook is None else hook(config)
    return None if known is None else list(known)
