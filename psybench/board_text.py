"""Leaderboards as terminal text: values and verdicts within the terminal's width.

A leaderboard table (:func:`psybench.aggregate.leaderboard.compute_leaderboards`) has
one column per criterion: the default run's cross-track board has 76, and printed
whole its lines ran to over 200 characters.  :func:`render_leaderboard` prints one
block per track (fronts are per track, Cabezas & Trujillo 2011, sec. 3): the front,
the entry, its average rank, its verdicts (the 0/1 metrics of
:data:`psybench.aggregate.labels.VERDICT_METRICS`, e.g. the motion Table 1's
``passed``: experiments passed of those scored), then as many criteria's values as
the width holds, in the board's criterion order, and a line naming how many were
left out.  With ``values=True`` the block is followed by every criterion's value, a
criterion per row and an entry per column, the columns folded into blocks of the
width (pandas' ``line_width``), each block repeating the criteria.

Examples
--------
>>> import pandas as pd
>>> board = pd.DataFrame({"entry": ["hs", "lk"], "motion/bars/error": [1.0, 2.0], "front": [1, 2],
...                       "pareto_optimal": [True, False], "average_rank": [1.0, 2.0], "n_ranked": [1, 1],
...                       "dominated_by": ["", "hs"]})
>>> board.attrs["criteria"] = ["motion/bars/error"]
>>> text = render_leaderboard(board, width=60)
>>> text.splitlines()[:2]
['motion', ' front entry pareto avg_rank  n bars/error dominated_by']
>>> max(len(line) for line in text.splitlines()) <= 60
True
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence

import pandas as pd

__all__ = ["DEFAULT_WIDTH", "terminal_width", "entry_verdicts", "render_leaderboard", "short_names"]

#: Width used when the output is not a terminal (a pipe, a file, a test).
DEFAULT_WIDTH = 80
_MIN_WIDTH = 40
_ENTRY_MAX = 28  # longer entry labels are cut (with "~") when the fixed columns would not fit


def terminal_width(fallback: int = DEFAULT_WIDTH) -> int:
    """Columns of the terminal on stdout (``COLUMNS`` wins), else ``fallback``; at least 40."""
    return max(_MIN_WIDTH, shutil.get_terminal_size((fallback, 24)).columns)


def entry_verdicts(long_df: pd.DataFrame, *, model: str | None = None) -> dict[str, str]:
    """``{entry: "k/n"}``: an entry's verdict rows passed (value 1) of those it has.

    Verdict rows are the long table's rows whose metric is in
    :data:`psybench.aggregate.labels.VERDICT_METRICS` (motion: Table 1's ``passed``
    per experiment).  A verdict that could not be reached (NaN) counts as not passed
    and adds ``"?"``.  Entries are labelled as the leaderboard labels them
    (:func:`psybench.aggregate.labels.entry_labels`; ``model``: the intra-technique
    board of that model).
    """
    from psybench.aggregate.labels import VERDICT_METRICS, entry_labels, in_model

    scoped = long_df[in_model(long_df, model)] if model else long_df
    if scoped.empty:
        return {}
    labels = entry_labels(scoped, intra=model is not None)
    verdict = scoped["metric"].isin(VERDICT_METRICS)
    out = {}
    for entry, values in scoped.loc[verdict, "value"].groupby(labels[verdict]):
        values = pd.to_numeric(values, errors="coerce")
        unknown = "?" if values.isna().any() else ""
        out[str(entry)] = f"{int((values > 0.5).sum())}/{len(values)}{unknown}"
    return out


def _fmt(value: object) -> str:
    return "-" if pd.isna(value) else f"{float(value):.3g}"


def _fixed_view(part: pd.DataFrame, verdicts: Mapping[str, str]) -> pd.DataFrame:
    view = pd.DataFrame({
        "front": part["front"].to_numpy(),
        "entry": part["entry"].astype(str).to_numpy(),
        "pareto": part["pareto_optimal"].map({True: "yes", False: ""}).fillna("").to_numpy(),
        "avg_rank": part["average_rank"].map(lambda v: "-" if pd.isna(v) else f"{v:.2f}").to_numpy(),
        "n": part["n_ranked"].to_numpy(),
    })
    if verdicts and any(e in verdicts for e in view["entry"]):
        view["passed"] = [verdicts.get(e, "-") for e in view["entry"]]
    return view


def _text(view: pd.DataFrame) -> str:
    return view.to_string(index=False, na_rep="-")


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _short_dominators(value: object) -> str:
    names = [n.strip() for n in str(value or "").split(";") if n.strip()]
    return "" if not names else names[0] + (f" +{len(names) - 1}" if len(names) > 1 else "")


def _fit(view: pd.DataFrame, extra: Sequence[tuple[str, pd.Series]], width: int) -> tuple[str, int]:
    """``view`` plus as many ``extra`` columns, in order, as keep every line within ``width``."""
    if _width(_text(view)) > width:  # the fixed columns alone are too wide: cut the entry labels
        cut = max(8, _ENTRY_MAX - (_width(_text(view)) - width))
        view = view.assign(entry=[e if len(e) <= cut else e[: cut - 1] + "~" for e in view["entry"]])
    shown = 0
    for name, column in extra:
        trial = view.assign(**{name: column.to_numpy()})
        if _width(_text(trial)) > width:
            break
        view, shown = trial, shown + 1
    return _text(view), shown


def _track_of(criterion: str) -> str:
    return criterion.split("/", 1)[0]


def short_names(criteria: Sequence[str]) -> tuple[list[str], str]:
    """Column names without the track and the parts every criterion shares, and those shared parts.

    >>> short_names(["motion/barberpole/error", "motion/diamonds/error"])
    (['barberpole', 'diamonds'], 'error')
    >>> short_names(["intphys/all/all/L_R", "intphys/all/all/L_A"])
    (['L_R', 'L_A'], 'all/all')
    """
    parts = [c.split("/")[1:] or [c] for c in criteria]
    if len(parts) < 2:
        return ["/".join(p) for p in parts], ""
    head = tail = 0
    shortest = min(len(p) for p in parts)
    while head < shortest - 1 and len({p[head] for p in parts}) == 1:
        head += 1
    while tail < shortest - 1 - head and len({p[-1 - tail] for p in parts}) == 1:
        tail += 1
    shared = parts[0][:head] + (parts[0][len(parts[0]) - tail:] if tail else [])
    return ["/".join(p[head:len(p) - tail]) for p in parts], "/".join(shared)


def render_leaderboard(table: pd.DataFrame, *, width: int = DEFAULT_WIDTH, values: bool = False,
                       verdicts: Mapping[str, str] | None = None) -> str:
    """The leaderboard ``table`` as text whose lines fit in ``width`` columns.

    Parameters
    ----------
    table : pandas.DataFrame
        A leaderboard: ``entry``, ``front``, ``pareto_optimal``, ``average_rank``,
        ``n_ranked``, ``dominated_by``, optional ``track``, and one column per
        criterion of ``table.attrs["criteria"]``.
    width : int
        Columns available (>= 40); every line fits in it.
    values : bool
        Every criterion's value (full name and unit), folded into blocks of the
        width; default: as many as fit after the fixed columns.
    verdicts : mapping, optional
        ``{entry: "k/n"}`` (:func:`entry_verdicts`), a ``passed`` column.

    Returns
    -------
    str
        One block per track, each headed by the track's name.
    """
    from psybench.aggregate.labels import criterion_unit

    width = max(_MIN_WIDTH, int(width))
    criteria = [c for c in table.attrs.get("criteria", []) if c in table.columns]
    if "track" in table.columns and table["track"].notna().any():
        tracks = list(dict.fromkeys(table["track"].dropna().astype(str)))
    else:
        tracks = list(dict.fromkeys(_track_of(c) for c in criteria)) or [""]
    blocks = []
    for track in tracks:
        part = table[table["track"].astype(str) == track] if "track" in table.columns else table
        own = [c for c in criteria if _track_of(c) == track or len(tracks) == 1]
        view = _fixed_view(part, verdicts or {})
        names, shared = short_names(own)
        extra = [(name, part[c].map(_fmt)) for name, c in zip(names, own)]
        extra.append(("dominated_by", part["dominated_by"].map(_short_dominators)))
        body, shown = _fit(view, extra[-1:] if values else extra, width)
        left = len(own) - min(shown, len(own))
        note = f"  ({left} more criteria of {len(own)}: --values shows all)" if left and not values else ""
        if values and own:
            units = [criterion_unit(c) for c in own]
            matrix = pd.DataFrame([part[c].map(_fmt).to_numpy() for c in own], columns=list(view["entry"]),
                                  index=[f"{n} [{u}]" if u else n for n, u in zip(names, units)])
            note = "values, a criterion per row:\n" + matrix.to_string(line_width=width)
        if shared:
            track = f"{track} (values of {shared})"
        blocks.append("\n".join(line for line in (track, body, note) if line))
    return "\n\n".join(blocks)
