"""Run one configured plausibility model on one ingest shard and write its ``movie, p`` table.

The model is resolved from its config entry ``{name, algorithm | callable, params}``
by the shared registry (:func:`psybench.registry.resolve_model`, track
``"intphys"``) and receives an :class:`~psybench.intphys.models.observation.Observation`:
frames, depth, masks, mask names and movie ids, never the labels or conditions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psybench.intphys.models.observation import observe
from psybench.io.tables import write_table
from psybench.model_checks import exits_are_errors, model_failure
from psybench.registry import ModelError, resolve_model

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (issue 15: planning imports these modules)
    import pandas as pd

__all__ = ["ModelSpecError", "TRAINED_ALGORITHMS", "predict_shard", "predict_shards"]

#: Built-in algorithms that take the weights written by the training stage (keyword ``weights``).
TRAINED_ALGORITHMS = ("nextframe",)


class ModelSpecError(ModelError):
    """A plausibility model is unknown or returned invalid scores; the message names it."""


def predict_shard(entry: Mapping[str, Any], store_path: str | os.PathLike, metadata_path: str | os.PathLike,
                  out_csv: str | os.PathLike, *, weights: str | os.PathLike | None = None,
                  threads: int = 1) -> pd.DataFrame:
    """Run the model of config ``entry`` on one ingest store; write ``movie, p`` rows.

    Parameters
    ----------
    entry : mapping
        ``{name, algorithm | callable, params}`` (one item of ``intphys.models``).
    store_path, metadata_path : path-like
        The ingest store and its metadata table (only mask names are read from it).
    out_csv : path-like
        The predictions table (CSV only).
    weights : path-like, optional
        Trained weights, passed as keyword ``weights`` (algorithms of
        :data:`TRAINED_ALGORITHMS`).
    threads : int
        Passed as keyword ``threads`` to a model that takes it, unless its
        config entry sets it.

    Raises
    ------
    ModelSpecError
        Naming the model if it does not return one finite P in [0, 1] per movie.
    """
    import pandas as pd
    spec = resolve_model(entry, track="intphys")
    name = spec.name
    configured = dict(entry.get("params") or {})
    params = dict(spec.params)
    if "threads" in spec.algorithm.defaults and "threads" not in configured:
        params["threads"] = threads
    if weights is not None:
        params["weights"] = weights
    observation = observe(store_path, metadata_path)
    # The observation is frozen and every read of its arrays makes a fresh NumPy array, so a
    # model writing into what it read changes nothing that psybench (or another model) reads;
    # unlike the motion and attention frames they need no read-only view.
    user = spec.algorithm.source == "user"
    try:
        with exits_are_errors(name, f"shard {Path(store_path).name} (movies {observation.movies[0]} to "
                                    f"{observation.movies[-1]})"):
            raw = spec.algorithm.function(observation, **params)
    except Exception as exc:
        if not user or isinstance(exc, ModelError):
            raise
        raise model_failure(name, exc) from exc
    if not isinstance(raw, pd.Series):
        raise ModelSpecError(f"model {name!r} returned {type(raw).__name__}; expected a pandas.Series "
                             "(movie id -> P(possible) in [0, 1])")
    numeric = pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype)
    if not pd.api.types.is_float_dtype(raw.dtype) and (user or not numeric):  # a user's 0/1 ints: a bug
        raise ModelSpecError(f"model {name!r} returned a Series of dtype {raw.dtype}; expected floating point "
                             "probabilities in [0, 1]")
    if raw.index.has_duplicates:
        raise ModelSpecError(f"model {name!r} returned movie {raw.index[raw.index.duplicated()][0]!r} twice")
    p = raw.astype(float)
    movies = list(observation.movies)
    if sorted(map(str, p.index)) != sorted(movies):
        raise ModelSpecError(f"model {name!r} returned scores for {len(p)} movies, the store has {len(movies)}")
    bad = p[~np.isfinite(p.to_numpy()) | (p < 0) | (p > 1)]
    if len(bad):
        raise ModelSpecError(
            f"model {name!r} returned P = {float(bad.iloc[0])!r} for movie {bad.index[0]!r}; need [0, 1]"
        )
    df = pd.DataFrame({"movie": movies, "p": p.reindex(movies).to_numpy()})
    write_table(df, out_csv, parquet=False)
    return df


def predict_shards(entry: Mapping[str, Any], store_paths: Sequence[str | os.PathLike],
                   metadata_paths: Sequence[str | os.PathLike], out_csvs: Sequence[str | os.PathLike],
                   **kwargs: Any) -> list[pd.DataFrame]:
    """:func:`predict_shard` on every shard of a split, in one process (issue 15: start-up paid once per model).

    Each shard is predicted exactly as alone (its own observation, its own table); the
    built-in models depend on nothing but the shard (the random control is seeded per movie).

    Parameters
    ----------
    entry : mapping
        As :func:`predict_shard`.
    store_paths, metadata_paths, out_csvs : sequence of path-like
        One ingest store, its metadata table and its predictions table per shard, paired by
        shard name (``shard_0000.zarr``, ``shard_0000.csv``, ``.../shard_0000.csv``).
    **kwargs
        Passed to :func:`predict_shard` (``weights``, ``threads``).

    Raises
    ------
    ValueError
        If the three lists differ in length or a triple names different shards.
    """
    if not len(store_paths) == len(metadata_paths) == len(out_csvs):
        raise ValueError(f"model {entry.get('name')!r}: {len(store_paths)} shard stores, {len(metadata_paths)} "
                         f"metadata tables and {len(out_csvs)} prediction tables")
    out = []
    for store, table, csv in zip(store_paths, metadata_paths, out_csvs):
        names = {Path(store).name.removesuffix(".zarr"), Path(table).stem, Path(csv).stem}
        if len(names) != 1:
            raise ValueError(f"model {entry.get('name')!r}: store {store}, table {table} and predictions {csv} "
                             "name different shards")
        out.append(predict_shard(entry, store, table, csv, **kwargs))
    return out
