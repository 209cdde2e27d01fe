"""Figures of the leaderboard report (matplotlib, Agg backend), drawn from computed leaderboards.

Everything here draws what :mod:`psybench.aggregate.leaderboard` computed; nothing is
ranked or compared here.  PNGs carry no dates in their metadata, so the same
leaderboard gives byte-identical files.

* :func:`projections_figure`: the fronts in 2-D projections (pairs of criteria,
  points coloured by front; Cabezas & Trujillo 2011, A non-linear quantitative
  evaluation approach for disparity estimation, VISAPP, sec. 3.3);
* :func:`parallel_figure`: parallel coordinates, each axis scaled 0 = worst .. 1 =
  best entry;
* :func:`profile_figure`: one entry's scores across experiments, one panel per
  track x metric, intervals as error bars;
* :func:`ties_figure`: ranks with statistical ties (Neilson & Yang 2008).

Missing scores are left out of a projection panel, drawn as gaps in parallel
coordinates and marked "missing" in profiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from psybench.aggregate.labels import criterion_label  # noqa: E402
from psybench.report.layout import place_labels  # noqa: E402

__all__ = ["short_label", "projections_figure", "parallel_figure", "profile_figure", "ties_figure"]

_DPI = 80
#: Font sizes (points): at _DPI, 9 pt is 10 px, the smallest text read at 100 % zoom.
_FONT = 9.5
_TITLE = 10.5
#: Most axes a parallel-coordinates plot stays legible with; more criteria are drawn as a grid.
_MAX_AXES = 12


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI, metadata={"Software": None})
    plt.close(fig)


def _front_colors(n_fronts: int) -> list:
    cmap = plt.get_cmap("tab10")
    return [cmap(k % 10) for k in range(max(n_fronts, 1))]


def _wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters (at spaces)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def _experiment_label(track: str, experiment: str) -> str:
    """A profile bar's name: the experiment as a page names it (``block O1, visible``), not its key."""
    if not experiment:
        return "(all)"
    text = criterion_label(f"{track}/{experiment}/x", with_track=False)
    return text.rsplit(":", 1)[0] if ":" in text else experiment


def short_label(c: str, width: int = 28) -> str:
    """``c``, or its last ``width - 1`` characters after an ellipsis."""
    return c if len(c) <= width else "…" + c[-(width - 1):]


def projections_figure(matrix, directions, front, labels, pairs, path: Path) -> None:
    """Fronts in 2-D projections: one panel per pair of criteria, colour = front, black edge = front 1."""
    n_fronts = int(front.max()) if len(front) else 1
    colors = _front_colors(n_fronts)
    k = len(pairs)
    ncol = min(3, k)
    nrow = int(np.ceil(k / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 4.3 * nrow + 0.35), squeeze=False)
    for ax in axes.ravel()[k:]:
        ax.set_axis_off()
    to_label = []
    for ax, (a, b) in zip(axes.ravel(), pairs):
        x, y = matrix[a].to_numpy(float), matrix[b].to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(y)
        for f in range(1, n_fronts + 1):
            sel = ok & (front == f)
            if sel.any():
                ax.scatter(x[sel], y[sel], s=60, color=colors[f - 1], edgecolor="black" if f == 1 else "none",
                           linewidth=1.0, label=f"front {f}", zorder=3)
        da = "lower" if directions[a] == "min" else "higher"
        db = "lower" if directions[b] == "min" else "higher"
        ax.set_xlabel(_wrap(f"{criterion_label(a)}, {da} is better", 44), fontsize=_FONT)
        ax.set_ylabel(_wrap(f"{criterion_label(b)}, {db} is better", 40), fontsize=_FONT)
        ax.tick_params(labelsize=_FONT)
        ax.margins(0.12)
        idx = np.flatnonzero(ok)
        to_label.append((ax, x[idx], y[idx], [labels[i] for i in idx]))
        # an entry of another track has none of these criteria: not "missing" (cross-track view)
        own = ~np.isnan(matrix[[c for c in matrix.columns if c.split("/", 1)[0] == a.split("/", 1)[0]]]
                        .to_numpy(float)).all(axis=1)
        gone = int((~ok & own).sum())
        if gone:
            ax.set_title(f"{gone} entr{'y' if gone == 1 else 'ies'} without these scores", fontsize=_FONT)
    handles, names = [], []
    for ax in axes.ravel():
        for h, n in zip(*ax.get_legend_handles_labels()):
            if n not in names:
                handles.append(h)
                names.append(n)
    order = np.argsort([int(n.split()[1]) for n in names]) if names else []
    if names:  # above the panels, outside the data
        fig.legend([handles[i] for i in order], [names[i] for i in order], loc="upper center", ncol=len(names),
                   fontsize=_FONT, frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    fig.canvas.draw()  # after the layout: labels placed in final coordinates, one draw for every panel
    for ax, xs, ys, names_ in to_label:
        place_labels(ax, xs, ys, names_, draw=False, fontsize=_FONT)
    _save(fig, path)


def _score_heatmap(good: np.ndarray, crit: list[str], front: np.ndarray, labels, path: Path) -> None:
    """Many criteria: entries x criteria grid of the scaled scores (1 = best), rows by front; grey = missing."""
    n, m = good.shape
    order = np.lexsort((np.arange(n), front))
    fig, ax = plt.subplots(figsize=(min(16.0, max(7.0, 0.2 * m + 4.5)), max(3.5, 0.24 * n + 4.0)))
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("0.85")
    im = ax.imshow(np.ma.masked_invalid(good[order]), cmap=cmap, vmin=0, vmax=1, aspect="auto",
                   interpolation="nearest")
    ax.set_yticks(np.arange(n))
    ax.set_yticklabels([f"{labels[i]} (front {front[i]})" for i in order], fontsize=_FONT)
    ax.set_xticks(np.arange(m))
    ax.set_xticklabels([short_label(criterion_label(c), 40) for c in crit], rotation=90, fontsize=_FONT)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.01).set_label("scaled score (1 = best entry)", fontsize=_FONT)
    ax.set_title(f"{m} criteria: too many for parallel coordinates; one cell per entry and criterion",
                 fontsize=_TITLE)
    fig.tight_layout()
    _save(fig, path)


def parallel_figure(matrix, directions, front, labels, path: Path) -> None:
    """Parallel coordinates: each criterion scaled so that 1 = best entry; colour = front; gaps = missing.

    Above :data:`_MAX_AXES` criteria, a grid of the same scaled scores (entries x criteria) instead.
    """
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
    if m > _MAX_AXES:
        _score_heatmap(good, crit, front, labels, path)
        return
    n_fronts = int(front.max()) if len(front) else 1
    colors = _front_colors(n_fronts)
    fig, ax = plt.subplots(figsize=(min(16.0, max(7.0, 1.3 * m + 3.5)), max(5.6, 0.24 * len(labels) + 4.6)))
    xs = np.arange(m)
    ends = []
    for i in np.argsort(-front, kind="stable"):  # front 1 drawn last, on top
        ax.plot(xs, good[i], color=colors[front[i] - 1], lw=2.0 if front[i] == 1 else 1.0,
                marker="o", ms=4, alpha=0.95, label=f"front {front[i]}")
        last = np.flatnonzero(np.isfinite(good[i]))
        if last.size:
            ends.append((float(good[i, last[-1]]), float(xs[last[-1]]), labels[i], colors[front[i] - 1]))
    ax.vlines(xs, -0.05, 1.05, color="0.7", lw=0.6, zorder=0)
    step = max(1, int(np.ceil(m / 80)))  # at most ~80 axis labels; the table names every criterion
    ax.set_xticks(xs[::step])
    if m <= 6:
        ax.set_xticklabels([_wrap(criterion_label(c), 22) for c in crit[::step]], fontsize=_FONT)
    else:  # upright, each line ending at its axis
        ax.set_xticklabels([_wrap(criterion_label(c), 30) for c in crit[::step]], rotation=90, ha="right",
                           va="center", rotation_mode="anchor", multialignment="right", fontsize=_FONT)
    ax.set_xlim(-0.3, m - 0.7)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("scaled score (1 = best entry)", fontsize=_FONT)
    ax.tick_params(axis="y", labelsize=_FONT)
    # entry names in a column right of the last axis, spread so that none overlaps, each tied to its line end
    fig.canvas.draw()
    gap = 1.25 * _FONT / (ax.get_window_extent().height * 72.0 / fig.dpi) * 1.1
    placed: list[float] = []
    for y, _x, _name, _color in sorted(ends, key=lambda t: -t[0]):
        placed.append(min(y, placed[-1] - gap) if placed else y)
    shift = max(0.0, -0.05 - placed[-1]) if placed else 0.0
    for (y, x, name, color), yy in zip(sorted(ends, key=lambda t: -t[0]), placed):
        ann = ax.annotate(name, (x, y), xytext=(m - 1 + 0.25, yy + shift), textcoords="data", fontsize=_FONT,
                          va="center", color="black", annotation_clip=False,
                          arrowprops={"arrowstyle": "-", "lw": 0.5, "color": color, "shrinkA": 0, "shrinkB": 2})
        ann.set_in_layout(False)
    h, n = ax.get_legend_handles_labels()
    seen = {}
    for hh, nn in zip(h, n):
        seen.setdefault(nn, hh)
    keys = sorted(seen, key=lambda s: int(s.split()[1]))
    ax.legend([seen[k] for k in keys], keys, fontsize=_FONT, loc="lower left", bbox_to_anchor=(0.0, 1.01),
              ncol=len(keys), frameon=False, borderaxespad=0.0)
    width = max([len(str(t[2])) for t in ends] + [4]) * 0.6 * _FONT / 72.0 + 0.5  # inches for the names
    fig.tight_layout(rect=(0, 0, 1 - min(0.45, width / fig.get_figwidth()), 1))
    if m > 6:  # upright tick labels: room below for the longest line (0.6 x font size per character)
        longest = max(len(line) for t in ax.get_xticklabels() for line in t.get_text().split("\n"))
        fig.subplots_adjust(bottom=min(0.7, (longest * 0.6 * _FONT / 72.0 + 0.3) / fig.get_figheight()))
    _save(fig, path)


def profile_figure(rows: pd.DataFrame, label: str, path: Path) -> None:
    """One panel per (track, metric): bars over experiments with intervals."""
    groups = list(rows.groupby(["track", "metric"], sort=True))
    heights = [max(1.6, 0.3 * len(g) + 1.1) for _, g in groups]
    fig, axes = plt.subplots(len(groups), 1, figsize=(8.0, sum(heights) + 0.5), squeeze=False,
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
            ax.text(0, yy, " missing", va="center", fontsize=_FONT, color="0.4")
        ax.set_yticks(y)
        ax.set_yticklabels([_experiment_label(track, e) for e in g["experiment"]], fontsize=_FONT)
        ax.invert_yaxis()
        d = g["direction"].iloc[0]
        ax.set_title(f"{track}: {metric} ({d} is better)", fontsize=_TITLE)
        ax.tick_params(axis="x", labelsize=_FONT)
    fig.suptitle(label, fontsize=_TITLE + 1)
    fig.tight_layout()
    _save(fig, path)


def ties_figure(ties: Mapping[str, pd.DataFrame], path: Path) -> None:
    """Per criterion with samples: each model's mean over items, annotated with its tied rank."""
    k = len(ties)
    fig, axes = plt.subplots(k, 1, figsize=(7.5, sum(max(1.8, 0.36 * len(t) + 1.3) for t in ties.values())),
                             squeeze=False)
    for ax, (crit, t) in zip(axes[:, 0], ties.items()):
        y = np.arange(len(t))
        ax.scatter(t["mean"], y, color="#4a7fb5", zorder=3)
        for yy, (_, r) in zip(y, t.iterrows()):
            ax.annotate(f"rank {r['rank']}", (r["mean"], yy), fontsize=_FONT, xytext=(5, 0), va="center",
                        textcoords="offset points")
        ax.set_yticks(y)
        ax.set_yticklabels(t["model"], fontsize=_FONT)
        ax.invert_yaxis()
        ax.set_title(_wrap(f"{criterion_label(crit)}: mean over items; a shared rank = not distinguishable", 70),
                     fontsize=_FONT)
        ax.tick_params(axis="x", labelsize=_FONT)
        ax.margins(x=0.15)
    fig.tight_layout()
    _save(fig, path)
