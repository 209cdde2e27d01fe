"""The configured leaderboards: computed once, written as tables and one page-data file.

Each leaderboard is a scope of the long score table (:mod:`psybench.aggregate.table`):
all tracks or one, inter-technique (models) or intra-technique (the parameter sets of
one model, Cabezas & Trujillo 2011, A non-linear quantitative evaluation approach for
disparity estimation, VISAPP, sec. 3.3).  For each, :func:`compute_leaderboards`
gives

* the table of :func:`psybench.aggregate.table.leaderboard`: front (1 = Pareto-optimal
  set, Cabezas & Trujillo 2011, sec. 3.1 eq. 9-11; iterated removal, sec. 3.3),
  Middlebury-style average rank (the baseline they argue against, sec. 1), entries
  dominating each entry, every criterion's value; plus ``tied_rank:<criterion>``
  columns where per-item samples exist (Neilson & Yang 2008, as summarised by
  Cabezas & Trujillo 2011, sec. 1; :func:`psybench.aggregate.ranks.ranks_with_ties`);
* the pairs of criteria its 2-D projections show, the scores behind every cell
  (interval and source of each number, each entry's profile) and the ties tables.

:func:`write_leaderboards` writes ``leaderboard_<name>.csv`` (+ ``.parquet``) per
leaderboard and one JSON page-data file; :func:`read_leaderboards` reads them back
for the report (:mod:`psybench.report.site`), which computes nothing.

Missing scores stay missing (NaN in tables, ``null`` in the JSON); the default
``missing="ignore"`` compares each pair of entries on the criteria both have.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.aggregate.labels import in_model
from psybench.aggregate.overall import per_track_leaderboard, track_criteria
from psybench.aggregate.ranks import ranks_with_ties
from psybench.aggregate.scope import LEADERBOARD_KEYS, check_spec
from psybench.aggregate.table import SAMPLE_COLUMNS, concat_scores, criterion_name, entry_labels, leaderboard
from psybench.io.atomic import atomic_output
from psybench.io.tables import read_table, write_table

__all__ = [
    "LEADERBOARD_KEYS",
    "CELL_COLUMNS",
    "Leaderboard",
    "default_leaderboards",
    "compute_leaderboards",
    "write_leaderboards",
    "read_leaderboards",
]

#: Columns of :attr:`Leaderboard.cells`: the scores of a leaderboard's scope, one row per
#: (entry, criterion), in the long table's order.
CELL_COLUMNS = ["entry", "criterion", "track", "experiment", "metric", "value", "direction", "ci_low", "ci_high",
                "source"]
_FORMAT = "psybench-leaderboards/1"


@dataclass
class Leaderboard:
    """One computed leaderboard: everything its report page shows.

    Attributes
    ----------
    spec : dict
        The checked spec, every key of :data:`LEADERBOARD_KEYS` present.
    table : pandas.DataFrame
        :func:`psybench.aggregate.table.leaderboard` output plus ``tied_rank:*``
        columns; ``attrs`` holds ``criteria``, ``directions``, ``epsilon``, ``missing``.
    criteria, directions : list of str
        Criteria in column order and their "min"/"max".
    projections : list of (str, str)
        Pairs of criteria drawn as 2-D projections of the fronts.
    cells : pandas.DataFrame
        Columns :data:`CELL_COLUMNS`.
    ties : dict {criterion: pandas.DataFrame}
        :func:`~psybench.aggregate.ranks.ranks_with_ties` tables of the criteria
        with per-item samples for at least two entries.
    """

    spec: dict[str, Any]
    table: pd.DataFrame
    criteria: list[str]
    directions: list[str]
    projections: list[tuple[str, str]]
    cells: pd.DataFrame
    ties: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def table_name(self) -> str:
        """File name of the leaderboard table, ``leaderboard_<name>.csv``."""
        return _table_name(self.name)


def default_leaderboards(long_df: pd.DataFrame) -> list[dict[str, Any]]:
    """``overall`` (all tracks, all criteria) and one leaderboard per track present, in name order."""
    tracks = sorted(set(long_df["track"].astype(str)))
    return [{"name": "overall", "track": None}] + [{"name": t, "track": t} for t in tracks]


def _prepare_samples(samples: pd.DataFrame | None) -> pd.DataFrame | None:
    if samples is None:
        return None
    for c in ("model", "track", "metric", "value"):
        if c not in samples.columns:
            raise ValueError(f"samples table: missing column {c!r} (columns: {SAMPLE_COLUMNS})")
    s = samples.copy()
    for c in ("params_hash", "experiment"):
        if c not in s.columns:
            s[c] = ""
        s[c] = s[c].astype(object).where(s[c].notna(), "").map(lambda v: str(v).strip())
    for c in ("model", "track", "metric"):
        s[c] = s[c].astype(str).str.strip()
    s["value"] = pd.to_numeric(s["value"], errors="raise").astype(float)
    s["criterion"] = [criterion_name(*t) for t in zip(s["track"], s["experiment"], s["metric"])]
    return s


def _default_pairs(matrix: pd.DataFrame, max_projections: int) -> list[tuple[str, str]]:
    """Pairs of criteria that most entries have both of (>= 2 entries), in criterion order within a count.

    In a cross-track leaderboard most pairs mix tracks that no entry shares; those
    panels would be empty, so they come last or not at all, and the tracks take turns
    (the best pair of each track, then the second, ...) so that every track's entries
    are drawn.
    """
    crit = list(matrix.columns)
    ok = np.isfinite(matrix.to_numpy(float))
    both = ok.T.astype(int) @ ok.astype(int)  # (m, m): entries having both criteria
    pairs = [(both[i, j], i, j) for i in range(len(crit)) for j in range(i + 1, len(crit)) if both[i, j] >= 2]
    pairs.sort(key=lambda t: (-t[0], t[1], t[2]))
    # several tracks (the cross-track view): each track's best pairs in turn, so every track's entries are drawn
    track = [c.split("/", 1)[0] for c in crit]
    per_track: dict[str, list] = {}
    for p in pairs:
        per_track.setdefault(track[p[1]], []).append(p)
    if len(per_track) > 1:
        queues = [per_track[t] for t in sorted(per_track)]
        pairs = [q[k] for k in range(max(map(len, queues))) for q in queues if k < len(q)]
    return [(crit[i], crit[j]) for _, i, j in pairs[:max_projections]]


def _sample_labels(long_df: pd.DataFrame, samples: pd.DataFrame, model: str | None) -> pd.Series:
    """Entry label of each sample row, with the long table's labelling rule (model@params_hash if needed)."""
    labels = entry_labels(long_df, intra=model is not None)
    mapping = dict(zip(zip(long_df["model"], long_df["params_hash"]), labels))
    return pd.Series([mapping.get(k) for k in zip(samples["model"], samples["params_hash"])], index=samples.index)


def _scoped(long_df: pd.DataFrame, spec: Mapping[str, Any]) -> pd.DataFrame:
    s = long_df
    if spec["track"] is not None:
        s = s[s["track"] == spec["track"]]
    if spec["model"] is not None:
        s = s[in_model(s, spec["model"])]
    return s


def _ties(scoped, spec, criteria, directions, samples, *, n_boot, alpha, seed) -> dict[str, pd.DataFrame]:
    ties: dict[str, pd.DataFrame] = {}
    s = samples[samples["criterion"].isin(criteria)]
    if spec["track"] is not None:
        s = s[s["track"] == spec["track"]]
    if spec["model"] is not None:
        models = set(scoped["model"])
        s = s[s["model"].isin(models)]
    if not len(s):
        return ties
    s = s.assign(entry=_sample_labels(scoped, s, spec["model"]).to_numpy())
    unknown = s.loc[s["entry"].isna(), "model"]
    if len(unknown):
        raise ValueError(
            f"leaderboard {spec['name']!r}: samples for model {unknown.iloc[0]!r} (params_hash "
            f"{s.loc[s['entry'].isna(), 'params_hash'].iloc[0]!r}) which has no scores in the long table"
        )
    s = s[np.isfinite(s["value"].to_numpy(float))]  # missing items are left out per model
    for j, c in enumerate(criteria):
        sc = s[s["criterion"] == c]
        groups = {e: g.sort_values("item", kind="stable")["value"].to_numpy(float) if "item" in g
                  else g["value"].to_numpy(float) for e, g in sc.groupby("entry", sort=True)}
        if len(groups) >= 2:
            ties[c] = ranks_with_ties(groups, direction=directions[j], n_boot=n_boot, alpha=alpha, seed=seed)
    return ties


def _build_one(long_df, spec, *, samples, n_boot, alpha, seed, max_projections, by_track) -> Leaderboard:
    if spec["track"] is None and long_df["track"].nunique() > 1:  # overall: one front per track
        table = per_track_leaderboard(long_df, criteria=spec["criteria"], model=spec["model"],
                                      epsilon=spec["epsilon"], missing=spec["missing"], by_track=by_track)
    else:
        table = leaderboard(long_df, track=spec["track"], criteria=spec["criteria"], model=spec["model"],
                            epsilon=spec["epsilon"], missing=spec["missing"])
    criteria = list(table.attrs["criteria"])
    directions = list(table.attrs["directions"])
    scoped = _scoped(long_df, spec)
    ties = {} if samples is None else _ties(scoped, spec, criteria, directions, samples, n_boot=n_boot,
                                            alpha=alpha, seed=seed)
    for c, t in ties.items():
        table[f"tied_rank:{c}"] = table["entry"].map(dict(zip(t["model"], t["rank"]))).astype("Int64")
    pairs = spec["projections"]
    if pairs is None:
        pairs = _default_pairs(table.set_index("entry")[criteria], max_projections)
    else:
        for p in pairs:
            if len(p) != 2 or any(c not in criteria for c in p):
                raise ValueError(f"projection {p!r} must name two of {criteria}")
        pairs = [tuple(p) for p in pairs]
    crit_of = np.array([criterion_name(*t) for t in zip(scoped["track"], scoped["experiment"], scoped["metric"])])
    cells = scoped.assign(entry=entry_labels(scoped, intra=spec["model"] is not None).to_numpy(),
                          criterion=crit_of)[np.isin(crit_of, criteria)]
    return Leaderboard(spec=spec, table=table, criteria=criteria, directions=directions, projections=pairs,
                       cells=cells[CELL_COLUMNS].reset_index(drop=True), ties=ties)


def compute_leaderboards(
    long_df: pd.DataFrame,
    *,
    leaderboards: Sequence[Mapping[str, Any]] | None = None,
    samples: pd.DataFrame | None = None,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
    max_projections: int = 6,
    by_track: Mapping[str, Sequence[str]] | None = None,
) -> list[Leaderboard]:
    """Compute every configured leaderboard of a long score table.

    Parameters
    ----------
    long_df : pandas.DataFrame
        The long score table (:data:`psybench.aggregate.table.SCORE_COLUMNS`).
    leaderboards : sequence of mappings, optional
        One per page, keys :data:`LEADERBOARD_KEYS`: ``name`` (required; names
        files), ``title``, ``track`` (None = all tracks), ``criteria`` (list of
        ``track/experiment/metric``; None = all in scope), ``model``
        (intra-technique evaluation of one model's parameter sets; None =
        inter-technique), ``epsilon`` (None/{}: none; a number; or {criterion:
        eps}), ``missing`` ("ignore" default, or "raise"), ``projections`` (list
        of [criterion, criterion] pairs; default the first ``max_projections``
        pairs of criteria that most entries have).  Default
        :func:`default_leaderboards` (overall + one per track).
    samples : pandas.DataFrame, optional
        Per-item samples for ranks with ties: columns
        :data:`psybench.aggregate.table.SAMPLE_COLUMNS` (``params_hash``,
        ``experiment``, ``item`` optional).  Criteria with samples for at least
        two entries get a ``tied_rank:<criterion>`` column (NaN items are dropped
        per model).  Without samples, there are no tied ranks.
    n_boot, alpha, seed
        Bootstrap settings of :func:`~psybench.aggregate.ranks.ranks_with_ties`.
    max_projections : int
        Number of 2-D projections when a spec gives no ``projections``.
    by_track : mapping {track: criteria}, optional
        Criteria of each track in a cross-track board, which ranks each track's
        entries on its own criteria (:mod:`psybench.aggregate.overall`); default
        those of the per-track specs (:func:`~psybench.aggregate.overall.track_criteria`).

    Returns
    -------
    list of Leaderboard

    Raises
    ------
    ValueError
        Bad leaderboard spec (names the index and key), duplicate names, or an
        unknown track/criterion (from :func:`~psybench.aggregate.table.error_matrix`,
        prefixed with the leaderboard name).
    """
    long_df = concat_scores({"long table": long_df})
    specs = [check_spec(s, i) for i, s in enumerate(leaderboards if leaderboards is not None
                                                      else default_leaderboards(long_df))]
    names = [s["name"] for s in specs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"leaderboard name(s) {dup} used more than once")
    if not specs:
        raise ValueError("no leaderboards to build")
    samples = _prepare_samples(samples)
    by_track = track_criteria(specs) if by_track is None else dict(by_track)
    boards = []
    for spec in specs:
        try:
            boards.append(_build_one(long_df, spec, samples=samples, n_boot=n_boot, alpha=alpha, seed=seed,
                                     max_projections=max_projections, by_track=by_track))
        except ValueError as exc:
            raise ValueError(f"leaderboard {spec['name']!r}: {exc}") from exc
    return boards


# ---------------------------------------------------------------------------- files


def _plain(v: Any) -> Any:
    """A JSON value: NaN/NA -> null, NumPy scalars -> Python numbers (floats keep every bit)."""
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    return v


def _split(df: pd.DataFrame) -> dict[str, list]:
    return {"columns": list(df.columns), "data": [[_plain(v) for v in row] for row in df.itertuples(index=False)]}


def _frame(split: Mapping[str, list], floats: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame(split["data"], columns=split["columns"])
    for c in floats:
        if c in df.columns:
            df[c] = df[c].astype(float)
    return df


def _table_name(name: str) -> str:
    return f"leaderboard_{name}.csv"


def write_leaderboards(boards: Sequence[Leaderboard], table_dir: str | os.PathLike,
                       pages: str | os.PathLike) -> list[Path]:
    """Write ``<table_dir>/leaderboard_<name>.csv`` (+ ``.parquet``) per board and the JSON ``pages`` file.

    The JSON holds, per board, its spec, criteria, directions, projections, cells
    and ties, and the name of its table relative to the JSON's folder (``table_dir``
    must be that folder).  Returns the CSV paths.
    """
    table_dir, pages = Path(table_dir), Path(pages)
    if table_dir.resolve() != pages.parent.resolve():
        raise ValueError(f"the leaderboard tables ({table_dir}) must sit beside the page data ({pages})")
    written, entries = [], []
    for b in boards:
        out_table = b.table.copy()
        out_table.attrs = {}
        written.append(write_table(out_table, table_dir / _table_name(b.name)))
        entries.append({
            "spec": {k: _plain(v) if not isinstance(v, (list, dict)) else v for k, v in b.spec.items()},
            "table": _table_name(b.name),
            "criteria": b.criteria,
            "directions": b.directions,
            "projections": [list(p) for p in b.projections],
            "cells": _split(b.cells),
            "ties": {c: _split(t) for c, t in b.ties.items()},
        })
    with atomic_output(pages) as tmp:
        tmp.write_text(json.dumps({"format": _FORMAT, "leaderboards": entries}, indent=1, allow_nan=False) + "\n",
                       encoding="utf-8")
    return written


def read_leaderboards(pages: str | os.PathLike) -> list[Leaderboard]:
    """Read what :func:`write_leaderboards` wrote: the JSON page data and each board's table."""
    pages = Path(pages)
    data = json.loads(pages.read_text(encoding="utf-8"))
    if data.get("format") != _FORMAT:
        raise ValueError(f"{pages}: not a leaderboards file of format {_FORMAT!r}")
    boards = []
    for e in data["leaderboards"]:
        table = read_table(pages.parent / e["table"])
        table.attrs.update(criteria=list(e["criteria"]), directions=list(e["directions"]),
                           epsilon=e["spec"]["epsilon"], missing=e["spec"]["missing"])
        boards.append(Leaderboard(
            spec=dict(e["spec"]), table=table, criteria=list(e["criteria"]), directions=list(e["directions"]),
            projections=[tuple(p) for p in e["projections"]],
            cells=_frame(e["cells"], ("value", "ci_low", "ci_high")),
            ties={c: _frame(t, ("mean", "diff", "ci_low", "ci_high")) for c, t in e["ties"].items()},
        ))
    return boards
