"""The official ``answer.txt`` of IntPhys: one ``<movie id> <score>`` line per movie.

Scores are plausibilities in [0, 1]; every quadruplet must be complete
(Riochet et al. 2018, IntPhys V1.0, "Dev and Test": submissions of the test set).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.io.atomic import atomic_output

__all__ = ["AnswerFormatError", "as_scores", "write_answer", "read_answer", "validate_answer"]


class AnswerFormatError(ValueError):
    """An answer.txt is malformed; the message names the file, line number and text."""


def as_scores(scores) -> pd.Series:
    """movie id (str) -> P from a mapping, a Series or a ``movie, p`` table."""
    if isinstance(scores, pd.DataFrame):
        scores = scores.set_index("movie")["p"]
    s = pd.Series(scores, dtype=float)
    s.index = s.index.astype(str)
    return s


def write_answer(scores, path: str | os.PathLike) -> Path:
    """Write the official ``answer.txt``: one ``<movie id> <score>`` line per movie, sorted.

    Scores are written with 10 significant digits (``O1/0001/1 0.9751``).
    """
    s = as_scores(scores).sort_index()
    bad = s[~np.isfinite(s.to_numpy()) | (s < 0) | (s > 1)]
    if len(bad):
        raise ValueError(f"scores must be in [0, 1]; movie {bad.index[0]!r} has {bad.iloc[0]!r}")
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
        Columns ``movie`` and ``quadruplet``.
    require_all : bool
        Every movie of the metadata must be scored (the official rule).

    Returns
    -------
    pandas.Series
        movie id -> score.

    Raises
    ------
    AnswerFormatError
        Naming the file, the line number and its text: a line that is not
        ``<movie> <score>``, an unknown movie, a score that is not a number or
        lies outside [0, 1], a duplicate movie, an incomplete quadruplet.
    """
    path = Path(path)
    known = dict(zip(metadata["movie"].astype(str), metadata["quadruplet"].astype(str)))
    seen: dict[str, tuple[int, float]] = {}
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
            raise AnswerFormatError(f"{where}: expected '<block>/<index>/<run> <score>'")
        movie, raw = parts
        if movie not in known:
            raise AnswerFormatError(f"{where}: unknown movie {movie!r}")
        try:
            v = float(raw)
        except ValueError:
            raise AnswerFormatError(f"{where}: score {raw!r} is not a number") from None
        if not (0.0 <= v <= 1.0):  # also rejects NaN
            raise AnswerFormatError(f"{where}: score {raw} is outside [0, 1]")
        if movie in seen:
            raise AnswerFormatError(f"{where}: duplicate movie {movie!r}, already on line {seen[movie][0]}")
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


def validate_answer(path: str | os.PathLike, root: str | os.PathLike, split: str = "test") -> dict[str, object]:
    """Check a submission ``answer.txt`` against an IntPhys tree (no labels needed).

    Every movie of ``root/<split>`` must be scored once, with a score in [0, 1],
    every quadruplet complete, and no unknown id (:func:`read_answer`). Movie ids
    are the short ``<block>/<index>/<run>`` of the official format, also for trees
    with descriptive quadruplet folders.

    Parameters
    ----------
    path : path-like
        The answer.txt.
    root : path-like
        Dataset root holding ``<split>/``.
    split : {"dev", "test"}

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
    from psybench.intphys.ingest import list_movies  # the tree listing; answer.py stays importable alone

    movies = list_movies(root, split)
    meta = pd.DataFrame({"movie": [m.movie_id for m in movies], "quadruplet": [m.quadruplet for m in movies]})
    scores = read_answer(path, meta, require_all=True)
    return {"movies": len(scores), "quadruplets": int(meta["quadruplet"].nunique()),
            "min": float(scores.min()), "max": float(scores.max())}
