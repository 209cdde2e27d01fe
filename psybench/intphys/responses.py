"""Run one configured plausibility model on one ingest shard and write its ``movie, p`` table.

The model comes as every track's jobs get theirs: its description
(:func:`psybench.handoff.describe_model`), rebuilt by the shared registry, or a
resolved spec or config entry ``{name, algorithm | callable, params}``
(:func:`psybench.handoff.as_model`, track ``"intphys"``). It is called through
:func:`psybench.model_checks.call_model` and receives an :class:`~psybench.intphys.models.observation.Observation`:
frames, depth, masks, mask names and movie ids, never the labels or conditions.

A ``"stream"`` model (:mod:`psybench.intphys.models.stream`) is built once per job (a
factory through :func:`psybench.deep.built`: its weights loaded, moved to its device)
and called once per movie with that movie's frames in batches of ``batch_size``; with
``train: true`` its ``fit(movies)`` first streams the train split's movies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psybench.handoff import as_model
from psybench.intphys.models.observation import observe
from psybench.intphys.models.stream import DEFAULT_BATCH_SIZE, fit_streams, stream_scores
from psybench.io.tables import write_table
from psybench.model_checks import call_model, check_probabilities, exits_are_errors, model_failure
from psybench.registry import ModelError, ModelSpec

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["ModelSpecError", "TRAINED_ALGORITHMS", "CHECKPOINT_ALGORITHMS", "predict_shard", "predict_shards"]

#: Built-in algorithms that take the weights written by the training stage (keyword ``weights``).
TRAINED_ALGORITHMS = ("nextframe",)
#: Built-in algorithms trained per model (rule ``intphys_train_model``): keyword ``weights`` is the
#: model's own checkpoint, ``results/intphys/train/<model>.pt``.
CHECKPOINT_ALGORITHMS = ("cnn_future",)

#: The error of a model that is unknown or returns invalid scores: the one model error of every track.
ModelSpecError = ModelError


def predict_shard(model: ModelSpec | Mapping[str, Any], store_path: str | os.PathLike, metadata_path: str | os.PathLike,
                  out_csv: str | os.PathLike, *, weights: str | os.PathLike | None = None,
                  threads: int = 1, runner: Any = None) -> pd.DataFrame:
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
        :data:`TRAINED_ALGORITHMS` and :data:`CHECKPOINT_ALGORITHMS`).
    threads : int
        Passed as keyword ``threads`` to a model that takes it, unless its parameters
        set another value than the algorithm's default (the predictions do not depend on it).
        A ``"stream"`` model's torch threads.
    runner : callable, optional
        A ``"stream"`` model already built (:func:`psybench.deep.built`), as
        :func:`predict_shards` passes it; built here when None.

    Raises
    ------
    ModelError
        Naming the model and the shard if it fails or does not return one finite P
        in [0, 1] per movie.
    """
    spec = as_model(model, track="intphys")
    if spec.kind == "stream":
        if runner is None:
            from psybench.deep import built
            with built(spec, threads=threads) as (runner, _device):
                return predict_shard(spec, store_path, metadata_path, out_csv, threads=threads, runner=runner)
        return _write(_stream_shard(spec, runner, store_path, metadata_path), out_csv)
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
    where = _where(store_path, movies)
    with exits_are_errors(spec.name, where):
        p = call_model(spec, observation, where=where, expected=movies, **switches)
    return _write(p.reindex(movies), out_csv)


def _write(p: pd.Series, out_csv: str | os.PathLike) -> pd.DataFrame:
    import pandas as pd
    df = pd.DataFrame({"movie": list(p.index), "p": p.to_numpy()})
    write_table(df, out_csv, parquet=False)
    return df


def _where(store_path: str | os.PathLike, movies: Sequence[str]) -> str:
    return f"shard {Path(store_path).name} (movies {movies[0]} to {movies[-1]})"


def _stream_shard(spec: ModelSpec, runner: Any, store_path: str | os.PathLike,
                  metadata_path: str | os.PathLike) -> pd.Series:
    """P of every movie of one shard from a built ``"stream"`` model (checked, errors naming the model)."""
    observation = observe(store_path, metadata_path)
    where = _where(store_path, observation.movies)
    output = spec.params.get("output", "surprise")
    with exits_are_errors(spec.name, where):
        try:
            p = stream_scores(runner, observation, batch_size=spec.batch_size or DEFAULT_BATCH_SIZE, output=output)
        except ModelError:
            raise
        except Exception as exc:
            raise model_failure(spec.name, exc, where) from exc
    return check_probabilities(spec.name, p, list(observation.movies), where)


def _fit(spec: ModelSpec, runner: Any, stores: Sequence[str | os.PathLike],
         tables: Sequence[str | os.PathLike]) -> None:
    """``runner.fit(movies)`` over the train split's shards (errors naming the model)."""
    if not callable(getattr(runner, "fit", None)):
        raise ModelError(f"model {spec.name!r} says train: true but {type(runner).__name__} has no fit(movies) method")
    where = f"the train split ({len(stores)} shards)"
    with exits_are_errors(spec.name, where):
        try:
            fit_streams(runner, [observe(s, t) for s, t in zip(stores, tables)],
                        batch_size=spec.batch_size or DEFAULT_BATCH_SIZE)
        except ModelError:
            raise
        except Exception as exc:
            raise model_failure(spec.name, exc, where) from exc


def predict_shards(model: ModelSpec | Mapping[str, Any], store_paths: Sequence[str | os.PathLike],
                   metadata_paths: Sequence[str | os.PathLike], out_csvs: Sequence[str | os.PathLike], *,
                   train_stores: Sequence[str | os.PathLike] = (), train_tables: Sequence[str | os.PathLike] = (),
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
    train_stores, train_tables : sequence of path-like
        The train split's ingest stores and metadata tables: a ``"stream"`` model is built
        once, fitted on their movies (``fit(movies)``) when given, then run on every shard.
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
    for store, table, csv in zip(store_paths, metadata_paths, out_csvs):
        names = {Path(store).name.removesuffix(".zarr"), Path(table).stem, Path(csv).stem}
        if len(names) != 1:
            raise ValueError(f"model {spec.name!r}: store {store}, table {table} and predictions {csv} "
                             "name different shards")
    if len(train_stores) != len(train_tables):
        raise ValueError(f"model {spec.name!r}: {len(train_stores)} train stores and {len(train_tables)} tables")
    if spec.kind != "stream":
        if train_stores:
            raise ValueError(f"model {spec.name!r}: only a 'stream' model is trained by psybench's fit(movies) hook")
        return [predict_shard(spec, *paths, **kwargs) for paths in zip(store_paths, metadata_paths, out_csvs)]
    from psybench.deep import built
    with built(spec, threads=kwargs.get("threads", 1)) as (runner, _device):
        if train_stores:
            _fit(spec, runner, train_stores, train_tables)
        return [predict_shard(spec, *paths, runner=runner, **kwargs)
                for paths in zip(store_paths, metadata_paths, out_csvs)]
