"""The IntPhys directory layout: movies of a split, and their shards.

``train/<index>/`` for training movies, ``<split>/<block>/<index>/<run 1..4>/``
for dev and test (Riochet et al. 2018, IntPhys V1.0, "Train set" and "Dev and
Test"). Discovering the movies reads directory entries only, no images.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["IntPhysFormatError", "Movie", "list_movies", "shard_movies", "n_shards"]

_BLOCK_RE = re.compile(r"^O\d+$")


class IntPhysFormatError(ValueError):
    """The input is not a valid IntPhys tree; the message names the file or directory."""


@dataclass(frozen=True)
class Movie:
    """One movie directory: its id (``O1/0001/1`` or ``00001``), split and path."""

    movie_id: str
    split: str
    path: Path

    @property
    def quadruplet(self) -> str:
        """``<block>/<index>`` for dev/test movies, the id itself for train."""
        return self.movie_id.rsplit("/", 1)[0] if self.movie_id.count("/") == 2 else self.movie_id


def _subdirs(path: Path) -> list[os.DirEntry]:
    with os.scandir(path) as it:
        return sorted((e for e in it if e.is_dir() and not e.name.startswith(".")), key=lambda e: e.name)


def list_movies(root: str | os.PathLike, split: str) -> list[Movie]:
    """Discover the movies of ``root/<split>`` (directory listing only, no image reads).

    Parameters
    ----------
    root : path-like
        Dataset root holding ``train/``, ``dev/`` and/or ``test/``.
    split : {"train", "dev", "test"}

    Returns
    -------
    list of Movie
        Sorted by movie id.

    Raises
    ------
    IntPhysFormatError
        Naming the directory that does not follow the IntPhys layout
        (``train/<index>/`` or ``<split>/<block>/<index>/<run 1..4>/``).
    """
    base = Path(root) / split
    if not base.is_dir():
        raise IntPhysFormatError(f"IntPhys split directory {base} does not exist")
    movies: list[Movie] = []
    if split == "train":
        for e in _subdirs(base):
            if not e.name.isdigit():
                raise IntPhysFormatError(
                    f"{base / e.name} is not an IntPhys training movie directory (expected train/<index>/)"
                )
            movies.append(Movie(e.name, split, Path(e.path)))
    else:
        for b in _subdirs(base):
            if not _BLOCK_RE.match(b.name):
                raise IntPhysFormatError(
                    f"{base / b.name} is not an IntPhys block directory (expected {split}/O1, O2, O3 ...)"
                )
            for i in _subdirs(Path(b.path)):
                if not i.name.isdigit():
                    raise IntPhysFormatError(f"{Path(i.path)} is not an IntPhys quadruplet directory (<index>)")
                runs = [r.name for r in _subdirs(Path(i.path))]
                if runs != ["1", "2", "3", "4"]:
                    raise IntPhysFormatError(
                        f"{Path(i.path)} holds runs {runs}, expected the four runs 1, 2, 3, 4 of a quadruplet"
                    )
                movies.extend(Movie(f"{b.name}/{i.name}/{r}", split, Path(i.path) / r) for r in runs)
    if not movies:
        raise IntPhysFormatError(f"{base} holds no IntPhys movie directories")
    return movies


def shard_movies(movies: Sequence[Any], shard_size: int) -> list[list[Any]]:
    """Consecutive groups of ``shard_size`` movies (the last one may be shorter)."""
    if int(shard_size) < 1:
        raise ValueError(f"shard_size must be >= 1, got {shard_size!r}")
    n = int(shard_size)
    return [list(movies[i : i + n]) for i in range(0, len(movies), n)]


def n_shards(n_movies: int, shard_size: int) -> int:
    """Number of shards for ``n_movies`` movies."""
    return -(-int(n_movies) // int(shard_size))
