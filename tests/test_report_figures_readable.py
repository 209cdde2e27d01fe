"""Figures a person can read at the size the pages show them: text of at least 10 px at 100 % zoom, legends
outside the data, point and entry labels that do not overlap, axis labels inside the image."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text

from psybench.report import figures

MIN_PX = 10.0
CRITERIA = ["motion/barberpole/error", "motion/diamonds/error", "intphys/all/all/all/all/L_R",
            "intphys/all/all/all/all/L_A"]


def _matrix():
    """Two tracks: motion entries have no IntPhys score and back (the cross-track view)."""
    rng = np.random.default_rng(0)
    rows = {f"motion_model_{k}": [*rng.uniform(0, 40, 2), np.nan, np.nan] for k in range(8)}
    rows |= {f"physics_model_{k}": [np.nan, np.nan, *rng.uniform(0, 0.5, 2)] for k in range(5)}
    return pd.DataFrame.from_dict(rows, orient="index", columns=CRITERIA)


def _capture(monkeypatch):
    seen = {}

    def save(fig, path):
        fig.canvas.draw()
        seen["fig"] = fig

    monkeypatch.setattr(figures, "_save", save)
    return seen


def _texts(fig):
    return [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
            if t.get_visible() and t.get_text().strip()]


def _check(fig):
    scale = figures._DPI / 72.0  # the PNG's pixels per point; the page shows it at its size
    small = [(t.get_text(), t.get_fontsize() * scale) for t in _texts(fig) if t.get_fontsize() * scale < MIN_PX]
    assert not small, small
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        for label in (ax.xaxis.label, ax.yaxis.label):
            if label.get_text():
                box = label.get_window_extent(renderer)
                assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, label
        legend = ax.get_legend()
        if legend is not None:
            assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    for legend in fig.legends:
        for ax in fig.axes:
            if ax.axison:
                assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def _text_box(t, renderer):
    """The extent of a label's text, without the line tying it to its point."""
    return Text.get_window_extent(t, renderer)


def _overlaps(boxes):
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]


def test_projections_are_readable_and_show_every_track(monkeypatch, tmp_path):
    seen = _capture(monkeypatch)
    m = _matrix()
    front = np.array([1, 1, 2, 2, 3, 3, 1, 2, 1, 2, 2, 3, 1])
    pairs = [tuple(CRITERIA[:2]), tuple(CRITERIA[2:])]
    figures.projections_figure(m, dict.fromkeys(CRITERIA, "min"), front, list(m.index), pairs, tmp_path / "p.png")
    fig = seen["fig"]
    _check(fig)
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes[:2]:
        # the other track's entries have none of these criteria: not reported as missing here
        assert "missing" not in ax.get_title() and "without" not in ax.get_title()
        names = [t for t in ax.texts if t.get_text()]
        assert len(names) in (8, 5)
        assert not _overlaps([_text_box(t, renderer) for t in names])


def test_parallel_coordinates_are_readable_with_separate_names(monkeypatch, tmp_path):
    seen = _capture(monkeypatch)
    m = _matrix()
    front = np.ones(len(m), int)
    figures.parallel_figure(m, ["min"] * 4, front, list(m.index), tmp_path / "p.png")
    fig = seen["fig"]
    _check(fig)
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    names = [t for t in ax.texts if t.get_text()]
    assert sorted(t.get_text() for t in names) == sorted(m.index)
    assert not _overlaps([_text_box(t, renderer) for t in names])
    # criteria named as a page names them, not by their keys
    ticks = " ".join(t.get_text() for t in ax.get_xticklabels())
    assert "all/all" not in ticks and "IntPhys all blocks" in " ".join(ticks.split())


@pytest.mark.parametrize("n", [3, 20])
def test_profiles_and_ties_are_readable(monkeypatch, tmp_path, n):
    seen = _capture(monkeypatch)
    rows = pd.DataFrame({"track": "intphys", "experiment": [f"O{k % 3 + 1}/visible/all/all" for k in range(n)],
                         "metric": "L_R", "value": np.linspace(0, 0.5, n), "direction": "lower",
                         "ci_low": np.nan, "ci_high": np.nan})
    figures.profile_figure(rows, "model", tmp_path / "p.png")
    _check(seen["fig"])
    labels = [t.get_text() for t in seen["fig"].axes[0].get_yticklabels()]
    assert labels[0].startswith("block O1, visible")
    ties = {CRITERIA[2]: pd.DataFrame({"model": [f"m{k}" for k in range(n)], "mean": np.linspace(0, 1, n),
                                       "rank": np.arange(n) + 1})}
    figures.ties_figure(ties, tmp_path / "t.png")
    _check(seen["fig"])
