"""Standard saliency metrics (beyond the paper) of the attention models, with a human ceiling.

The per-map metrics follow the MIT saliency benchmark's definitions on every map,
tied maps included (Bylinskii et al. 2019, IEEE TPAMI 41(3); definitions, variants
and the one departure in :mod:`~psybench.attention.map_metrics`). Here they are
averaged over frames (:func:`score_frames`) and computed for every configured model
(:func:`run_metrics`).

The fixation density map is the fixation count map blurred by a Gaussian of
``density_sigma`` cells (1 cell on the 40x30 grid). The IG baseline is a centre-bias
prior fixed in advance (:func:`centre_baseline`, not fitted to any gaze).

Ceiling: the leave-one-observer-out gold standard (Kummerer, Wallis & Bethge 2015,
PNAS 112(52), "gold standard"; Bylinskii et al. 2019 sec. 3): for each observer, the
fixation density of the *other* observers on each frame is the map, scored with the
same metrics against the held-out observer's gaze; the mean over observers is the
movie's ceiling (:func:`loo_ceiling`), reported in the ``ceiling`` column next to
every model's value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.defaults import DENSITY_SIGMA, IN_MEMORY_MB, LAGS_MS, MIN_DIST_FRAC, N_NEGATIVES, N_SPLITS, SEED
from psybench.attention.map_metrics import (
    EPS,
    auc_borji,
    auc_judd,
    auc_shuffled,
    borji_negatives,
    cc,
    information_gain,
    kl_div,
    nss,
    shuffled_negatives,
    similarity,
)
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
    "loo_ceiling",
    "observer_counts",
    "run_metrics",
]

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


def fixation_density(counts: np.ndarray, *, sigma: float = DENSITY_SIGMA) -> np.ndarray:
    """Fixation count map blurred by a Gaussian of ``sigma`` cells (constant-zero border).

    ``counts``: shape (H, W), or (..., H, W) for a stack of maps blurred one by one
    (the same numbers as map by map, in one call).
    """
    from scipy import ndimage  # here: the Table 1 gather and the score rows import this module, and blur nothing

    return ndimage.gaussian_filter(np.asarray(counts, np.float64), sigma=sigma, mode="constant", axes=(-2, -1))


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
) -> dict[str, float] | list[dict[str, float]]:
    """Every metric averaged over frames, of one map sequence or of several against the same fixations.

    Parameters
    ----------
    maps : ndarray, shape (T, H, W) or (M, T, H, W)
        Saliency maps (of M models).
    counts : ndarray, shape (T, H, W)
        Fixation counts per cell (observers gazing there); frames without any
        fixation are skipped. The shuffled-AUC negatives of frame t are the cells
        fixated on all other frames.
    seed : int
        The random draws of AUC-Borji and sAUC on frame t use ``seed + t``; they
        depend on the fixations only, so they are drawn once per frame for all M maps.

    Returns
    -------
    dict metric name -> mean over frames (NaN-free frames only); a list of M such
    dicts for a stack of maps.
    """
    maps = np.asarray(maps, np.float64)
    counts = np.asarray(counts)
    single = maps.ndim == 3
    stack = maps[None] if single else maps
    if stack.ndim != 4 or stack.shape[1:] != counts.shape or counts.ndim != 3:
        raise ValueError(f"maps {maps.shape} and fixation counts {counts.shape} must be (T, H, W) "
                         "(maps also (M, T, H, W))")
    total = counts.sum(0)
    base = centre_baseline(stack.shape[2:])
    rows: list[dict[str, list[float]]] = [{k: [] for k in METRIC_DIRECTIONS} for _ in stack]
    densities = fixation_density(counts, sigma=density_sigma)  # every frame's, blurred one by one in one call
    for t in range(counts.shape[0]):
        f = counts[t]
        if f.sum() == 0:
            continue
        dens = densities[t]
        neg_b = borji_negatives(f.size, int((f > 0).sum()), n_splits=n_splits, seed=seed + t)
        neg_s = shuffled_negatives(f, total - f, n_splits=n_splits, seed=seed + t)
        for m, out in zip(stack, rows):
            s = m[t]
            vals = {
                "AUC-Judd": auc_judd(s, f),
                "AUC-Borji": auc_borji(s, f, negatives=neg_b),
                "sAUC": auc_shuffled(s, f, total - f, negatives=neg_s) if neg_s is not None else float("nan"),
                "NSS": nss(s, f),
                "CC": cc(s, dens),
                "KL": kl_div(s, dens),
                "SIM": similarity(s, dens),
                "IG": information_gain(s, f, base),
            }
            for k, v in vals.items():
                out[k].append(v)
    means = [{k: _nanmean(v) for k, v in r.items()} for r in rows]
    return means[0] if single else means


def _nanmean(values) -> float:
    v = np.asarray(values, np.float64)
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def loo_ceiling(observer_counts: np.ndarray, *, density_sigma: float = DENSITY_SIGMA, n_splits: int = N_SPLITS,
                seed: int = SEED) -> dict[str, float]:
    """Leave-one-observer-out ceiling: the others' fixation density predicting each observer.

    Parameters
    ----------
    observer_counts : ndarray, shape (N, T, H, W)
        Fixation counts of each of N >= 2 observers per frame and cell.

    Returns
    -------
    dict metric name -> mean over observers of :func:`score_frames` of the map
    ``fixation_density(sum of the other observers' counts)`` against the held-out
    observer's counts (frames the others never fixate give no map and are skipped).
    """
    oc = np.asarray(observer_counts, np.float64)
    if oc.ndim != 4 or oc.shape[0] < 2:
        raise ValueError(f"loo_ceiling needs (N >= 2, T, H, W) observer counts, got shape {oc.shape}")
    total = oc.sum(0)
    per_obs: dict[str, list[float]] = {k: [] for k in METRIC_DIRECTIONS}
    for o in range(oc.shape[0]):
        rest = total - oc[o]
        held = np.where(rest.sum((1, 2))[:, None, None] > 0, oc[o], 0.0)
        maps = fixation_density(rest, sigma=density_sigma)
        for k, v in score_frames(maps, held, density_sigma=density_sigma, n_splits=n_splits, seed=seed).items():
            per_obs[k].append(v)
    return {k: _nanmean(v) for k, v in per_obs.items()}


def observer_counts(movie, frames: np.ndarray) -> np.ndarray:
    """Valid gaze of each observer of ``movie`` as fixation counts, shape (N, len(frames), H, W)."""
    _T, H, W, _C = movie.shape
    g = movie.gaze[movie.gaze["valid"].astype(bool)]
    g = g[g["frame"].isin(frames)]
    subjects = np.sort(movie.gaze["subject"].unique())
    out = np.zeros((len(subjects), len(frames), H, W))
    r, c = gaze_cells(g["x"].to_numpy(), g["y"].to_numpy(), source_size=movie.source_size, grid_shape=(H, W))
    np.add.at(out, (np.searchsorted(subjects, g["subject"].to_numpy()), np.searchsorted(frames, g["frame"].to_numpy()),
                    r, c), 1)
    return out


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
    L, tuning, train, test, ceiling (the leave-one-observer-out ceiling of the test
    frames of the test movie, :func:`loo_ceiling`). ``model`` is ``"<features> L=<L> <tuning>"``.
    ``in_memory_mb``: see :func:`psybench.attention.movies.load_movie` (default
    :data:`~psybench.attention.defaults.IN_MEMORY_MB`).
    """
    ceilings: dict[tuple[str, bool], dict[str, float]] = {}
    in_memory_mb = IN_MEMORY_MB if in_memory_mb is None else in_memory_mb
    movies = load_movies(feature_stores, gaze_tables, in_memory_mb=in_memory_mb)
    scores: dict[tuple[int, int], list[dict[str, float]]] = {}  # (model, pair) -> [untuned, tuned]
    for p, (tr, te) in enumerate(pairs):  # all models of a pair scored together: shared random negatives
        maps = []
        for model in models:
            features, L = model["features"], int(model["L"])
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
            maps.append(np.asarray(test.maps[eval_frames - lags[0]], np.float64).mean(-1))  # untuned
            maps.append(np.concatenate(
                [
                    frame_features(test.maps, eval_frames[a : a + 64], lags=lags, L=L) @ w
                    for a in range(0, len(eval_frames), 64)
                ]
            ).reshape(len(eval_frames), H, W))  # tuned
        per_observer = observer_counts(test, eval_frames)
        key = (te, te == tr)
        if key not in ceilings:
            ceilings[key] = loo_ceiling(per_observer, density_sigma=density_sigma, n_splits=n_splits, seed=seed)
        flat = score_frames(np.stack(maps), per_observer.sum(0), density_sigma=density_sigma, n_splits=n_splits,
                            seed=seed)
        for m in range(len(models)):
            scores[m, p] = flat[2 * m : 2 * m + 2]
    rows = []
    for m, model in enumerate(models):
        features, L = model["features"], int(model["L"])
        for p, (tr, te) in enumerate(pairs):
            ceiling = ceilings[(te, te == tr)]
            for tuning, values in zip(("untuned", "tuned"), scores[m, p]):
                for metric, value in values.items():
                    rows.append({
                        "model": f"{features} L={L} {tuning}", "metric": metric, "value": value,
                        "direction": METRIC_DIRECTIONS[metric], "features": features, "L": L,
                        "tuning": tuning, "train": tr, "test": te, "ceiling": ceiling[metric],
                    })
    table = pd.DataFrame(rows)
    write_table(table, out)
    return table
