"""How many movies and shards a split has, from the configuration alone.

The workflow enumerates shards without checkpoints: for a generated tree from
the generator's sizes (:func:`~psybench.intphys.generate.expected_movie_ids`),
for a real tree by listing it once (:func:`~psybench.intphys.ingest.list_movies`,
directory entries only, no image reads).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from psybench.intphys.generate import expected_movie_ids
from psybench.intphys.ingest import list_movies, n_shards

__all__ = ["count_movies", "shard_ids"]


def count_movies(root: str | os.PathLike, split: str, *, generator: Mapping[str, Any] | None = None) -> int:
    """Number of movies of ``root/<split>``.

    Parameters
    ----------
    root : path-like
        IntPhys dataset root.
    split : {"train", "dev", "test"}
    generator : mapping, optional
        Keywords of :func:`~psybench.intphys.generate.generate_intphys` when the tree
        is (to be) generated: the count follows from ``blocks``, ``per_condition``
        and ``n_train`` without reading ``root``. ``None``: list the real tree.
    """
    if generator is not None:
        return len(expected_movie_ids(split, blocks=tuple(generator["blocks"]),
                                      per_condition=generator["per_condition"], n_train=generator["n_train"]))
    return len(list_movies(root, split))


def shard_ids(n_movies: int, shard_size: int) -> list[str]:
    """Four-digit shard ids ``["0000", "0001", ...]`` covering ``n_movies`` movies."""
    return [f"{k:04d}" for k in range(n_shards(n_movies, shard_size))]
