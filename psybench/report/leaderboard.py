"""The people-facing leaderboard report: a static HTML site of Pareto fronts and ranks.

:func:`build_report` turns the long score table (:mod:`psybench.aggregate.table`)
into a self-contained folder of plain HTML pages (inline CSS, no JavaScript, nothing
downloaded) and PNG figures (matplotlib, Agg backend, no dates in the metadata), one
page per leaderboard plus ``index.html``:

* the table: entry, front (1 = Pareto-optimal set, papers/001 Eq. 9-11, iterated
  removal Sec. 3.3), Pareto-optimal flag, Middlebury-style average rank (the
  baseline papers/001 argues against) over ``n`` criteria, ranks with statistical
  ties per criterion where per-item samples are given (Neilson & Yang 2008 as
  summarised in papers/001 Sec. 1, :func:`psybench.aggregate.ranks.ranks_with_ties`),
  the entries dominating it, and every criterion's value with its interval;
* the fronts drawn as 2-D projections (pairs of criteria, points coloured by front)
  and as parallel coordinates (each axis scaled 0 = worst .. 1 = best entry);
* each entry's profile across experiments (one bar per experiment, one panel per
  track x metric, intervals as error bars);
* a link on every number: criterion values link to the figure or table they come
  from (the ``source`` column, resolved against ``results_root`` and made relative
  to the report); fronts and average ranks to the projection and parallel-coordinate
  figures; tied ranks to the ties figure.

Missing scores stay missing: shown as "–" in the tables, left out of the
projection panel where either coordinate is missing, drawn as a gap in parallel
coordinates and profiles; the leaderboards' own treatment (default
``missing="ignore"``: each pair of entries compared on the criteria both have,
average rank over available criteria) is stated on every page.

Everything is deterministic: same table in, byte-identical files out.
"""

from __future__ import annotations

import html
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from psybench.aggregate.ranks import ranks_with_ties  # noqa: E402
from psybench.aggregate.table import (  # noqa: E402
    _entry_labels,
    concat_scores,
    criterion_name,
    error_matrix,
    leaderboard,
)
from psybench.io.tables import write_table  # noqa: E402

__all__ = ["LEADERBOARD_KEYS", "SAMPLE_COLUMNS", "default_leaderboards", "build_report"]

#: Keys of one leaderboard spec (``name`` required).
LEADERBOARD_KEYS = ("name", "title", "track", "criteria", "model", "epsilon", "missing", "projections")
#: Columns of the optional per-item samples table (``params_hash`` and ``item`` optional).
SAMPLE_COLUMNS = ("model", "params_hash", "track", "experiment", "metric", "item", "value")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_DPI = 80
_MARKER = ".psybench-report"
_PROFILE_COLUMNS = ["track", "experiment", "metric", "value", "direction", "ci_low", "ci_high"]

_CSS = """
body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}h3{font-size:1em}
table.lb{border-collapse:collapse;font-size:0.85em}
table.lb th,table.lb td{border:1px solid #bbb;padding:3px 6px;text-align:right;white-space:nowrap}
table.lb th{background:#eee;position:sticky;top:0}
table.lb td.entry,table.lb th.entry{text-align:left;font-weight:bold}
table.lb td.dom{text-align:left;font-size:0.85em;color:#555;white-space:normal;min-width:8em}
tr.front1 td{background:#eef7ee}
.scroll{overflow-x:auto;max-width:100%}
.ci{color:#666;font-size:0.85em}
.missing{color:#999}
.note{color:#444;font-size:0.9em;max-width:60em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:0.85em;color:#444;max-width:60em}
a{color:#1a55a0}
"""


# ---------------------------------------------------------------------------- helpers


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_.") or "x"


def _unique_slugs(labels: Sequence[str]) -> dict[str, str]:
    """File-name-safe, distinct slug per label (collisions get a numeric suffix, in sorted order)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in sorted(labels):
        base = _slug(label)
        s, k = base, 2
        while s.lower() in used:
            s, k = f"{base}-{k}", k + 1
        used.add(s.lower())
        out[label] = s
    return out


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _href(path: str) -> str:
    return quote(path, safe="/#.-_~")


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return ""
    return f"{v:.4g}"


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI, metadata={"Software": None})
    plt.close(fig)


def _front_colors(n_fronts: int) -> list:
    cmap = plt.get_cmap("tab10")
    return [cmap(k % 10) for k in range(max(n_fronts, 1))]


def _short(c: str, width: int = 28) -> str:
    return c if len(c) <= width else "…" + c[-(width - 1):]


def default_leaderboards(long_df: pd.DataFrame) -> list[dict[str, Any]]:
    """``overall`` (all tracks, all criteria) and one leaderboard per track present, in name order."""
    tracks = sorted(set(long_df["track"].astype(str)))
    return [{"name": "overall", "track": None}] + [{"name": t, "track": t} for t in tracks]


def _check_spec(spec: Mapping[str, Any], i: int) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise ValueError(f"leaderboards[{i}] must be a mapping with keys {list(LEADERBOARD_KEYS)}")
    unknown = sorted(set(spec) - set(LEADERBOARD_KEYS))
    if unknown:
        raise ValueError(f"leaderboards[{i}] has unknown key(s) {unknown}; known: {list(LEADERBOARD_KEYS)}")
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name) or name == "index":
        raise ValueError(
            f"leaderboards[{i}]: name {name!r} must be letters, digits, '_' or '-' (it names files), not 'index'"
        )
    out = {"title": None, "track": None, "criteria": None, "model": None, "epsilon": None, "missing": "ignore",
           "projections": None, **dict(spec)}
    if out["epsilon"] == {}:
        out["epsilon"] = None
    return out


def _read_samples(samples: pd.DataFrame | None) -> pd.DataFrame | None:
    if samples is None:
        return None
    for c in ("model", "track", "metric", "value"):
        if c not in samples.columns:
            raise ValueError(f"samples table: missing column {c!r} (columns: {list(SAMPLE_COLUMNS)})")
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


# ---------------------------------------------------------------------------- figures


def _projections_figure(matrix, directions, front, labels, pairs, path: Path) -> None:
    n_fronts = int(front.max()) if len(front) else 1
    colors = _front_colors(n_fronts)
    k = len(pairs)
    ncol = min(3, k)
    nrow = int(np.ceil(k / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.8 * nrow), squeeze=False)
    for ax in axes.ravel()[k:]:
        ax.set_axis_off()
    for ax, (a, b) in zip(axes.ravel(), pairs):
        x, y = matrix[a].to_numpy(float), matrix[b].to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(y)
        for f in range(1, n_fronts + 1):
            sel = ok & (front == f)
            if sel.any():
                ax.scatter(x[sel], y[sel], s=46, color=colors[f - 1], edgecolor="black" if f == 1 else "none",
                           linewidth=1.0, label=f"front {f}", zorder=3)
        for i in np.flatnonzero(ok):
            ax.annotate(labels[i], (x[i], y[i]), fontsize=7, xytext=(3, 3), textcoords="offset points")
        da = "lower" if directions[a] == "min" else "higher"
        db = "lower" if directions[b] == "min" else "higher"
        ax.set_xlabel(f"{_short(a, 40)}\n({da} is better)", fontsize=7)
        ax.set_ylabel(f"{_short(b, 40)}\n({db} is better)", fontsize=7)
        ax.tick_params(labelsize=7)
        if (~ok).any():
            ax.set_title(f"{int((~ok).sum())} entr{'y' if (~ok).sum() == 1 else 'ies'} missing here", fontsize=7)
    handles, names = [], []
    for ax in axes.ravel():
        for h, n in zip(*ax.get_legend_handles_labels()):
            if n not in names:
                handles.append(h)
                names.append(n)
    order = np.argsort([int(n.split()[1]) for n in names]) if names else []
    if names:
        fig.legend([handles[i] for i in order], [names[i] for i in order], loc="upper right", fontsize=7)
    fig.tight_layout(rect=(0, 0, 0.92, 1))
    _save(fig, path)


def _parallel_figure(matrix, directions, front, labels, path: Path) -> None:
    crit = list(matrix.columns)
    m = len(crit)
    F = matrix.to_numpy(float)
    with np.errstate(all="ignore"):
        lo = np.nanmin(np.where(np.isnan(F), np.inf, F), axis=0)
        hi = np.nanmax(np.where(np.isnan(F), -np.inf, F), axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        good = (F - lo) / span  # 0 = lowest value
    is_max = np.array([d == "max" for d in directions])
    good = np.where(is_max, good, 1.0 - good)  # 1 = best entry on every axis
    good = np.where(np.isfinite(lo) & (hi == lo), 1.0, good)
    good[np.isnan(F)] = np.nan
    n_fronts = int(front.max()) if len(front) else 1
    colors = _front_colors(n_fronts)
    fig, ax = plt.subplots(figsize=(min(28.0, max(6.0, 0.9 * m + 2.5)), 4.2))
    xs = np.arange(m)
    for i in np.argsort(-front, kind="stable"):  # front 1 drawn last, on top
        ax.plot(xs, good[i], color=colors[front[i] - 1], lw=2.0 if front[i] == 1 else 1.0,
                marker="o", ms=3, alpha=0.95, label=f"front {front[i]}")
        last = np.flatnonzero(np.isfinite(good[i]))
        if last.size:
            ax.annotate(labels[i], (xs[last[-1]], good[i, last[-1]]), fontsize=6, xytext=(4, 0),
                        textcoords="offset points", va="center")
    ax.vlines(xs, -0.05, 1.05, color="0.7", lw=0.6, zorder=0)
    step = max(1, int(np.ceil(m / 80)))  # at most ~80 axis labels; the table names every criterion
    ax.set_xticks(xs[::step])
    ax.set_xticklabels([_short(c) for c in crit[::step]], rotation=40, ha="right", fontsize=6)
    ax.set_xlim(-0.3, m - 0.7 + 0.8)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("scaled score (1 = best entry)", fontsize=8)
    h, n = ax.get_legend_handles_labels()
    seen = {}
    for hh, nn in zip(h, n):
        seen.setdefault(nn, hh)
    keys = sorted(seen, key=lambda s: int(s.split()[1]))
    ax.legend([seen[k] for k in keys], keys, fontsize=7, loc="lower left")
    fig.tight_layout()
    _save(fig, path)


def _profile_figure(rows: pd.DataFrame, label: str, path: Path) -> None:
    """One panel per (track, metric): bars over experiments with intervals."""
    groups = list(rows.groupby(["track", "metric"], sort=True))
    heights = [max(1.2, 0.22 * len(g) + 0.9) for _, g in groups]
    fig, axes = plt.subplots(len(groups), 1, figsize=(6.5, sum(heights) + 0.4), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, ((track, metric), g) in zip(axes[:, 0], groups):
        g = g.sort_values("experiment", kind="stable")
        y = np.arange(len(g))
        v = g["value"].to_numpy(float)
        lo, hi = g["ci_low"].to_numpy(float), g["ci_high"].to_numpy(float)
        ax.barh(y, np.where(np.isfinite(v), v, 0.0), color=np.where(np.isfinite(v), "#4a7fb5", "none"),
                edgecolor="#4a7fb5", height=0.7)
        ci = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(v)
        if ci.any():
            ax.errorbar(v[ci], y[ci], xerr=np.vstack([v[ci] - lo[ci], hi[ci] - v[ci]]).clip(min=0), fmt="none",
                        ecolor="black", elinewidth=0.8, capsize=2)
        for yy in y[~np.isfinite(v)]:
            ax.text(0, yy, " missing", va="center", fontsize=6, color="0.4")
        ax.set_yticks(y)
        ax.set_yticklabels([e if e else "(all)" for e in g["experiment"]], fontsize=6)
        ax.invert_yaxis()
        d = g["direction"].iloc[0]
        ax.set_title(f"{track}: {metric} ({d} is better)", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(label, fontsize=9)
    fig.tight_layout()
    _save(fig, path)


def _ties_figure(ties: Mapping[str, pd.DataFrame], path: Path) -> None:
    k = len(ties)
    fig, axes = plt.subplots(k, 1, figsize=(6.0, sum(max(1.3, 0.3 * len(t) + 0.8) for t in ties.values())),
                             squeeze=False)
    for ax, (crit, t) in zip(axes[:, 0], ties.items()):
        y = np.arange(len(t))
        ax.scatter(t["mean"], y, color="#4a7fb5", zorder=3)
        for yy, (_, r) in zip(y, t.iterrows()):
            ax.annotate(f"rank {r['rank']}", (r["mean"], yy), fontsize=6, xytext=(4, 3), textcoords="offset points")
        ax.set_yticks(y)
        ax.set_yticklabels(t["model"], fontsize=7)
        ax.invert_yaxis()
        ax.set_title(f"{_short(crit, 60)}: mean over items; shared rank = not distinguishable", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    _save(fig, path)


# ---------------------------------------------------------------------------- one leaderboard


def _default_pairs(matrix: pd.DataFrame, max_projections: int) -> list[tuple[str, str]]:
    """Pairs of criteria that most entries have both of (>= 2 entries), in criterion order within a count.

    In a cross-track leaderboard most pairs mix tracks that no entry shares; those
    panels would be empty, so they come last or not at all.
    """
    crit = list(matrix.columns)
    ok = np.isfinite(matrix.to_numpy(float))
    both = ok.T.astype(int) @ ok.astype(int)  # (m, m): entries having both criteria
    pairs = [(both[i, j], i, j) for i in range(len(crit)) for j in range(i + 1, len(crit)) if both[i, j] >= 2]
    pairs.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [(crit[i], crit[j]) for _, i, j in pairs[:max_projections]]


def _sample_labels(long_df: pd.DataFrame, samples: pd.DataFrame, model: str | None) -> pd.Series:
    """Entry label of each sample row, with the long table's labelling rule (model@params_hash if needed)."""
    labels = _entry_labels(long_df, intra=model is not None)
    mapping = dict(zip(zip(long_df["model"], long_df["params_hash"]), labels))
    return pd.Series([mapping.get(k) for k in zip(samples["model"], samples["params_hash"])], index=samples.index)


def _scoped(long_df: pd.DataFrame, spec: Mapping[str, Any]) -> pd.DataFrame:
    s = long_df
    if spec["track"] is not None:
        s = s[s["track"] == spec["track"]]
    if spec["model"] is not None:
        s = s[s["model"] == spec["model"]]
    return s


def _build_one(long_df, spec, *, samples, n_boot, alpha, seed, max_projections):
    table = leaderboard(long_df, track=spec["track"], criteria=spec["criteria"], model=spec["model"],
                        epsilon=spec["epsilon"], missing=spec["missing"])
    criteria = list(table.attrs["criteria"])
    directions = list(table.attrs["directions"])
    kw = dict(criteria=criteria, track=spec["track"], model=spec["model"])
    src, _ = error_matrix(long_df, values="source", **kw)
    ci_lo, _ = error_matrix(long_df, values="ci_low", **kw)
    ci_hi, _ = error_matrix(long_df, values="ci_high", **kw)
    scoped = _scoped(long_df, spec)
    ties: dict[str, pd.DataFrame] = {}
    if samples is not None:
        s = samples[samples["criterion"].isin(criteria)]
        if spec["track"] is not None:
            s = s[s["track"] == spec["track"]]
        if spec["model"] is not None:
            s = s[s["model"] == spec["model"]]
        if len(s):
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
                    ties[c] = ranks_with_ties(groups, direction=directions[j], n_boot=n_boot, alpha=alpha,
                                              seed=seed)
    for c, t in ties.items():
        table[f"tied_rank:{c}"] = table["entry"].map(dict(zip(t["model"], t["rank"]))).astype("Int64")
    return table, criteria, directions, src, ci_lo, ci_hi, ties, scoped


def _criterion_cell(v, lo, hi, src, fallback, out_dir, results_root) -> str:
    if src:
        target = os.path.relpath(Path(results_root) / src, out_dir)
        href = Path(target).as_posix()
        title = f"from {src}"
    else:
        href, title = fallback, "no source recorded: see the profile figure"
    if not np.isfinite(v):
        return f'<td class="missing"><a href="{_esc(_href(href))}" title="missing; {_esc(title)}">–</a></td>'
    ci = f' <span class="ci">[{_fmt(lo)}, {_fmt(hi)}]</span>' if np.isfinite(lo) and np.isfinite(hi) else ""
    return f'<td><a href="{_esc(_href(href))}" title="{_esc(title)}">{_fmt(v)}</a>{ci}</td>'


def _page(spec, table, criteria, directions, src, ci_lo, ci_hi, ties, figs, profile_of, table_href, out_dir,
          results_root) -> str:
    title = spec["title"] or (f"Leaderboard: {spec['name']}")
    scope = f"track {spec['track']}" if spec["track"] else "all tracks"
    if spec["model"]:
        scope += f"; intra-technique: parameter sets of model {spec['model']}"
    eps = spec["epsilon"]
    eps_text = "none (ordinary Pareto dominance)" if not eps else _esc(eps)
    miss = spec["missing"]
    miss_text = (
        "missing scores are ignored pairwise: two entries are compared on the criteria both have, and the "
        "average rank is over the criteria an entry has (column n)"
        if miss == "ignore" else "missing scores are not allowed (missing='raise')"
    )
    tie_cols = [c for c in criteria if c in ties]
    head = ['<th class="entry">entry</th>', "<th>front</th>", "<th>Pareto-optimal</th>",
            "<th>average rank</th>", "<th>n</th>"]
    head += [f'<th title="{_esc(c)}">tied rank<br>{_esc(_short(c))}</th>' for c in tie_cols]
    head += ["<th>dominated by</th>"]
    head += [f'<th title="{_esc(c)}">{_esc(_short(c))}<br><span class="ci">'
             f'{"lower" if d == "min" else "higher"} is better</span></th>' for c, d in zip(criteria, directions)]
    rows = []
    proj = figs.get("projections") or figs["parallel"]
    for _, r in table.iterrows():
        e = r["entry"]
        prof = profile_of[e]
        cells = [f'<td class="entry"><a href="#profile-{_esc(_slug(e))}">{_esc(e)}</a></td>',
                 f'<td><a href="{_esc(_href(proj))}" title="fronts: 2-D projections">{int(r["front"])}</a></td>',
                 f'<td>{"yes" if r["pareto_optimal"] else ""}</td>',
                 f'<td><a href="{_esc(_href(figs["parallel"]))}" title="per-criterion ranks: parallel coordinates">'
                 f'{_fmt(float(r["average_rank"]))}</a></td>',
                 f'<td>{int(r["n_ranked"])}</td>']
        for c in tie_cols:
            v = r[f"tied_rank:{c}"]
            cells.append(f'<td><a href="{_esc(_href(figs["ties"]))}">{int(v)}</a></td>' if pd.notna(v)
                         else '<td class="missing">–</td>')
        cells.append(f'<td class="dom">{_esc(r["dominated_by"])}</td>')
        for c in criteria:
            cells.append(_criterion_cell(float(r[c]), float(ci_lo.loc[e, c]), float(ci_hi.loc[e, c]),
                                         src.loc[e, c] if isinstance(src.loc[e, c], str) else "", prof,
                                         out_dir, results_root))
        cls = ' class="front1"' if int(r["front"]) == 1 else ""
        rows.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    pareto = [str(e) for e in table.loc[table["pareto_optimal"], "entry"]]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        '<p><a href="index.html">&larr; all leaderboards</a></p>',
        f"<h1>{_esc(title)}</h1>",
        f'<p class="note">Scope: {_esc(scope)}; {len(table)} entries, {len(criteria)} criteria. '
        f"Pareto-optimal set (front 1): <b>{_esc(', '.join(pareto))}</b>. "
        f"Tolerance (epsilon dominance, papers/001 Sec. 5): {eps_text}. {_esc(miss_text)}. "
        f'Table as <a href="{_esc(_href(table_href))}">CSV</a>.</p>',
        '<p class="note">Front: iterated Pareto fronts (papers/001): front 1 holds the entries no other entry '
        "dominates; remove them and repeat. Average rank: Middlebury-style, each criterion ranked separately "
        "(1 = best) and averaged: it hides the size of differences and can change when unrelated entries are "
        "added. Tied rank: entries whose bootstrap interval of the mean difference to their cluster leader "
        "contains 0 share a rank (Neilson &amp; Yang 2008); shown only where per-item samples exist. "
        "Every number links to the figure or table it comes from; [a, b] is the interval.</p>",
        '<h2 id="table">Leaderboard</h2>',
        '<div class="scroll"><table class="lb" id="leaderboard"><thead><tr>' + "".join(head)
        + "</tr></thead><tbody>",
        *rows,
        "</tbody></table></div>",
        '<h2 id="fronts">Fronts</h2>',
    ]
    if "projections" in figs:
        parts.append(f'<figure><img src="{_esc(_href(figs["projections"]))}" alt="2-D projections of the fronts">'
                     "<figcaption>Fronts in 2-D projections (pairs of criteria); colour = front, black edge = "
                     "Pareto-optimal. An entry missing either coordinate is left out of that panel. A projection "
                     "can show a front-1 entry behind others: dominance is over all criteria.</figcaption></figure>")
    parts.append(f'<figure><img src="{_esc(_href(figs["parallel"]))}" alt="parallel coordinates of the fronts">'
                 "<figcaption>Parallel coordinates: each axis scaled so that the best entry is 1 and the worst 0 "
                 "(direction taken into account); colour = front; gaps = missing scores.</figcaption></figure>")
    if "ties" in figs:
        parts.append(f'<figure><img src="{_esc(_href(figs["ties"]))}" alt="ranks with statistical ties">'
                     "<figcaption>Ranks with statistical ties (bootstrap of per-item samples, greedy clustering)."
                     "</figcaption></figure>")
    parts.append('<h2 id="profiles">Profiles across experiments</h2>')
    for e in table["entry"]:
        parts.append(f'<figure id="profile-{_esc(_slug(e))}"><img src="{_esc(_href(profile_of[e]))}" '
                     f'alt="profile of {_esc(e)}"><figcaption>{_esc(e)}: every score in this leaderboard\'s scope, '
                     "one panel per track and metric, bars with intervals where given.</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------- the site


def build_report(
    long_df: pd.DataFrame,
    out_dir: str | os.PathLike,
    *,
    leaderboards: Sequence[Mapping[str, Any]] | None = None,
    results_root: str | os.PathLike = "results",
    table_dir: str | os.PathLike | None = None,
    samples: pd.DataFrame | None = None,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
    max_projections: int = 6,
    title: str = "psybench leaderboards",
) -> dict[str, pd.DataFrame]:
    """Write the HTML leaderboard report and the leaderboard tables.

    Parameters
    ----------
    long_df : pandas.DataFrame
        The long score table (:data:`psybench.aggregate.table.SCORE_COLUMNS`),
        e.g. :func:`psybench.aggregate.collect.collect_scores` output.
    out_dir : path
        Report folder (``results/report``): ``index.html``, ``<name>.html`` per
        leaderboard, ``figures/<name>/*.png``.  Built in a temporary sibling and
        renamed into place; an existing report there (marked by a hidden
        ``.psybench-report`` file) is replaced; any other non-empty folder is an error.
    leaderboards : sequence of mappings, optional
        One per page, keys :data:`LEADERBOARD_KEYS`: ``name`` (required; file
        name), ``title``, ``track`` (None = all tracks), ``criteria`` (list of
        ``track/experiment/metric``; None = all in scope), ``model`` (intra-technique
        evaluation of one model's parameter sets; None = inter-technique),
        ``epsilon`` (None/{}: none; a number; or {criterion: eps}), ``missing``
        ("ignore" default, or "raise"), ``projections`` (list of [criterion,
        criterion] pairs; default the first ``max_projections`` pairs of criteria).
        Default :func:`default_leaderboards` (overall + one per track).
    results_root : path
        Folder the ``source`` column is relative to; links are made relative to
        ``out_dir``.
    table_dir : path, optional
        Where ``leaderboard_<name>.csv`` + ``.parquet`` go (default
        ``<results_root>/aggregate``).
    samples : pandas.DataFrame, optional
        Per-item samples for ranks with ties: columns :data:`SAMPLE_COLUMNS`
        (``params_hash``, ``experiment``, ``item`` optional).  Criteria with
        samples for at least two entries get a ``tied_rank:<criterion>`` column
        (:func:`psybench.aggregate.ranks.ranks_with_ties`; NaN items are dropped
        per model).  Without samples, no tied ranks are shown.
    n_boot, alpha, seed
        Bootstrap settings of :func:`~psybench.aggregate.ranks.ranks_with_ties`.
    max_projections : int
        Number of 2-D projection panels when ``projections`` is not given.
    title : str
        Title of ``index.html``.

    Returns
    -------
    dict {name: pandas.DataFrame}
        The leaderboard tables as written (columns of
        :func:`psybench.aggregate.table.leaderboard` plus ``tied_rank:*``).

    Raises
    ------
    ValueError
        Bad leaderboard spec (names the index and key), duplicate names, an
        unknown track/criterion (from :func:`~psybench.aggregate.table.error_matrix`,
        prefixed with the leaderboard name), or a non-report folder at ``out_dir``.
    """
    long_df = concat_scores({"long table": long_df})
    out_dir = Path(out_dir)
    results_root = Path(results_root)
    table_dir = Path(table_dir) if table_dir is not None else results_root / "aggregate"
    specs = [_check_spec(s, i) for i, s in enumerate(leaderboards if leaderboards is not None
                                                      else default_leaderboards(long_df))]
    names = [s["name"] for s in specs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"leaderboard name(s) {dup} used more than once")
    if not specs:
        raise ValueError("no leaderboards to build")
    samples = _read_samples(samples)
    # Snakemake drops a hidden .snakemake_timestamp into directory outputs: not user content.
    foreign = [p for p in out_dir.iterdir() if p.name != ".snakemake_timestamp"] if out_dir.is_dir() else []
    if out_dir.exists() and (not out_dir.is_dir() or foreign) and not (out_dir / _MARKER).exists():
        raise ValueError(f"{out_dir} exists and is not a psybench report folder; refusing to replace it")
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    (tmp / _MARKER).write_text("psybench leaderboard report\n")
    tables: dict[str, pd.DataFrame] = {}
    summaries = []
    drawn: dict[tuple[str, bytes], str] = {}
    try:
        for spec in specs:
            name = spec["name"]
            try:
                table, criteria, directions, src, ci_lo, ci_hi, ties, scoped = _build_one(
                    long_df, spec, samples=samples, n_boot=n_boot, alpha=alpha, seed=seed,
                    max_projections=max_projections)
            except ValueError as exc:
                raise ValueError(f"leaderboard {name!r}: {exc}") from exc
            dirs = dict(zip(criteria, directions))
            fig_dir = Path("figures") / name
            figs: dict[str, str] = {}
            matrix = table.set_index("entry")[criteria]
            labels = list(matrix.index)
            front = table["front"].to_numpy(int)
            pairs = spec["projections"]
            if pairs is None:
                pairs = _default_pairs(matrix, max_projections)
            else:
                for p in pairs:
                    if len(p) != 2 or any(c not in criteria for c in p):
                        raise ValueError(f"leaderboard {name!r}: projection {p!r} must name two of {criteria}")
                pairs = [tuple(p) for p in pairs]
            if pairs:
                figs["projections"] = (fig_dir / "projections.png").as_posix()
                _projections_figure(matrix, dirs, front, labels, pairs, tmp / figs["projections"])
            figs["parallel"] = (fig_dir / "parallel.png").as_posix()
            _parallel_figure(matrix, directions, front, labels, tmp / figs["parallel"])
            if ties:
                figs["ties"] = (fig_dir / "ties.png").as_posix()
                _ties_figure(ties, tmp / figs["ties"])
            slugs = _unique_slugs(labels)
            ent = _entry_labels(scoped, intra=spec["model"] is not None).to_numpy()
            crit_of = np.array([criterion_name(*t) for t in zip(scoped["track"], scoped["experiment"],
                                                                 scoped["metric"])])
            scoped = scoped.assign(entry=ent)[np.isin(crit_of, criteria)]
            profile_of = {}
            for e in labels:
                profile_of[e] = (fig_dir / f"profile_{slugs[e]}.png").as_posix()
                rows = scoped[scoped["entry"] == e]
                # the same entry with the same scores in another leaderboard: copy, don't redraw
                key = (e, pd.util.hash_pandas_object(rows[_PROFILE_COLUMNS], index=False).to_numpy().tobytes())
                if key in drawn:
                    (tmp / profile_of[e]).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(tmp / drawn[key], tmp / profile_of[e])
                else:
                    _profile_figure(rows, e, tmp / profile_of[e])
                    drawn[key] = profile_of[e]
            out_table = table.copy()
            out_table.attrs = {}
            table_csv = table_dir / f"leaderboard_{name}.csv"
            write_table(out_table, table_csv)
            table_href = Path(os.path.relpath(table_csv, out_dir)).as_posix()
            page = _page(spec, table, criteria, directions, src, ci_lo, ci_hi, ties, figs, profile_of,
                         table_href, out_dir, results_root)
            (tmp / f"{name}.html").write_text(page, encoding="utf-8")
            tables[name] = table
            summaries.append((spec, table, criteria, table_href, figs))
        (tmp / "index.html").write_text(_index(title, summaries), encoding="utf-8")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return tables


def _index(title: str, summaries) -> str:
    rows = []
    for spec, table, criteria, table_href, figs in summaries:
        name = spec["name"]
        pareto = ", ".join(str(e) for e in table.loc[table["pareto_optimal"], "entry"])
        scope = spec["track"] or "all tracks"
        if spec["model"]:
            scope += f" (parameter sets of {spec['model']})"
        rows.append(
            f'<tr><td class="entry"><a href="{_esc(_href(name + ".html"))}">{_esc(spec["title"] or name)}</a></td>'
            f"<td>{_esc(scope)}</td><td>{len(table)}</td><td>{len(criteria)}</td>"
            f'<td class="dom">{_esc(pareto)}</td><td><a href="{_esc(_href(table_href))}">CSV</a></td></tr>'
        )
    first = summaries[0]
    thumb = first[4].get("projections") or first[4]["parallel"]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        '<p class="note">Pareto-optimal sets and iterated fronts (papers/001) next to the Middlebury-style average '
        "rank, per track and across tracks. A model dominates another when it is no worse on every criterion "
        "and better on at least one; whether it does never depends on which other models are listed, while "
        "average ranks can reorder when a model is added. Missing scores stay missing.</p>",
        '<table class="lb" id="leaderboards"><thead><tr><th class="entry">leaderboard</th><th>scope</th>'
        "<th>entries</th><th>criteria</th><th>Pareto-optimal set</th><th>table</th></tr></thead><tbody>",
        *rows,
        "</tbody></table>",
        f'<figure><a href="{_esc(_href(first[0]["name"] + ".html"))}"><img src="{_esc(_href(thumb))}" '
        f'alt="fronts of {_esc(first[0]["name"])}"></a><figcaption>Fronts of the {_esc(first[0]["name"])} '
        "leaderboard.</figcaption></figure>",
        "</body></html>",
    ]) + "\n"
