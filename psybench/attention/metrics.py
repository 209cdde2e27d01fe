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

from psybench.attention import METRICS
from psybench.attention.chance import chance_columns, chance_levels, noise_maps
from psybench.attention.defaults import (
    DEFAULT_EVALUATION,
    DENSITY_SIGMA,
    LAGS_MS,
    N_SPLITS,
    SEED,
    EvaluationSettings,
)
from psybench.attention.gold_standard import density_information_gain, gold_standard_maps
from psybench.attention.map_metrics import (
    EPS,
    auc_borji,
    auc_judd,
    auc_shuffled,
    borji_negatives,
    cc,
    finite_map,
    information_gain,
    kl_div,
    nss,
    shuffled_negatives,
    similarity,
)
from psybench.attention.movies import load_movies
from psybench.attention.split import pair_frames
from psybench.attention.tuning import (
    fisher_filter,
    frame_features,
    gaze_cells,
    lag_frames,
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
    "noise_chance",
    "run_metrics",
    "gather_metrics",
]

#: Direction of each saliency metric, in the order its rows are written (declared once,
#: with label and unit, in psybench.attention.METRICS).
METRIC_DIRECTIONS = {m.name: m.direction for m in METRICS if not m.prefix}


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

    Raises
    ------
    ValueError
        A map holding NaN or infinity on any frame, naming the first such cell
        (:func:`~psybench.attention.map_metrics.finite_map`, as every per-map metric).
    """
    maps = np.asarray(maps, np.float64)
    counts = np.asarray(counts)
    single = maps.ndim == 3
    finite_map(maps, "saliency maps (frame, row, column)" if single else "saliency maps (map, frame, row, column)")
    stack = maps[None] if single else maps
    if stack.ndim != 4 or stack.shape[1:] != counts.shape or counts.ndim != 3:
        raise ValueError(f"maps {maps.shape} and fixation counts {counts.shape} must be (T, H, W) "
                         "(maps also (M, T, H, W))")
    from psybench.attention.stack_metrics import score_stack

    total = counts.sum(0)
    base = centre_baseline(stack.shape[2:])
    densities = fixation_density(counts, sigma=density_sigma)  # every frame's, blurred one by one in one call
    frames = [t for t in range(counts.shape[0]) if counts[t].sum() != 0]
    negs = {}  # frame -> its AUC negatives, drawn with seed + t (one draw serves every map)
    for t in frames:
        f = counts[t]
        negs[t] = (borji_negatives(f.size, int((f > 0).sum()), n_splits=n_splits, seed=seed + t),
                   shuffled_negatives(f, total - f, n_splits=n_splits, seed=seed + t))
    M, K = len(stack), counts[0].size
    values = {k: np.full((M, len(frames)), np.nan) for k in METRIC_DIRECTIONS}  # per map, in frame order
    groups: dict[tuple[int, int], list[int]] = {}  # frames with as many fixated cells and sAUC negatives
    for i, t in enumerate(frames):
        neg_s = negs[t][1]
        groups.setdefault((negs[t][0].shape[1], -1 if neg_s is None else neg_s.shape[1]), []).append(i)
    for (_n, k_s), members in groups.items():  # every map of these frames at once (stack_metrics)
        for a in range(0, len(members), FRAME_BLOCK):
            idx = np.array(members[a : a + FRAME_BLOCK])
            ts = np.array(frames)[idx]
            vals = score_stack(
                stack[:, ts].reshape(M * len(ts), K), _per_map(counts[ts].reshape(len(ts), K) > 0, M),
                _per_map(densities[ts].reshape(len(ts), K), M), base.ravel(),
                borji=_per_map(np.stack([negs[t][0] for t in ts]), M),
                shuffled=None if k_s < 0 else _per_map(np.stack([negs[t][1] for t in ts]), M),
            )
            for k, v in vals.items():
                values[k][:, idx] = v.reshape(M, len(ts))
    rows = [{k: values[k][m] for k in METRIC_DIRECTIONS} for m in range(M)]
    means = [{k: _nanmean(v) for k, v in r.items()} for r in rows]
    return means[0] if single else means


#: Frames scored together in :func:`score_frames` (all maps of each): bounds the comparison arrays.
FRAME_BLOCK = 32


def _per_map(x: np.ndarray, M: int) -> np.ndarray:
    """Frame arrays (n, ...) repeated for each of M maps: (M * n, ...), map-major like the maps' rows."""
    return np.broadcast_to(x[None], (M, *x.shape)).reshape(M * len(x), *x.shape[1:])


def _nanmean(values) -> float:
    v = np.asarray(values, np.float64)
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


#: Metrics that compare a map with the blurred fixation density (their ceiling map is blurred the same way).
DENSITY_METRICS = ("CC", "KL", "SIM")


def loo_ceiling(observer_counts: np.ndarray, *, density_sigma: float = DENSITY_SIGMA, n_splits: int = N_SPLITS,
                seed: int = SEED) -> dict[str, float]:
    """Leave-one-observer-out ceiling: the others' fixation density predicting each observer.

    Parameters
    ----------
    observer_counts : ndarray, shape (N, T, H, W)
        Fixation counts of each of N >= 2 observers per frame and cell.

    Returns
    -------
    dict metric name -> mean over observers of :func:`score_frames` of the held-out
    observer's gold-standard density (:func:`psybench.attention.gold_standard.gold_standard_maps`:
    the other observers' fixations, kernel bandwidth and mix with a uniform density
    chosen by cross-validation on the others) against the held-out observer's counts
    (frames the others never fixate are skipped).
    """
    oc = np.asarray(observer_counts, np.float64)
    if oc.ndim != 4 or oc.shape[0] < 2:
        raise ValueError(f"loo_ceiling needs (N >= 2, T, H, W) observer counts, got shape {oc.shape}")
    total = oc.sum(0)
    gold = gold_standard_maps(oc)  # regularised, cross-validated on the others (psybench.attention.gold_standard)
    per_obs: dict[str, list[float]] = {k: [] for k in METRIC_DIRECTIONS}
    for o in range(oc.shape[0]):
        rest = total - oc[o]
        held = np.where(rest.sum((1, 2))[:, None, None] > 0, oc[o], 0.0)
        # metric-specific maps (Kummerer, Wallis & Bethge 2018, ECCV): CC, KL and SIM compare the map with the
        # fixations blurred by density_sigma, whose expectation under the density p is p blurred the same way
        raw, blurred = score_frames(np.stack([gold[o], fixation_density(gold[o], sigma=density_sigma)]), held,
                                    density_sigma=density_sigma, n_splits=n_splits, seed=seed)
        for k in per_obs:
            per_obs[k].append((blurred if k in DENSITY_METRICS else raw)[k])
        if "IG" in per_obs:  # the density scored as one (its uniform floor kept; psybench.attention.gold_standard)
            per_obs["IG"][-1] = density_information_gain(gold[o], held, centre_baseline(oc.shape[2:]))
    return {k: _nanmean(v) for k, v in per_obs.items()}


def noise_chance(counts: np.ndarray, *, density_sigma: float = DENSITY_SIGMA, n_splits: int = N_SPLITS,
                 seed: int = SEED) -> tuple[dict[str, float], dict[str, float]]:
    """Chance level and its SE per metric on ``counts`` (T, H, W): :func:`psybench.attention.chance.chance_levels`
    of seeded noise maps scored as the models are (same fixations, negatives and settings)."""
    scored = score_frames(noise_maps(np.shape(counts), seed=seed), counts, density_sigma=density_sigma,
                          n_splits=n_splits, seed=seed)
    return chance_levels(counts, scored)


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
    train: str | None = None,
    lags_ms: Sequence[float] = LAGS_MS,
    evaluation: EvaluationSettings | Mapping[str, Any] = DEFAULT_EVALUATION,
    density_sigma: float = DENSITY_SIGMA,
    n_splits: int = N_SPLITS,
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
    ``evaluation``: the settings the tuned maps share with Table 1 (negatives, their
    distance, seed; ``in_memory_mb``, see :func:`psybench.attention.movies.load_movie`),
    or the ``attention.evaluation`` section they are built from.

    ``train``: only the pairs training on this movie (a part of the table, one job per
    training movie in the workflow; :func:`gather_metrics` joins the parts). Each pair's
    rows depend on that pair alone (its maps, fixations, ceiling and per-frame seeds),
    so the parts hold the very rows of the whole table.
    """
    if train is not None:
        pairs = [(tr, te) for tr, te in pairs if tr == train]
        if not pairs:
            raise ValueError(f"attention.pairs has no pair training on movie {train!r}")
        used = {m for pair in pairs for m in pair}
        feature_stores = {m: stores for m, stores in feature_stores.items() if m in used}
    ceilings: dict[tuple[str, bytes], dict[str, float]] = {}  # (test movie, test frames) -> ceiling
    evaluation = EvaluationSettings.from_config(evaluation)
    n_negatives, min_dist_frac, seed = evaluation.n_negatives, evaluation.min_dist_frac, evaluation.seed
    movies = load_movies(feature_stores, gaze_tables, in_memory_mb=evaluation.in_memory_mb)
    scores: dict[tuple[int, int], list[dict[str, float]]] = {}  # (model, pair) -> [untuned, tuned]
    keys: dict[tuple[int, int], tuple[str, bytes]] = {}
    chances: dict[tuple[str, bytes], tuple[dict[str, float], dict[str, float]]] = {}  # same keys as ceilings
    for p, (tr, te) in enumerate(pairs):  # each model on its own split's test frames (negatives: fixations only)
        for m, model in enumerate(models):
            maps = []
            features, L = model["features"], int(model["L"])
            train, test = movies[tr][features], movies[te][features]
            lags = lag_frames(lags_ms, train.frames_per_s)
            fit_frames, eval_frames, _gap = pair_frames(train, test, lags, evaluation)
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
            keys[m, p] = key = (te, eval_frames.tobytes())
            if key not in ceilings:
                ceilings[key] = loo_ceiling(per_observer, density_sigma=density_sigma, n_splits=n_splits, seed=seed)
                chances[key] = noise_chance(per_observer.sum(0), density_sigma=density_sigma, n_splits=n_splits,
                                            seed=seed)
            scores[m, p] = score_frames(np.stack(maps), per_observer.sum(0), density_sigma=density_sigma,
                                        n_splits=n_splits, seed=seed)
    rows = []
    for m, model in enumerate(models):
        features, L = model["features"], int(model["L"])
        for p, (tr, te) in enumerate(pairs):
            ceiling, (chance, chance_se) = ceilings[keys[m, p]], chances[keys[m, p]]
            for tuning, values in zip(("untuned", "tuned"), scores[m, p]):
                for metric, value in values.items():
                    rows.append({
                        "model": f"{features} L={L} {tuning}", "metric": metric, "value": value,
                        "direction": METRIC_DIRECTIONS[metric], "features": features, "L": L,
                        "tuning": tuning, "train": tr, "test": te, "ceiling": ceiling[metric],
                        **chance_columns(metric, value, chance, chance_se, ceiling[metric]),
                    })
    table = pd.DataFrame(rows)
    write_table(table, out)
    return table


def gather_metrics(
    parts: Mapping[str, str | os.PathLike],
    *,
    models: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    out: str | os.PathLike,
    maps: Sequence[str | os.PathLike] = (),
    data: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Join the parts of :func:`run_metrics` (``train=``) into the table :func:`run_metrics` writes for all pairs.

    ``maps``: tables of map-output models' rows
    (:func:`psybench.attention.map_models.map_model_rows`), appended in the order given
    after the tuned models' rows.

    Parameters
    ----------
    parts : mapping training movie -> its part's table path
    models, pairs : as given to :func:`run_metrics`; the rows come in their order
        (model, then pair, then tuning and metric as in the part).
    data : mapping movie -> 'recorded' or 'synthetic', optional
        A last column ``data`` (:func:`psybench.attention.data_kind.with_data_column`).
    """
    from psybench.attention.data_kind import with_data_column
    from psybench.io.tables import read_table

    read = {tr: read_table(path) for tr, path in parts.items()}
    rows = []
    for model in models:
        features, L = model["features"], int(model["L"])
        for tr, te in pairs:
            if tr not in read:
                raise ValueError(f"no metrics part of training movie {tr!r}")
            t = read[tr]
            sel = t[(t["features"] == features) & (t["L"] == L) & (t["train"] == tr) & (t["test"] == te)]
            if sel.empty:
                raise ValueError(f"metrics part of {tr!r} has no rows of model {features!r} L={L} tested on {te!r}")
            rows.extend(sel.to_dict("records"))  # Python scalars: the frame is built as run_metrics builds it
    for path in maps:
        rows.extend({**r, "L": None} for r in read_table(path).to_dict("records"))
    table = pd.DataFrame(rows)
    if maps:  # L empty for a map model (no neighbourhood), the other rows' L still integers
        table["L"] = table["L"].astype("Int64")
    table = with_data_column(table, data)
    write_table(table, out)
    return table
