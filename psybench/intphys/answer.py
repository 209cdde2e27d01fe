"""The official ``answer.txt`` of IntPhys: one ``<movie id> <score>`` line per movie.

Scores are plausibilities in [0, 1]; every quadruplet must be complete
(Riochet et al. 2018, IntPhys V1.0, "Dev and Test": submissions of the test set).

Movie ids are the ones the official scorer reads (the IntPhys challenge's
``score.py``): ``<scene>/<run>``, the scene being the quadruplet's path under the
split, ``<block>/<quadruplet folder>``. The scorer picks a block's scenes by the
substring ``O1``/``O2``/``O3`` and its visible and occluded scenes by the
substrings ``visible``/``occluded`` of the scene id, and divides by their number,
so the short ``O1/0001/1`` stops it (ZeroDivisionError). :func:`answer_ids` gives
the descriptive id of the starting kit, ``O1/0001_O1_test_visible_static_nobj1/1``:
the quadruplet folder as distributed where it is descriptive, else spelled from the
movie's conditions (status.json or a condition table), else, conditions unknown,
the short id. :func:`read_answer` reads both spellings (files written before are
short).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.intphys.ingest.status import tree_metadata
from psybench.io.atomic import atomic_output

__all__ = ["AnswerFormatError", "as_scores", "answer_ids", "write_answer", "read_answer", "validate_answer"]


class AnswerFormatError(ValueError):
    """An answer.txt is malformed; the message names the file, line number and text."""


def as_scores(scores) -> pd.Series:
    """movie id (str) -> P from a mapping, a Series or a ``movie, p`` table."""
    if isinstance(scores, pd.DataFrame):
        scores = scores.set_index("movie")["p"]
    s = pd.Series(scores, dtype=float)
    s.index = s.index.astype(str)
    return s


def _known(value) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value)) and value is not pd.NA


def answer_ids(metadata: pd.DataFrame) -> pd.Series:
    """The official scorer's id of every movie of ``metadata`` (see the module docstring).

    Parameters
    ----------
    metadata : DataFrame
        Column ``movie`` (``<block>/<index>/<run>``) and, where known, ``folder``
        (the quadruplet folder's name), ``visibility``, ``motion`` and ``n_objects``.

    Returns
    -------
    pandas.Series
        movie id -> answer id: ``<block>/<folder>/<run>`` for a descriptive folder,
        ``<block>/<index>_<block>_test_<visibility>_<motion>_nobj<n>/<run>`` for a
        digits-only folder of known conditions, else the movie id itself.
    """
    ids = {}
    cols = [c for c in ("folder", "visibility", "motion", "n_objects") if c in metadata.columns]
    for row in metadata[["movie", *cols]].itertuples(index=False):
        movie = str(row.movie)
        parts = movie.split("/")
        ids[movie] = movie
        if len(parts) != 3:  # a training movie: not submitted
            continue
        block, index, run = parts
        folder = str(row.folder) if "folder" in cols and _known(row.folder) else index
        if not folder.isdigit():
            ids[movie] = f"{block}/{folder}/{run}"
        elif all(c in cols and _known(getattr(row, c)) for c in ("visibility", "motion", "n_objects")):
            ids[movie] = f"{block}/{index}_{block}_test_{row.visibility}_{row.motion}_nobj{int(row.n_objects)}/{run}"
    return pd.Series(ids, dtype=object)


def write_answer(scores, path: str | os.PathLike, *, metadata: pd.DataFrame | None = None) -> Path:
    """Write the official ``answer.txt``: one ``<movie id> <score>`` line per movie, sorted by id.

    Scores are written with 10 significant digits
    (``O1/0001_O1_test_visible_static_nobj1/1 0.9751``).

    Parameters
    ----------
    scores : mapping, Series or ``movie, p`` table
        Movie id (``<block>/<index>/<run>``) -> P in [0, 1].
    path : path-like
    metadata : DataFrame, optional
        The split's metadata: ids are written as the official scorer reads them
        (:func:`answer_ids`). Without it the movie ids are written as given.
    """
    s = as_scores(scores)
    bad = s[~np.isfinite(s.to_numpy()) | (s < 0) | (s > 1)]
    if len(bad):
        raise ValueError(f"scores must be in [0, 1]; movie {bad.index[0]!r} has {bad.iloc[0]!r}")
    if metadata is not None:
        ids = answer_ids(metadata)
        unknown = s.index.difference(ids.index)
        if len(unknown):
            raise ValueError(f"movie {unknown[0]!r} has a score but is not in the split's metadata")
        s = pd.Series(s.to_numpy(), index=ids.reindex(s.index).to_numpy())
    s = s.sort_index()
    path = Path(path)
    with atomic_output(path) as tmp, open(tmp, "w") as fh:
        for movie, v in s.items():
            fh.write(f"{movie} {v:.10g}\n")
    return path


def read_answer(path: str | os.PathLike, metadata: pd.DataFrame, *, require_all: bool = True) -> pd.Series:
    """Read and validate an ``answer.txt`` against the split's metadata.

    Parameters
    ----------
    path : path-like
    metadata : DataFrame
        Columns ``movie`` and ``quadruplet`` (and those of :func:`answer_ids`).
    require_all : bool
        Every movie of the metadata must be scored (the official rule).

    Returns
    -------
    pandas.Series
        movie id (``<block>/<index>/<run>``) -> score, whichever spelling the file
        uses: the official scorer's (:func:`answer_ids`) or the short one.

    Raises
    ------
    AnswerFormatError
        Naming the file, the line number and its text: a line that is not
        ``<movie> <score>``, an unknown movie, a score that is not a number or
        lies outside [0, 1], a duplicate movie, an incomplete quadruplet.
    """
    path = Path(path)
    known = dict(zip(metadata["movie"].astype(str), metadata["quadruplet"].astype(str)))
    spelled = {**{m: m for m in known}, **{a: m for m, a in answer_ids(metadata).items()}}
    seen: dict[str, tuple[int, float, str]] = {}
    raw_bytes = path.read_bytes()
    try:
        lines = raw_bytes.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        line_no = raw_bytes[: exc.start].count(b"\n") + 1
        raise AnswerFormatError(f"{path}, line {line_no}: not UTF-8 text ({exc.reason})") from None
    for no, line in enumerate(lines, start=1):
        text = line.rstrip("\r")
        if not text.strip():
            continue
        where = f"{path}, line {no} ({text!r})"
        parts = text.split()
        if len(parts) != 2:
            raise AnswerFormatError(f"{where}: expected '<movie id> <score>', e.g. "
                                    "'O1/0001_O1_test_visible_static_nobj1/1 0.5' or 'O1/0001/1 0.5'")
        given, raw = parts
        if given not in spelled:
            example = next(iter(spelled.values()), "")
            raise AnswerFormatError(f"{where}: unknown movie {given!r} (ids of this split read e.g. "
                                    f"{answer_ids(metadata).get(example, example)!r} or {example!r})")
        movie = spelled[given]
        try:
            v = float(raw)
        except ValueError:
            raise AnswerFormatError(f"{where}: score {raw!r} is not a number") from None
        if not (0.0 <= v <= 1.0):  # also rejects NaN
            raise AnswerFormatError(f"{where}: score {raw} is outside [0, 1]")
        if movie in seen:
            raise AnswerFormatError(f"{where}: duplicate movie {given!r}, already on line {seen[movie][0]}")
        seen[movie] = (no, v, text)
    by_q: dict[str, list[str]] = {}
    for m, q in known.items():
        by_q.setdefault(q, []).append(m)
    for q, ms in sorted(by_q.items()):
        got = [m for m in ms if m in seen]
        if got and len(got) != len(ms):
            no, _, text = min(seen[m] for m in got)
            lacking = sorted(set(ms) - set(got))
            raise AnswerFormatError(f"{path}, line {no} ({text!r}): incomplete quadruplet {q}, lacking {lacking}")
    if require_all and len(seen) != len(known):
        lacking = sorted(set(known) - set(seen))
        raise AnswerFormatError(f"{path}: {len(lacking)} movie(s) not scored, e.g. {lacking[:4]}")
    return pd.Series({m: v for m, (_, v, _) in seen.items()}, dtype=float).sort_index()


def validate_answer(path: str | os.PathLike, root: str | os.PathLike, split: str = "test", *,
                    conditions: str | os.PathLike | None = None) -> dict[str, object]:
    """Check a submission ``answer.txt`` against an IntPhys tree (no labels needed).

    Every movie of ``root/<split>`` must be scored once, with a score in [0, 1],
    every quadruplet complete, and no unknown id (:func:`read_answer`). Ids are
    those the official scorer reads (:func:`answer_ids`, from the folder names and
    the conditions of status.json or ``conditions``) or the short
    ``<block>/<index>/<run>``.

    Parameters
    ----------
    path : path-like
        The answer.txt.
    root : path-like
        Dataset root holding ``<split>/``.
    split : {"dev", "test"}
    conditions : path-like, optional
        The workflow's condition table (``intphys.conditions``), if its answers
        were written with one.

    Returns
    -------
    dict
        ``movies``, ``quadruplets``, ``min``, ``max`` of the valid submission.

    Raises
    ------
    AnswerFormatError
        Naming the file and line at fault.
    psybench.intphys.ingest.IntPhysFormatError
        When ``root/<split>`` is not an IntPhys tree.
    """
    meta = tree_metadata(root, split, conditions=conditions)
    scores = read_answer(path, meta, require_all=True)
    return {"movies": len(scores), "quadruplets": int(meta["quadruplet"].nunique()),
            "min": float(scores.min()), "max": float(scores.max())}
