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
#: Most axes a parallel-coordinates plot stays legible with; more criteria are drawn as a grid.
_MAX_AXES = 12


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI, metadata={"Software": None})
    plt.close(fig)


def _front_colors(n_fronts: int) -> list:
    cmap = plt.get_cmap("tab10")
    return [cmap(k % 10) for k in range(max(n_fronts, 1))]


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
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.8 * nrow), squeeze=False)
    for ax in axes.ravel()[k:]:
        ax.set_axis_off()
    to_label = []
    for ax, (a, b) in zip(axes.ravel(), pairs):
        x, y = matrix[a].to_numpy(float), matrix[b].to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(y)
        for f in range(1, n_fronts + 1):
            sel = ok & (front == f)
            if sel.any():
                ax.scatter(x[sel], y[sel], s=46, color=colors[f - 1], edgecolor="black" if f == 1 else "none",
                           linewidth=1.0, label=f"front {f}", zorder=3)
        da = "lower" if directions[a] == "min" else "higher"
        db = "lower" if directions[b] == "min" else "higher"
        ax.set_xlabel(f"{short_label(criterion_label(a), 48)}\n({da} is better)", fontsize=7)
        ax.set_ylabel(f"{short_label(criterion_label(b), 48)}\n({db} is better)", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.margins(0.12)
        idx = np.flatnonzero(ok)
        to_label.append((ax, x[idx], y[idx], [labels[i] for i in idx]))
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
    fig.canvas.draw()  # after the layout: labels placed in final coordinates, one draw for every panel
    for ax, xs, ys, names_ in to_label:
        place_labels(ax, xs, ys, names_, draw=False)
    _save(fig, path)


def _score_heatmap(good: np.ndarray, crit: list[str], front: np.ndarray, labels, path: Path) -> None:
    """Many criteria: entries x criteria grid of the scaled scores (1 = best), rows by front; grey = missing."""
    n, m = good.shape
    order = np.lexsort((np.arange(n), front))
    fig, ax = plt.subplots(figsize=(min(24.0, max(6.0, 0.2 * m + 3.5)), max(2.5, 0.24 * n + 2.2)))
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("0.85")
    im = ax.imshow(np.ma.masked_invalid(good[order]), cmap=cmap, vmin=0, vmax=1, aspect="auto",
                   interpolation="nearest")
    ax.set_yticks(np.arange(n))
    ax.set_yticklabels([f"{labels[i]} (front {front[i]})" for i in order], fontsize=7)
    ax.set_xticks(np.arange(m))
    ax.set_xticklabels([short_label(c, 32) for c in crit], rotation=90, fontsize=6)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.01).set_label("scaled score (1 = best entry)", fontsize=7)
    ax.set_title(f"{m} criteria: too many for parallel coordinates; one cell per entry and criterion", fontsize=8)
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
    ax.set_xticklabels([short_label(c) for c in crit[::step]], rotation=40, ha="right", fontsize=6)
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


def profile_figure(rows: pd.DataFrame, label: str, path: Path) -> None:
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


def ties_figure(ties: Mapping[str, pd.DataFrame], path: Path) -> None:
    """Per criterion with samples: each model's mean over items, annotated with its tied rank."""
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
        ax.set_title(f"{short_label(crit, 60)}: mean over items; shared rank = not distinguishable", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    _save(fig, path)
