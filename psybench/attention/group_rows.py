"""The rows of Table 1's groups from the rank percentiles of one (train, test) pair.

:func:`pair_tables` turns the rank percentiles of every filter on every tested
subject (:func:`psybench.attention.evaluate._test_ranks`) into one row per (filter,
subject) with its group (Shic & Scassellati 2007, sec. 5.2 and Table 1; the ``n/iid``
and ``n/shift`` controls beyond the paper, see :mod:`psybench.attention.evaluate`), and
:func:`shifted_cells` draws the gaze of the ``n/shift`` control.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["IID", "SHIFT", "RESPONSE_PERCENTILES", "pair_tables", "shifted_cells"]

#: Pseudo-subject of the i.i.d. uniform-gaze control.
IID = "iid"
#: Prefix of the ``n/shift`` control's pseudo-subjects.
SHIFT = "shift:"
RESPONSE_PERCENTILES = np.arange(0, 101, 5)
#: Fewest grid offsets of the ``n/shift`` control per human (a median over fewer is one cell's rank).
MIN_SEGMENTS = 20


def shifted_cells(cells, valid, subjects, own, seed, grid_shape, *, segment: int = 1, draws: int = 1):
    """subject -> (own filter, shifted cells (n, draws), valid (n,)) of the ``n/shift`` control.

    Each human's cells on the n test frames, shifted circularly by ``n // 2`` frames,
    then displaced on the grid (circularly, rows and columns) by ``draws`` uniformly
    drawn offsets, fresh ones every ``segment`` frames (the split's gap, shortened to
    leave at least :data:`MIN_SEGMENTS` segments on short test sets). Within a segment
    the gaze keeps its time course; over the offsets each cell is uniform on the grid,
    so the median over frames and draws sits at 50 % on any map, to a precision set by
    ``draws`` (see :func:`psybench.attention.evaluate._test_ranks`).
    """
    H, W = grid_shape
    rng = np.random.default_rng(seed)
    out = {}
    n = len(cells)
    half, segment = n // 2, max(1, min(int(segment), n // MIN_SEGMENTS))
    seg = np.arange(n) // segment
    n_seg = int(seg[-1]) + 1 if n else 0
    for j, s in enumerate(subjects):
        dr = rng.integers(H, size=(n_seg, draws))[seg]  # drawn for every subject: one stream, in order
        dc = rng.integers(W, size=(n_seg, draws))[seg]
        if s not in (own or {}):
            continue
        c = np.roll(cells[:, j], -half)[:, None]
        c = ((c // W + dr) % H) * W + (c % W + dc) % W
        out[s] = (own[s], c, np.roll(valid[:, j], -half))
    return out


def pair_tables(ranks: Mapping[str, np.ndarray], labels: Sequence[tuple[str, str]]):
    """The pairs and curves tables of :func:`psybench.attention.evaluate.evaluate_pair`.

    One row per tested subject (``ranks`` order) and filter.
    """
    category = np.array([c for c, _ in labels], dtype=object)
    name = np.array([n for _, n in labels], dtype=object)
    human = category == "n"
    n_rp = len(RESPONSE_PERCENTILES)
    rows: dict[str, list] = {k: [] for k in ("group", "filter", "subject", "median", "n_frames")}
    curves: dict[str, list] = {k: [] for k in ("group", "filter", "subject", "rp", "value")}
    for v, R in ranks.items():
        if len(R) == 0:
            continue
        # each filter's ranks sorted once, a row each: the median and percentiles select and interpolate
        # the same order statistics as on R (by value: the same numbers), from sorted contiguous rows
        R = np.ascontiguousarray(np.sort(R, axis=0).T)  # (U, n)
        med = np.median(R, axis=1) * 100
        curve = np.percentile(R, RESPONSE_PERCENTILES, axis=1) * 100  # (n_rp, U)
        if v == IID:
            keep = np.flatnonzero(human)
            group = np.full(len(keep), "n/iid", dtype=object)
        elif v.startswith(SHIFT):  # one column: the subject's own filter
            v = v[len(SHIFT):]
            keep = np.flatnonzero(human & (name == v))
            group = np.full(len(keep), "n/shift", dtype=object)
        else:
            keep = np.arange(len(labels))
            group = np.where(human, np.where(name == v, "n ma", "n un"), category + "/n")
        cols = np.zeros(len(keep), int) if group[:1].tolist() == ["n/shift"] else keep
        subject = np.full(len(keep), v, dtype=object)
        for key, values in (("group", group), ("filter", name[keep]), ("subject", subject)):
            rows[key].append(values)
            curves[key].append(np.repeat(values, n_rp))
        rows["median"].append(med[cols])
        rows["n_frames"].append(np.full(len(keep), R.shape[1], np.int64))
        curves["rp"].append(np.tile(RESPONSE_PERCENTILES.astype(np.int64), len(keep)))
        curves["value"].append(curve[:, cols].T.ravel())
    return tuple(pd.DataFrame({k: np.concatenate(v) if v else [] for k, v in t.items()}) for t in (rows, curves))
