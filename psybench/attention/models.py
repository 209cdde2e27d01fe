"""Configured attention models: the rows of Table 1 and the feature stores they share.

An entry of ``attention.models`` has the shape every track uses, plus ``L``::

    models:
      - {name: raw, algorithm: raw, L: [1, 5]}
      - {name: pyramid, algorithm: pyramid, params: {levels: 3, sigma: 1.0}, L: [1, 3]}
      - {name: mine, callable: "mypackage.saliency:maps", params: {...}, L: 3}

* ``name`` labels the model in the tables (the ``features`` column of
  ``table1.csv`` and ``curves.csv``, ``"<name> L=<L> <tuning>"`` in
  ``metrics.csv``);
* ``algorithm`` (a registered feature family: raw, pyramid, itti) or ``callable``
  (``package.module:function``, the interface of :mod:`psybench.attention.responses`)
  and its keyword ``params``;
* ``L``: the neighbourhood side(s) of the feature vector (Shic & Scassellati
  2007, sec. 5.2), one Table 1 row per value. It sits next to ``params`` because
  the Fisher tuning reads it, not the feature function.

Every model is resolved by :func:`psybench.config.track_models`. Models with the
same family and parameters share one feature store per movie, named by
:func:`feature_key`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from psybench.config import ConfigError, track_models
from psybench.provenance import params_hash
from psybench.registry import ModelSpec

__all__ = [
    "MODEL_SHAPE", "SaliencyModel", "feature_key", "saliency_models", "map_models_of", "pair_movies",
    "metrics_settings", "UNTUNED_MAP", "map_row_model", "row_algorithms",
]

#: The ``tuning`` label of a map model's metrics rows: scored as given, never Fisher-tuned.
UNTUNED_MAP = "untuned map"

MODEL_SHAPE = ("models: [{name: NAME, algorithm: raw | pyramid | itti | callable: 'package.module:function', "
               "params: {...}, L: [1, 3]}]")


def feature_key(spec: ModelSpec) -> str:
    """Name of the feature store of a model: its family, plus a parameter hash when they are not the defaults.

    ``raw``, ``pyramid``, ``itti`` for the built-ins with default parameters;
    ``package.module.function`` for a user callable; ``<family>-<8 hex digits>``
    otherwise (the digits also cover the content of a deep model's ``weights`` file).
    Models with equal family, parameters and weights get the same key.
    """
    base = spec.algorithm.name.replace(":", ".")
    params = params_hash(dict(spec.params))
    if spec.weights is not None:  # a deep model's weights file: its content names the store too
        from psybench.deep import weights_digest

        return f"{base}-{params_hash({'params': params, 'weights': weights_digest(spec.weights)})[:8]}"
    if params == params_hash(dict(spec.algorithm.defaults)):
        return base
    return f"{base}-{params[:8]}"


@dataclasses.dataclass(frozen=True)
class SaliencyModel:
    """One configured attention model: its label, resolved feature family, and L values."""

    name: str
    spec: ModelSpec
    L: tuple[int, ...]

    @property
    def features(self) -> str:
        """Key of the feature store (see :func:`feature_key`)."""
        return feature_key(self.spec)

    @property
    def family(self) -> str:
        """The registered algorithm name or the ``package.module:function`` path."""
        return self.spec.algorithm.name

    def rows(self) -> list[dict[str, Any]]:
        """One Table 1 model row ``{"features": name, "L": L}`` per L."""
        return [{"features": self.name, "L": L} for L in self.L]


def saliency_models(config: Mapping[str, Any], specs: Mapping[str, ModelSpec] | None = None) -> list[SaliencyModel]:
    """Resolve ``attention.models`` of a validated config, in order; errors name the key and show the shape.

    ``specs`` are the models already resolved by :func:`psybench.config.track_models`
    (the workflow resolves every track's models once); by default they are resolved here.
    Map-output models (kind ``map``) are left out: see :func:`map_models_of`.
    """
    if specs is None:
        specs = track_models(config, "attention")
    out = []
    for i, entry in enumerate(config["attention"].get("models", [])):
        where = f"config key attention.models[{i}]"
        if specs[entry["name"]].kind == "map":
            continue  # scored untuned, by map_models_of
        L = entry.get("L")
        if L is None:
            raise ConfigError(f"{where}.L is required for model {entry['name']!r} (kind {specs[entry['name']].kind}):"
                              " the side(s) of the neighbourhood of its Fisher-tuned feature vector, e.g. L: [1]; "
                              "only a map-output model (kind map) goes without")
        values = L if isinstance(L, list) else [L]
        if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 or v % 2 == 0 for v in values):
            raise ConfigError(f"{where}.L: {L!r} is not a positive odd integer or a list of them; write {MODEL_SHAPE}")
        out.append(SaliencyModel(name=entry["name"], spec=specs[entry["name"]], L=tuple(values)))
    return out


def map_models_of(config: Mapping[str, Any], specs: Mapping[str, ModelSpec] | None = None) -> list[ModelSpec]:
    """The map-output models (kind ``map``) of ``attention.models``, in order.

    They are not feature families: each is scored untuned on the test movie of every
    (train, test) pair (:func:`psybench.attention.map_models.map_model_rows`).
    """
    if specs is None:
        specs = track_models(config, "attention")
    names = [entry["name"] for entry in config["attention"].get("models", [])]
    return [specs[n] for n in names if specs[n].kind == "map"]


def map_row_model(name: str) -> str:
    """The ``model`` of a map-output model's metrics rows: ``"<name> untuned map"``."""
    return f"{name} {UNTUNED_MAP}"


def row_algorithms(config: Mapping[str, Any], specs: Mapping[str, ModelSpec]) -> dict[str, str]:
    """``{row model: algorithm}`` of the attention rows whose ``model`` is not the entry's name.

    A map-output model's rows are named :func:`map_row_model`; they belong to the
    entry's algorithm (a callable's: its entry name), as the entry's own rows do, so
    the leaderboards' ``algorithm`` column names it.
    """
    return {map_row_model(entry["name"]): entry.get("algorithm", entry["name"])
            for entry in config["attention"].get("models", []) if specs[entry["name"]].kind == "map"}


def pair_movies(section: Mapping[str, Any]) -> list[str]:
    """Movie names used by the (train, test) ``pairs`` of the ``attention`` section, sorted."""
    movies = sorted({m for pair in section.get("pairs", []) for m in pair})
    unknown = [m for m in movies if m not in (section.get("movies") or {})]
    if unknown:
        raise ConfigError(f"config key attention.pairs: movie(s) {unknown} missing from attention.movies")
    return movies


def metrics_settings(section: Mapping[str, Any]) -> dict[str, Any]:
    """Keywords of :func:`psybench.attention.metrics.run_metrics` from a validated ``attention`` section.

    The evaluation settings the tuned maps share with Table 1 (negatives, their
    distance, seed, memory) and the metrics' own (``attention.metrics``). Here, not in
    the metrics module, so that planning the workflow does not import SciPy. Only the
    shared settings go in ``evaluation`` (the others default), so that a change of a
    Table 1 setting alone does not rerun the metrics.
    """
    ev = section["evaluation"]
    shared = {k: ev[k] for k in ("n_negatives", "min_dist_frac", "seed", "in_memory_mb", "split", "split_blocks",
                                 "split_gap_ms") if k in ev}
    return {"lags_ms": section["lags_ms"], "evaluation": shared, **section["metrics"]}
