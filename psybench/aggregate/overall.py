"""The cross-track ("overall") leaderboard: one Pareto front per track, side by side.

A motion flow model, an attention saliency map and an IntPhys plausibility model
share no criterion: no entry of one track has a score in another's.  Pareto
dominance over the union of their criteria (Cabezas & Trujillo 2011, A non-linear
quantitative evaluation approach for disparity estimation, VISAPP, sec. 3.1: ``a``
dominates ``b`` when it is at least as good on every criterion) compares nothing
across tracks, so every entry with one good score lands on the "first front"
(the IntPhys ``random`` control among them).  The overall view therefore ranks each
track's entries on that track's criteria only (the criteria of its own leaderboard
when one is configured, :func:`psybench.aggregate.labels.headline_criteria`
otherwise), and stacks the tables with a ``track`` column: fronts and average ranks
are comparable within a track, never across.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.aggregate.labels import in_model
from psybench.aggregate.table import concat_scores, leaderboard

__all__ = ["track_criteria", "per_track_leaderboard"]


def track_criteria(specs: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``{track: criteria}`` of the per-track, inter-technique specs that list their criteria."""
    out: dict[str, list[str]] = {}
    for s in specs:
        if s.get("track") and s.get("model") is None and s.get("criteria"):
            out.setdefault(str(s["track"]), list(s["criteria"]))
    return out


def _epsilon_of(epsilon: Any, criteria: Sequence[str]) -> Any:
    if isinstance(epsilon, Mapping):
        part = {c: v for c, v in epsilon.items() if c in criteria}
        return part or None
    return epsilon


def per_track_leaderboard(
    long_df: pd.DataFrame,
    *,
    criteria: Sequence[str] | None = None,
    model: str | None = None,
    epsilon: Any = None,
    missing: str = "ignore",
    by_track: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Per-track Pareto fronts and average ranks, stacked into one table.

    Parameters
    ----------
    long_df : pandas.DataFrame
        Long score table (:data:`psybench.aggregate.table.SCORE_COLUMNS`).
    criteria : sequence of str, optional
        Criteria to use (each belongs to its track); default per track
        ``by_track[track]``, else the track's headline criteria.
    model : str, optional
        Intra-technique: keep this model's (or algorithm's) rows; tracks without it
        are left out.
    epsilon, missing
        As in :func:`psybench.aggregate.table.leaderboard` (a mapping is split by track).
    by_track : mapping {track: criteria}, optional
        The criteria of each track's own leaderboard (:func:`track_criteria`).

    Returns
    -------
    pandas.DataFrame, shape (n_entries, 2 + n_criteria + 6)
        Columns ``entry``, ``track``, every track's criteria (NaN where the entry's
        track lacks it), then the :func:`~psybench.aggregate.pareto.pareto_table`
        columns; ``front``, ``average_rank`` and ``dominated_by`` are within the
        entry's track.  Rows by track name, then front and rank.  An entry label
        found in several tracks gets `` (track)`` appended.  ``attrs`` as in
        :func:`~psybench.aggregate.table.leaderboard`, plus ``per_track: True``.
    """
    long_df = concat_scores({"long table": long_df})
    wanted = None if criteria is None else list(criteria)
    parts, all_criteria, directions = [], [], []
    for track in sorted(set(long_df["track"])):
        rows = long_df[long_df["track"] == track]
        if model is not None and not in_model(rows, model).any():
            continue
        crit = [c for c in wanted if c.split("/", 1)[0] == track] if wanted is not None else (by_track or {}).get(track)
        if wanted is not None and not crit:
            continue
        table = leaderboard(rows, track=track, criteria=crit, model=model, epsilon=_epsilon_of(epsilon, crit or []),
                            missing=missing)
        table.insert(1, "track", track)
        parts.append(table)
        all_criteria += list(table.attrs["criteria"])
        directions += list(table.attrs["directions"])
    if not parts:
        raise ValueError(f"no track has scores for model {model!r}" if model else "no scores to rank")
    out = pd.concat(parts, ignore_index=True)
    dup = out["entry"].duplicated(keep=False).to_numpy()
    out.loc[dup, "entry"] = [f"{e} ({t})" for e, t in zip(out.loc[dup, "entry"], out.loc[dup, "track"])]
    rest = [c for c in out.columns if c not in ["entry", "track", *all_criteria]]
    out = out[["entry", "track", *all_criteria, *rest]]
    out["front"] = out["front"].astype(np.int64)
    out.attrs.update(criteria=all_criteria, directions=directions, missing=missing, per_track=True,
                     epsilon=epsilon if not isinstance(epsilon, np.ndarray) else epsilon.tolist())
    return out
