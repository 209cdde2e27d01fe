"""Point labels that do not overlap: greedy placement around each point (an adjustText-like offset).

Labels are placed one by one, each at the first of a ring of candidate offsets
around its point whose text box (estimated from the font size) overlaps neither the
labels already placed nor any point; where every candidate overlaps, the one with
the least overlap is taken.  A label set away from its point gets a thin leader line.
Deterministic: same points, same placement.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["place_labels"]

# candidate offsets (points) of the label's lower-left corner, nearest first; w = label width
_RINGS = (4.0, 12.0, 22.0, 34.0)


def _candidates(w: float, h: float) -> list[tuple[float, float]]:
    out = []
    for r in _RINGS:
        out += [(r, r * 0.5), (r, -h - r * 0.5), (-w - r, r * 0.5), (-w - r, -h - r * 0.5),
                (-w / 2, r), (-w / 2, -h - r), (r, -h / 2), (-w - r, -h / 2)]
    return out


def _overlap(a: np.ndarray, boxes: np.ndarray) -> float:
    if not len(boxes):
        return 0.0
    dx = np.minimum(a[2], boxes[:, 2]) - np.maximum(a[0], boxes[:, 0])
    dy = np.minimum(a[3], boxes[:, 3]) - np.maximum(a[1], boxes[:, 1])
    return float((np.clip(dx, 0, None) * np.clip(dy, 0, None)).sum())


def place_labels(ax, x: Sequence[float], y: Sequence[float], labels: Sequence[str], *, fontsize: float = 7.0,
                 point_radius: float = 4.0, draw: bool = True) -> list[tuple[float, float]]:
    """Annotate points ``(x[i], y[i])`` of ``ax`` with ``labels[i]`` without overlaps where possible.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes whose data limits are final (call after plotting the points).
    x, y : sequence of float, shape (n,)
        Data coordinates.
    labels : sequence of str, shape (n,)
    fontsize : float
        Font size in points; the text box is estimated as 0.6 x fontsize per character.
    point_radius : float
        Half-size (points) of the box each marker occupies.
    draw : bool
        Draw the figure first, to fix its layout and limits; ``False`` when the caller
        drew it since its last change of layout or limits (labels of several axes of
        one figure: one draw instead of one per axes; labels change neither).

    Returns
    -------
    list of (float, float)
        The chosen offset (points) of each label's lower-left corner.
    """
    if draw:
        ax.figure.canvas.draw()  # final transforms
    scale = ax.figure.dpi / 72.0
    pts = ax.transData.transform(np.column_stack([x, y]).astype(float)) / scale  # in points
    r = point_radius
    occupied = [np.array([px - r, py - r, px + r, py + r]) for px, py in pts]
    placed: list[np.ndarray] = []
    chosen = []
    frame = ax.get_window_extent().bounds  # the axes in pixels: labels stay inside, off the axis labels
    x0, y0 = frame[0] / scale, frame[1] / scale
    x1, y1 = x0 + frame[2] / scale, y0 + frame[3] / scale
    for i, text in enumerate(labels):
        w, h = 0.6 * fontsize * len(str(text)), fontsize * 1.1
        best, best_cost = None, np.inf
        others = np.array([b for j, b in enumerate(occupied) if j != i] + placed).reshape(-1, 4)
        for dx, dy in _candidates(w, h):
            box = np.array([pts[i, 0] + dx, pts[i, 1] + dy, pts[i, 0] + dx + w, pts[i, 1] + dy + h])
            outside = (max(0.0, x0 - box[0]) + max(0.0, box[2] - x1)) * h + (max(0.0, y0 - box[1])
                                                                              + max(0.0, box[3] - y1)) * w
            cost = _overlap(box, others) + outside
            if cost < best_cost - 1e-9:
                best, best_cost = (dx, dy, box), cost
            if cost == 0.0:
                break
        dx, dy, box = best
        placed.append(box)
        far = np.hypot(dx + w / 2, dy + h / 2) > 14.0
        ann = ax.annotate(str(text), (x[i], y[i]), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                    ha="left", va="bottom",
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.5", "shrinkA": 0, "shrinkB": 3}
                    if far else None)
        ann.set_in_layout(False)
        chosen.append((float(dx), float(dy)))
    return chosen
