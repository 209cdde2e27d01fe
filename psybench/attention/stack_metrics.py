"""The per-map saliency metrics of one frame, for a stack of maps at once.

:func:`score_stack` gives, for each of M maps of one frame, the numbers the per-map
functions of :mod:`psybench.attention.map_metrics` give (the MIT saliency benchmark's
definitions; Bylinskii et al. 2019, IEEE TPAMI 41(3), sec. 3): AUC-Judd, AUC-Borji,
sAUC, NSS, CC, KL, SIM and IG. :func:`psybench.attention.metrics.score_frames` scores
every model's map of a frame against the same fixations, so the Python work of each
metric is paid once per frame instead of once per map.

Each map's numbers are computed with the same floating-point operations in the same
order as the per-map functions: elementwise operations row by row, reductions along
each map's own (last, contiguous) axis, which NumPy sums as it sums one map alone,
and integer counts where the per-map code bisects sorted values. AUC-Borji and sAUC
build their threshold grid from each map's own largest value, so maps are grouped by
the length of that grid. The results are the per-map functions' to the bit (tested),
and a map holding NaN or infinity is the same error here as there
(:func:`~psybench.attention.map_metrics.finite_map`).
"""

from __future__ import annotations

import numpy as np

from psybench.attention.map_metrics import EPS, finite_map

__all__ = ["score_stack"]


def _range(s: np.ndarray) -> np.ndarray:
    """Each row min-max scaled to [0, 1]; a constant row becomes NaN (map_metrics._range)."""
    lo, hi = s.min(1, keepdims=True), s.max(1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (s - lo) / (hi - lo)
    out[~(hi > lo)[:, 0]] = np.nan
    return out


def _unit(s: np.ndarray) -> np.ndarray:
    """Each row min-max scaled to [0, 1]; a constant row becomes 0 (map_metrics._unit)."""
    lo, hi = s.min(1, keepdims=True), s.max(1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (s - lo) / (hi - lo)
    out[~(hi > lo)[:, 0]] = 0.0
    return out


def _sum1(m: np.ndarray) -> np.ndarray:
    """Each row divided by its sum; a zero row stays zero (map_metrics._sum1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(m.any(1, keepdims=True), m / m.sum(1, keepdims=True), m)


def _judd(s: np.ndarray, fix: np.ndarray, n: int) -> np.ndarray:
    """AUC-Judd of each row (map_metrics.auc_judd): the Mann-Whitney counts by comparison, not bisection."""
    m = s.shape[1] - n
    if n == 0 or m == 0:
        return np.full(len(s), np.nan)
    pos, neg = s[fix].reshape(len(s), n), s[~fix].reshape(len(s), m)  # each row's cells in flat order
    lower = (neg[:, None, :] < pos[:, :, None]).sum(2)  # = searchsorted(sorted neg, pos, 'left')
    upper = (neg[:, None, :] <= pos[:, :, None]).sum(2)
    rank = ((lower + 0.5 * (upper - lower)) / m).mean(1)
    low = pos.min(1)
    k = (pos == low[:, None]).sum(1)
    above = (neg > low[:, None]).sum(1) + (neg == low[:, None]).sum(1) * k / (k + 1)
    return rank + above / (2 * n * m)


def _stepped(pos: np.ndarray, negs: np.ndarray, step: float) -> np.ndarray:
    """Borji's stepped ROC area of each row (map_metrics._stepped_auc): pos (R, n), negs (R, splits, k)."""
    p_top, n_top = pos.max(1), negs.max((1, 2))
    top = np.where(n_top > p_top, n_top, p_top)  # Python's max(p, n): p unless n > p (a NaN p stays)
    with np.errstate(invalid="ignore"):  # a NaN top (constant map) gets the one NaN threshold
        n_th = np.where(np.isfinite(top), np.floor(top / step + 1e-9).astype(np.int64) + 1, -1)
    out = np.empty(len(pos))
    for size in np.unique(n_th):  # one threshold grid per group of rows
        rows = np.flatnonzero(n_th == size)
        th = np.arange(size)[::-1] * step if size >= 0 else np.array([np.nan])
        tp = (pos[rows][:, None, :] >= th[None, :, None]).mean(2)
        tp = np.concatenate([np.zeros((len(rows), 1)), tp, np.ones((len(rows), 1))], axis=1)
        fp = (negs[rows][:, :, None, :] >= th[None, None, :, None]).mean(3)
        ends = np.ones(fp.shape[:2] + (1,))
        fp = np.concatenate([np.zeros_like(ends), fp, ends], axis=2)
        out[rows] = np.trapezoid(tp[:, None, :], fp, axis=2).mean(1)
    return out


def score_stack(
    maps: np.ndarray,
    fixations: np.ndarray,
    density: np.ndarray,
    baseline: np.ndarray,
    *,
    borji: np.ndarray,
    shuffled: np.ndarray | None,
    step: float = 0.1,
) -> dict[str, np.ndarray]:
    """Every metric of R maps, each against its own fixations (the same number fixated in every row).

    Parameters
    ----------
    maps : ndarray, shape (R, K)
        Saliency maps (float64), flattened.
    fixations : ndarray of bool, shape (R, K)
        Fixated cells of each map's frame, the same number n >= 1 in every row.
    density : ndarray, shape (R, K)
        Fixation density of each map's frame (CC, KL, SIM).
    baseline : ndarray, shape (K,)
        IG baseline.
    borji, shuffled : ndarray of int, shape (R, n_splits, k)
        Each row's AUC negatives (:func:`~psybench.attention.map_metrics.borji_negatives`,
        :func:`~psybench.attention.map_metrics.shuffled_negatives`; None: sAUC is NaN).

    Returns
    -------
    dict metric name -> ndarray, shape (R,)

    Raises
    ------
    ValueError
        A map, density or the baseline holding NaN or infinity (naming its row and cell).
    """
    s = finite_map(maps, "saliency map (row, cell)")
    R, K = s.shape
    fix = np.asarray(fixations, bool)
    n = int(fix[0].sum()) if R else 0
    dens = finite_map(density, "fixation density (row, cell)")
    baseline = finite_map(baseline, "baseline")
    ranged = _range(s)
    pos = ranged[fix].reshape(R, n)

    def negatives(idx):
        return np.take_along_axis(ranged, idx.reshape(R, -1), axis=1).reshape(idx.shape)

    out = {"AUC-Judd": _judd(s, fix, n), "AUC-Borji": _stepped(pos, negatives(borji), step)}
    out["sAUC"] = np.full(R, np.nan) if shuffled is None else _stepped(pos, negatives(shuffled), step)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = s.std(1, ddof=1, keepdims=True) if K > 1 else np.zeros((R, 1))
        z = ((s - s.mean(1, keepdims=True)) / sd)[fix].reshape(R, n).mean(1)
    out["NSS"] = np.where(sd[:, 0] == 0, np.nan, z)
    a = s - s.mean(1, keepdims=True)
    b = dens - dens.mean(1, keepdims=True)
    den = np.sqrt((a * a).sum(1) * (b * b).sum(1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out["CC"] = np.where(den > 0, (a * b).sum(1) / den, np.nan)
    P = _sum1(np.where(s.min(1, keepdims=True) >= 0, s, _unit(s)))
    Q = _sum1(dens)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["KL"] = (Q * np.log(EPS + Q / (P + EPS))).sum(1)
    P = np.where(s.any(1, keepdims=True), _sum1(ranged), s)
    Q = np.where(dens.any(1, keepdims=True), _sum1(_range(dens)), dens)
    out["SIM"] = np.where(np.isnan(P).all(1) | np.isnan(Q).all(1), np.nan, np.minimum(P, Q).sum(1))
    P = _sum1(ranged)[fix].reshape(R, n)
    B = np.broadcast_to(_sum1(_range(np.asarray(baseline, np.float64).reshape(1, -1))), (R, K))[fix].reshape(R, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["IG"] = (np.log2(EPS + P) - np.log2(EPS + B)).mean(1)
    return out
