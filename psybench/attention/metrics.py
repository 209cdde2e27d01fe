"""Standard saliency metrics (beyond the paper), re-implemented from their definitions.

Definitions follow the MIT saliency benchmark code (cvzoya/saliency; Bylinskii et
al. 2019, "What do different evaluation metrics tell us about saliency models?"),
Per map (one frame):

* AUC-Judd -- thresholds at the map values of the fixated cells; TP rate = fixated
  cells above, FP rate = other cells above; trapezoid area. Departure: no random
  jitter (ties counted as above), so scores are deterministic.
* AUC-Borji -- negatives are ``n_fix`` cells drawn uniformly (with replacement), as
  many as fixations; thresholds from 0 to the maximum in steps of ``step`` (0.1) of
  the map scaled to [0, 1]; mean over ``n_splits`` (100) draws (seeded).
* shuffled AUC -- negatives are the fixations of *other* frames (controls centre
  bias). Computed as the exact rank AUC (Mann-Whitney, ties = 1/2), i.e.
  ``sklearn.metrics.roc_auc_score``; MIT's code instead steps thresholds by 0.1.
* NSS -- mean of the z-scored map (population SD, ddof = 0) at the fixations.
* CC -- Pearson correlation between the map and the fixation density map.
* KL -- ``sum Q log(eps + Q / (P + eps))``, P the map and Q the fixation density,
  both normalised to sum 1, eps = 2.2204e-16 (lower is better).
* SIM -- ``sum min(P, Q)`` of both sum-normalised maps.
* information gain -- ``mean over fixations of log2(eps + P) - log2(eps + B)``,
  P the min-max scaled map and B a centre-bias baseline (isotropic Gaussian), both
  normalised to sum 1 (bits per fixation).

The fixation density map is the fixation count map blurred by a Gaussian of
``density_sigma`` cells (1 cell on the 40x30 grid).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import ndimage

from psybench.attention.defaults import DENSITY_SIGMA, IN_MEMORY_MB, LAGS_MS, MIN_DIST_FRAC, N_NEGATIVES, N_SPLITS, SEED
from psybench.attention.movies import load_movies
from psybench.attention.tuning import (
    fisher_filter,
    frame_features,
    gaze_cells,
    lag_frames,
    test_frames,
    train_frames,
    training_vectors,
)
from psybench.io.tables import write_table

__all__ = [
    "EPS",
    "METRIC_DIRECTIONS",
    "auc_judd",
    "auc_borji",
    "auc_shuffled",
    "nss",
    "cc",
    "kl_div",
    "similarity",
    "information_gain",
    "fixation_density",
    "centre_baseline",
    "score_frames",
    "run_metrics",
]

EPS = 2.2204e-16
METRIC_DIRECTIONS = {
    "AUC-Judd": "higher",
    "AUC-Borji": "higher",
    "sAUC": "higher",
    "NSS": "higher",
    "CC": "higher",
    "KL": "lower",
    "SIM": "higher",
    "IG": "higher",
}


def _unit(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, np.float64)
    lo, hi = s.min(), s.max()
    return (s - lo) / (hi - lo) if hi > lo else np.zeros_like(s)


def _mask(fix, shape) -> np.ndarray:
    fix = np.asarray(fix)
    if fix.shape != tuple(shape):
        raise ValueError(f"fixation map of shape {fix.shape} does not match the saliency map {tuple(shape)}")
    return fix > 0


def auc_judd(saliency: np.ndarray, fixations: np.ndarray) -> float:
    """AUC-Judd of a map given a fixation map (cells > 0 are fixated)."""
    s = _unit(saliency).ravel()
    f = _mask(fixations, np.shape(saliency)).ravel()
    n_fix, n_pix = int(f.sum()), s.size
    if n_fix == 0 or n_fix == n_pix:
        return float("nan")
    th = np.sort(s[f])[::-1]
    above = (s[None, :] >= th[:, None]).sum(1)
    tp = np.concatenate([[0.0], np.arange(1, n_fix + 1) / n_fix, [1.0]])
    fp = np.concatenate([[0.0], (above - np.arange(1, n_fix + 1)) / (n_pix - n_fix), [1.0]])
    return float(np.trapezoid(tp, fp))


def auc_borji(
    saliency: np.ndarray, fixations: np.ndarray, *, n_splits: int = N_SPLITS, step: float = 0.1, seed: int = SEED
) -> float:
    """AUC-Borji: uniformly sampled negatives, thresholds in steps of ``step``, mean over splits."""
    s = _unit(saliency).ravel()
    f = _mask(fixations, np.shape(saliency)).ravel()
    pos = s[f]
    n_fix = pos.size
    if n_fix == 0:
        return float("nan")
    rng = np.random.default_rng(seed)
    neg = s[rng.integers(0, s.size, size=(n_splits, n_fix))]
    out = []
    for k in range(n_splits):
        th = np.arange(0.0, max(pos.max(), neg[k].max()) + step, step)[::-1]
        tp = np.concatenate([[0.0], (pos[None] >= th[:, None]).mean(1), [1.0]])
        fp = np.concatenate([[0.0], (neg[k][None] >= th[:, None]).mean(1), [1.0]])
        out.append(np.trapezoid(tp, fp))
    return float(np.mean(out))


def _rank_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Mann-Whitney AUC: P(pos > neg) + P(pos = neg) / 2."""
    pos = np.asarray(pos, np.float64)
    neg = np.sort(np.asarray(neg, np.float64))
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    lower = np.searchsorted(neg, pos, side="left")
    upper = np.searchsorted(neg, pos, side="right")
    return float(np.mean((lower + 0.5 * (upper - lower)) / neg.size))


def auc_shuffled(saliency: np.ndarray, fixations: np.ndarray, other_fixations: np.ndarray) -> float:
    """Shuffled AUC: fixated cells vs the cells fixated on other frames (counts as multiplicity)."""
    s = np.asarray(saliency, np.float64)
    f = np.asarray(fixations)
    o = np.asarray(other_fixations)
    if f.shape != s.shape or o.shape != s.shape:
        raise ValueError("auc_shuffled: saliency, fixations and other_fixations must share a shape")
    pos = np.repeat(s.ravel(), np.maximum(f.ravel(), 0).astype(int))
    neg = np.repeat(s.ravel(), np.maximum(o.ravel(), 0).astype(int))
    return _rank_auc(pos, neg)


def nss(saliency: np.ndarray, fixations: np.ndarray) -> float:
    """Normalised scanpath saliency: mean z-score of the map at the fixated cells (each count once per fixation)."""
    s = np.asarray(saliency, np.float64)
    sd = s.std()
    if sd == 0:
        return float("nan")
    z = (s - s.mean()) / sd
    f = np.asarray(fixations)
    if f.shape != s.shape:
        raise ValueError(f"fixation map of shape {f.shape} does not match the saliency map {s.shape}")
    w = np.maximum(f, 0).astype(np.float64)
    return float((z * w).sum() / w.sum()) if w.sum() > 0 else float("nan")


def cc(saliency: np.ndarray, density: np.ndarray) -> float:
    """Pearson correlation coefficient between the map and a fixation density map."""
    a = np.asarray(saliency, np.float64).ravel()
    b = np.asarray(density, np.float64).ravel()
    a = a - a.mean()
    b = b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")


def _sum1(m):
    m = np.asarray(m, np.float64)
    t = m.sum()
    return m / t if t > 0 else np.full_like(m, 1.0 / m.size)


def kl_div(saliency: np.ndarray, density: np.ndarray) -> float:
    """KL divergence of the fixation density Q from the map P (both sum-normalised; lower is better)."""
    P = _sum1(np.maximum(saliency, 0) if np.min(saliency) >= 0 else _unit(saliency))
    Q = _sum1(density)
    return float((Q * np.log(EPS + Q / (P + EPS))).sum())


def similarity(saliency: np.ndarray, density: np.ndarray) -> float:
    """SIM: histogram intersection of the sum-normalised map and fixation density."""
    P = _sum1(_unit(saliency))
    Q = _sum1(density)
    return float(np.minimum(P, Q).sum())


def information_gain(saliency: np.ndarray, fixations: np.ndarray, baseline: np.ndarray) -> float:
    """Information gain (bits per fixation) of the map over ``baseline`` at the fixated cells."""
    P = _sum1(_unit(saliency))
    B = _sum1(baseline)
    f = np.maximum(np.asarray(fixations), 0).astype(np.float64)
    if f.shape != P.shape:
        raise ValueError(f"fixation map of shape {f.shape} does not match the saliency map {P.shape}")
    if f.sum() == 0:
        return float("nan")
    gain = np.log2(EPS + P) - np.log2(EPS + B)
    return float((gain * f).sum() / f.sum())


def fixation_density(counts: np.ndarray, *, sigma: float = DENSITY_SIGMA) -> np.ndarray:
    """Fixation count map blurred by a Gaussian of ``sigma`` cells (constant-zero border)."""
    return ndimage.gaussian_filter(np.asarray(counts, np.float64), sigma=sigma, mode="constant")


def centre_baseline(shape: tuple[int, int], *, sigma_frac: float = 0.25) -> np.ndarray:
    """Isotropic Gaussian centred on the frame, SD = ``sigma_frac`` x the larger side, sum 1."""
    H, W = shape
    y, x = np.mgrid[0:H, 0:W]
    sd = sigma_frac * max(H, W)
    g = np.exp(-(((y - (H - 1) / 2) ** 2 + (x - (W - 1) / 2) ** 2) / (2 * sd**2)))
    return g / g.sum()


def score_frames(
    maps: np.ndarray,
    counts: np.ndarray,
    *,
    density_sigma: float = DENSITY_SIGMA,
    n_splits: int = N_SPLITS,
    seed: int = SEED,
) -> dict[str, float]:
    """Every metric averaged over frames.

    Parameters
    ----------
    maps : ndarray, shape (T, H, W)
        Saliency maps.
    counts : ndarray, shape (T, H, W)
        Fixation counts per cell (observers gazing there); frames without any
        fixation are skipped. The shuffled-AUC negatives of frame t are the
        fixations of all other frames.

    Returns
    -------
    dict metric name -> mean over frames (NaN-free frames only).
    """
    maps = np.asarray(maps, np.float64)
    counts = np.asarray(counts)
    if maps.shape != counts.shape or maps.ndim != 3:
        raise ValueError(f"maps {maps.shape} and fixation counts {counts.shape} must both be (T, H, W)")
    total = counts.sum(0)
    base = centre_baseline(maps.shape[1:])
    rows: dict[str, list[float]] = {k: [] for k in METRIC_DIRECTIONS}
    for t in range(len(maps)):
        if counts[t].sum() == 0:
            continue
        s, f = maps[t], counts[t]
        dens = fixation_density(f, sigma=density_sigma)
        vals = {
            "AUC-Judd": auc_judd(s, f),
            "AUC-Borji": auc_borji(s, f, n_splits=n_splits, seed=seed + t),
            "sAUC": auc_shuffled(s, f, total - f),
            "NSS": nss(s, f),
            "CC": cc(s, dens),
            "KL": kl_div(s, dens),
            "SIM": similarity(s, dens),
            "IG": information_gain(s, f, base),
        }
        for k, v in vals.items():
            rows[k].append(v)
    return {k: float(np.nanmean(v)) if len(v) and np.isfinite(v).any() else float("nan") for k, v in rows.items()}


def run_metrics(
    feature_stores: Mapping[str, Mapping[str, str]],
    gaze_tables: Mapping[str, str],
    *,
    models: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    out: str | os.PathLike,
    lags_ms: Sequence[float] = LAGS_MS,
    n_negatives: int = N_NEGATIVES,
    min_dist_frac: float = MIN_DIST_FRAC,
    density_sigma: float = DENSITY_SIGMA,
    n_splits: int = N_SPLITS,
    seed: int = SEED,
    in_memory_mb: float | None = None,
) -> pd.DataFrame:
    """Metrics of untuned and tuned maps of every model, as a long table.

    *Untuned* map of frame t: the equal-weight mean of the model's base-map channels
    at t - 100 ms (for ``itti`` this is the saliency map S). *Tuned* map: the
    projection on a Fisher filter trained (:mod:`~psybench.attention.tuning`, as for
    Table 1) on the pooled gaze of all observers on the training movie's even frames. Both
    are scored on the test frames (odd frames when train == test) against all
    observers' gaze.

    Output columns: model, metric, value, direction ('higher'/'lower'), features,
    L, tuning, train, test. ``model`` is ``"<features> L=<L> <tuning>"``.
    ``in_memory_mb``: see :func:`psybench.attention.movies.load_movie` (default
    :data:`~psybench.attention.defaults.IN_MEMORY_MB`).
    """
    rows = []
    in_memory_mb = IN_MEMORY_MB if in_memory_mb is None else in_memory_mb
    movies = load_movies(feature_stores, gaze_tables, in_memory_mb=in_memory_mb)
    for model in models:
        features, L = model["features"], int(model["L"])
        for tr, te in pairs:
            train, test = movies[tr][features], movies[te][features]
            lags = lag_frames(lags_ms, train.frames_per_s)
            fit_frames = train_frames(train.shape[0], lags)
            eval_frames = test_frames(test.shape[0], lags, same_movie=te == tr)
            pos_all, neg_all = [], []
            for i, (_subject, g) in enumerate(train.gaze.groupby("subject", sort=True)):
                Xa, Xo = training_vectors(train, g, fit_frames, lags=lags, L=L, n_negatives=n_negatives,
                                          min_dist_frac=min_dist_frac, seed=seed + i)
                pos_all.append(Xa)
                neg_all.append(Xo)
            w = fisher_filter(np.concatenate(pos_all), np.concatenate(neg_all))
            T, H, W, C = test.shape
            counts = np.zeros((len(eval_frames), H, W))
            g = test.gaze[test.gaze["valid"].astype(bool)]
            g = g[g["frame"].isin(eval_frames)]
            r, c = gaze_cells(g["x"].to_numpy(), g["y"].to_numpy(), source_size=test.source_size, grid_shape=(H, W))
            k = np.searchsorted(eval_frames, g["frame"].to_numpy())
            np.add.at(counts, (k, r, c), 1)
            untuned = np.asarray(test.maps[eval_frames - lags[0]], np.float64).mean(-1)
            tuned = np.concatenate(
                [
                    frame_features(test.maps, eval_frames[a : a + 64], lags=lags, L=L) @ w
                    for a in range(0, len(eval_frames), 64)
                ]
            ).reshape(len(eval_frames), H, W)
            for tuning, maps in (("untuned", untuned), ("tuned", tuned)):
                scores = score_frames(maps, counts, density_sigma=density_sigma, n_splits=n_splits, seed=seed)
                for metric, value in scores.items():
                    rows.append({
                        "model": f"{features} L={L} {tuning}", "metric": metric, "value": value,
                        "direction": METRIC_DIRECTIONS[metric], "features": features, "L": L,
                        "tuning": tuning, "train": tr, "test": te,
                    })
    table = pd.DataFrame(rows)
    write_table(table, out)
    return table
