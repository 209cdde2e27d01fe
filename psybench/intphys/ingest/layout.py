"""The IntPhys directory layout: movies of a split, and their shards.

``train/<index>/`` for training movies, ``<split>/<block>/<quadruplet>/<run 1..4>/``
for dev and test (Riochet et al. 2018, IntPhys V1.0, "Train set" and "Dev and
Test"). Discovering the movies reads directory entries only, no images.

Quadruplet folders come in the published spellings:

* digits only, ``O1/0001`` (the 2019 generator: ``Scene.get_scene_subdir`` of
  bootphon/intphys, ``<category>/<block>/<zero-padded index>``);
* descriptive, ``O1/0001_O1_test_visible_static_nobj1`` (the challenge starting
  kit's answer paths) or ``O1/01_test_visible_static_nobj1`` (an older dev
  release); the 2018 baselines select test movies by these names
  (rronan/IntPhys-Baselines, ``lists/make_list_test.py``).

The movie id is always the short form of the official answer.txt,
``<block>/<index digits>/<run>`` (``O1/0001/1``); a descriptive folder name is kept
in :attr:`Movie.folder` so that its conditions can be read
(:func:`folder_conditions`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["IntPhysFormatError", "Movie", "list_movies", "shard_movies", "n_shards", "folder_conditions"]

_BLOCK_RE = re.compile(r"^O\d+$")
_QUAD_RE = re.compile(r"^(\d+)(?:_(\w+))?$")
# descriptive quadruplet names: [O1_]test_<visibility>_<motion>_nobj<N>
_COND_RE = re.compile(r"(?:^|_)(?:(O\d+)_)?(?:test|dev)_(visible|occluded)_(static|dynamic_1|dynamic_2)_nobj(\d+)$")


class IntPhysFormatError(ValueError):
    """The input is not a valid IntPhys tree; the message names the file or directory."""


@dataclass(frozen=True)
class Movie:
    """One movie directory: its id (``O1/0001/1`` or ``00001``), split and path."""

    movie_id: str
    split: str
    path: Path

    @property
    def folder(self) -> str:
        """The quadruplet folder's name as on disk (``0001`` or ``0001_O1_test_visible_static_nobj1``)."""
        return self.path.parent.name if self.movie_id.count("/") == 2 else self.path.name

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
            indices: dict[str, str] = {}
            for i in _subdirs(Path(b.path)):
                q = _QUAD_RE.match(i.name)
                if not q:
                    raise IntPhysFormatError(
                        f"{Path(i.path)} is not an IntPhys quadruplet directory (expected <index> digits, "
                        "optionally followed by a descriptive name such as 0001_O1_test_visible_static_nobj1)"
                    )
                index = q.group(1)
                if index in indices:
                    raise IntPhysFormatError(
                        f"{Path(i.path)} and {base / b.name / indices[index]} both hold quadruplet {b.name}/{index}"
                    )
                indices[index] = i.name
                runs = [r.name for r in _subdirs(Path(i.path))]
                if runs != ["1", "2", "3", "4"]:
                    raise IntPhysFormatError(
                        f"{Path(i.path)} holds runs {runs}, expected the four runs 1, 2, 3, 4 of a quadruplet"
                    )
                movies.extend(Movie(f"{b.name}/{index}/{r}", split, Path(i.path) / r) for r in runs)
    if not movies:
        raise IntPhysFormatError(f"{base} holds no IntPhys movie directories")
    return sorted(movies, key=lambda m: m.movie_id)


def folder_conditions(movie: Movie) -> dict[str, Any] | None:
    """Conditions spelled in a descriptive quadruplet folder name, or None.

    ``0001_O1_test_visible_static_nobj1`` and ``01_test_occluded_dynamic_2_nobj3``
    give ``{"visibility", "motion", "n_objects"}``; a block spelled in the name
    must be the block folder's.
    """
    if movie.movie_id.count("/") != 2:
        return None
    m = _COND_RE.search(movie.folder)
    if not m:
        return None
    block = movie.movie_id.split("/")[0]
    if m.group(1) and m.group(1) != block:
        raise IntPhysFormatError(f"{movie.path.parent} names block {m.group(1)} but lies in block folder {block}")
    return {"visibility": m.group(2), "motion": m.group(3), "n_objects": int(m.group(4))}


def shard_movies(movies: Sequence[Any], shard_size: int) -> list[list[Any]]:
    """Consecutive groups of ``shard_size`` movies (the last one may be shorter)."""
    if int(shard_size) < 1:
        raise ValueError(f"shard_size must be >= 1, got {shard_size!r}")
    n = int(shard_size)
    return [list(movies[i : i + n]) for i in range(0, len(movies), n)]


def n_shards(n_movies: int, shard_size: int) -> int:
    """Number of shards for ``n_movies`` movies."""
    return -(-int(n_movies) // int(shard_size))
