"""Run one configured plausibility model on one ingest shard and write its ``movie, p`` table.

The model comes as every track's jobs get theirs: its description
(:func:`psybench.handoff.describe_model`), rebuilt by the shared registry, or a
resolved spec or config entry ``{name, algorithm | callable, params}``
(:func:`psybench.handoff.as_model`, track ``"intphys"``). It is called through
:func:`psybench.model_checks.call_model` and receives an :class:`~psybench.intphys.models.observation.Observation`:
frames, depth, masks, mask names and movie ids, never the labels or conditions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psybench.handoff import as_model
from psybench.intphys.models.observation import observe
from psybench.io.tables import write_table
from psybench.model_checks import call_model, exits_are_errors
from psybench.registry import ModelError, ModelSpec

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["ModelSpecError", "TRAINED_ALGORITHMS", "predict_shard", "predict_shards"]

#: Built-in algorithms that take the weights written by the training stage (keyword ``weights``).
TRAINED_ALGORITHMS = ("nextframe",)

#: The error of a model that is unknown or returns invalid scores: the one model error of every track.
ModelSpecError = ModelError


def predict_shard(model: ModelSpec | Mapping[str, Any], store_path: str | os.PathLike, metadata_path: str | os.PathLike,
                  out_csv: str | os.PathLike, *, weights: str | os.PathLike | None = None,
                  threads: int = 1) -> pd.DataFrame:
    """Run ``model`` on one ingest store; write ``movie, p`` rows.

    Parameters
    ----------
    model : ModelSpec or mapping
        The model, its description (:func:`psybench.handoff.describe_model`) or its
        config entry ``{name, algorithm | callable, params}`` (one item of ``intphys.models``).
    store_path, metadata_path : path-like
        The ingest store and its metadata table (only mask names are read from it).
    out_csv : path-like
        The predictions table (CSV only).
    weights : path-like, optional
        Trained weights, passed as keyword ``weights`` (algorithms of
        :data:`TRAINED_ALGORITHMS`).
    threads : int
        Passed as keyword ``threads`` to a model that takes it, unless its parameters
        set another value than the algorithm's default (the predictions do not depend on it).

    Raises
    ------
    ModelError
        Naming the model and the shard if it fails or does not return one finite P
        in [0, 1] per movie.
    """
    import pandas as pd
    spec = as_model(model, track="intphys")
    switches: dict[str, Any] = {}
    defaults = spec.algorithm.defaults
    if "threads" in defaults and spec.params.get("threads") == defaults["threads"]:
        switches["threads"] = threads
    if weights is not None:
        switches["weights"] = weights
    observation = observe(store_path, metadata_path)
    movies = list(observation.movies)
    # The observation is frozen and every read of its arrays makes a fresh NumPy array, so a
    # model writing into what it read changes nothing that psybench (or another model) reads;
    # unlike the motion and attention frames they need no read-only view.
    where = f"shard {Path(store_path).name} (movies {movies[0]} to {movies[-1]})"
    with exits_are_errors(spec.name, where):
        p = call_model(spec, observation, where=where, expected=movies, **switches)
    df = pd.DataFrame({"movie": movies, "p": p.reindex(movies).to_numpy()})
    write_table(df, out_csv, parquet=False)
    return df


def predict_shards(model: ModelSpec | Mapping[str, Any], store_paths: Sequence[str | os.PathLike],
                   metadata_paths: Sequence[str | os.PathLike], out_csvs: Sequence[str | os.PathLike],
                   **kwargs: Any) -> list[pd.DataFrame]:
    """:func:`predict_shard` on every shard of a split, in one process (start-up paid once per model).

    Each shard is predicted exactly as alone (its own observation, its own table); the
    built-in models depend on nothing but the shard (the random control is seeded per movie).

    Parameters
    ----------
    model : ModelSpec or mapping
        As :func:`predict_shard` (rebuilt once for every shard).
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
    spec = as_model(model, track="intphys")
    if not len(store_paths) == len(metadata_paths) == len(out_csvs):
        raise ValueError(f"model {spec.name!r}: {len(store_paths)} shard stores, {len(metadata_paths)} "
                         f"metadata tables and {len(out_csvs)} prediction tables")
    out = []
    for store, table, csv in zip(store_paths, metadata_paths, out_csvs):
        names = {Path(store).name.removesuffix(".zarr"), Path(table).stem, Path(csv).stem}
        if len(names) != 1:
            raise ValueError(f"model {spec.name!r}: store {store}, table {table} and predictions {csv} "
                             "name different shards")
        out.append(predict_shard(spec, store, table, csv, **kwargs))
    return out
