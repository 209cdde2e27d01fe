"""The leave-one-observer-out gold standard: a regularised density of the other observers' fixations.

Kummerer, Wallis & Bethge (2015, PNAS 112(52), "gold standard") predict each observer's
fixations by a kernel density of the *other* observers' fixations, regularised by a mix
with a uniform density, its bandwidth and mixing weight fitted by cross-validation;
Bylinskii et al. (2019, IEEE TPAMI 41(3), sec. 3) use the same construction as the
benchmarks' ceiling. Unregularised blurred counts are zero where a held-out fixation
falls alone and give "ceilings" below chance on KL, IG and SIM.

Here, per frame on the model grid::

    p_o(t) = (1 - w) * G_b * c_rest(t) / |c_rest(t)| + w / K

with ``c_rest`` the other observers' fixation counts, ``G_b`` a Gaussian of ``b`` cells
(zero border, renormalised), K the grid's cells. (b, w) is chosen on the other
observers only (:func:`choose_regularisation`): the pair from :data:`BANDWIDTHS` x
:data:`UNIFORM_WEIGHTS` that maximises the log-likelihood of each of them under the
density of the rest of them (leave one out within the others); ``w = 1`` (the uniform
density, chance) is a candidate, so the choice never prefers a density that predicts
held-out people worse than chance does. With a single other observer there is no one to
cross-validate on, and (DENSITY_SIGMA, 0.5) is used.

Compared with pysaliency's gold standard (``pysaliency.baseline_utils``, read, not
copied): it fits bandwidth and uniform (and centre-bias) weights once for a whole data
set by a continuous optimiser on log-likelihood over images and pixels; here the
parameters are chosen for each held-out observer from a small grid, on the 40x30 cells
of the model grid and per movie frame, without a centre-bias component (the IG baseline
is the fixed centre prior of :func:`psybench.attention.metrics.centre_baseline`, and a
ceiling fitted towards it would mix the baseline into the reference).

Table 1's ceiling (:func:`rank_ceilings`) ranks each held-out observer's gazed cell on
this density (Shic & Scassellati 2007, sec. 5.2 rank percentile). Ranks ignore the
uniform part of the mix unless it is the whole density, and cells beyond the kernel's
reach tie at the bottom, below the mid-rank's 50 %: where the others predict an
observer's gaze worse than chance on most frames, the density's median rank is below
chance although predicting nothing (the uniform density, 50 % on every frame) is a
candidate of the gold standard. The choice between the two is cross-validated in
time: on each of :data:`RANK_FOLDS` contiguous blocks of the frames, the density is
kept where the observer's median rank on it over the *other* blocks reaches 50 %, and
the uniform density is used otherwise.
"""

from __future__ import annotations

import numpy as np

from psybench.attention.defaults import DENSITY_SIGMA, TIES
from psybench.attention.rank_counts import percentiles_from_counts, rank_counts

__all__ = ["BANDWIDTHS", "UNIFORM_WEIGHTS", "RANK_FOLDS", "regularised_density", "choose_regularisation",
           "gold_standard_maps", "rank_ceilings", "density_information_gain"]

#: Kernel bandwidths (grid cells) tried by the cross-validation.
BANDWIDTHS = (0.5, 1.0, 2.0, 4.0)
#: Weights of the uniform density tried by the cross-validation (1 = the uniform density itself).
UNIFORM_WEIGHTS = (0.001, 0.01, 0.03, 0.1, 0.3, 0.6, 1.0)
#: Contiguous blocks of frames over which :func:`rank_ceilings` cross-validates density against chance.
RANK_FOLDS = 2


def _blurred(counts: np.ndarray, bandwidth: float) -> np.ndarray:
    """Each frame's counts blurred and normalised to sum 1 (0 where a frame has no fixation)."""
    from scipy import ndimage

    b = ndimage.gaussian_filter(np.asarray(counts, np.float64), sigma=bandwidth, mode="constant", axes=(-2, -1))
    s = b.sum((-2, -1), keepdims=True)
    return np.divide(b, s, out=np.zeros_like(b), where=s > 0)


def regularised_density(counts: np.ndarray, *, bandwidth: float, weight: float) -> np.ndarray:
    """``(1 - weight) * blur(counts) + weight * uniform`` per frame, each frame summing to 1.

    ``counts``: (T, H, W). A frame without fixations gets the uniform density.
    """
    d = _blurred(counts, bandwidth)
    K = d.shape[-1] * d.shape[-2]
    empty = d.sum((-2, -1), keepdims=True) == 0
    return np.where(empty, 1.0 / K, (1 - weight) * d + weight / K)


def choose_regularisation(observer_counts: np.ndarray) -> tuple[float, float]:
    """(bandwidth, uniform weight) maximising the leave-one-out log-likelihood among these observers.

    ``observer_counts``: (N, T, H, W). Each observer's fixations are scored under the
    density of the others' (:func:`regularised_density`); the log-likelihoods are
    summed over observers, frames and fixations. With N < 2: (DENSITY_SIGMA, 0.5).
    """
    oc = np.asarray(observer_counts, np.float64)
    if oc.shape[0] < 2:
        return float(DENSITY_SIGMA), 0.5
    K = oc.shape[-1] * oc.shape[-2]
    total = oc.sum(0)
    score = np.zeros((len(BANDWIDTHS), len(UNIFORM_WEIGHTS)))
    for j in range(oc.shape[0]):
        held = oc[j]
        if held.sum() == 0:
            continue
        rest = total - held
        empty = rest.sum((-2, -1)) == 0
        for a, b in enumerate(BANDWIDTHS):
            d = _blurred(rest, b)[held > 0]  # density of the others at the held-out fixations
            n = held[held > 0]
            flat = np.repeat(empty, held.shape[-2] * held.shape[-1]).reshape(held.shape)[held > 0]
            for c, w in enumerate(UNIFORM_WEIGHTS):
                p = np.where(flat, 1.0 / K, (1 - w) * d + w / K)
                score[a, c] += float((n * np.log(p)).sum())
    a, c = np.unravel_index(int(np.argmax(score)), score.shape)
    return float(BANDWIDTHS[a]), float(UNIFORM_WEIGHTS[c])


def gold_standard_maps(observer_counts: np.ndarray) -> np.ndarray:
    """Each observer's gold-standard density: (N, T, H, W), from the others only (module docstring)."""
    oc = np.asarray(observer_counts, np.float64)
    total = oc.sum(0)
    out = np.empty_like(oc)
    for o in range(oc.shape[0]):
        others = np.delete(oc, o, axis=0)
        bandwidth, weight = choose_regularisation(others)
        out[o] = regularised_density(total - oc[o], bandwidth=bandwidth, weight=weight)
    return out


def rank_ceilings(observer_counts: np.ndarray, *, ties: str = TIES, folds: int = RANK_FOLDS) -> np.ndarray:
    """Each observer's median rank percentile (%) on the gold standard of the others (module docstring).

    ``observer_counts``: (N, T, H, W), one gazed cell per observer and frame at most
    (:func:`psybench.attention.metrics.observer_counts`). Per observer, over the frames
    the observer fixates: the rank percentile of the gazed cell on
    :func:`gold_standard_maps` (mid-rank ties: 50 % on a frame the others do not fixate),
    replaced by 50 % on each of ``folds`` contiguous blocks of frames where the median
    over the other blocks is below 50 %; then the median over frames. Shape (N,); NaN
    for an observer without fixations, all NaN with fewer than two observers.
    """
    oc = np.asarray(observer_counts, np.float64)
    out = np.full(oc.shape[0], np.nan)
    if oc.shape[0] < 2:
        return out
    gold = gold_standard_maps(oc)
    K = oc.shape[-1] * oc.shape[-2]
    for o in range(oc.shape[0]):
        on = oc[o].reshape(oc.shape[1], K)
        t = np.flatnonzero(on.sum(1) > 0)
        if not t.size:
            continue
        S = gold[o].reshape(oc.shape[1], K)[t][..., None]
        R = percentiles_from_counts(*rank_counts(S, on[t].argmax(1)[:, None]), K, ties=ties)[:, 0, 0]
        chosen = R.copy()
        blocks = np.array_split(np.arange(t.size), min(folds, t.size))
        for b in blocks if len(blocks) > 1 else ():
            rest = np.setdiff1d(np.arange(t.size), b)
            if np.median(R[rest]) < 0.5:
                chosen[b] = 0.5
        out[o] = float(np.median(chosen)) * 100
    return out


def density_information_gain(density: np.ndarray, counts: np.ndarray, baseline: np.ndarray) -> float:
    """Information gain (bits per fixated cell) of per-frame densities over ``baseline``, mean over frames.

    ``density``: (T, H, W), each frame summing to 1, taken as it is; ``counts``: (T, H, W),
    cells > 0 fixated (each once, as :func:`psybench.attention.map_metrics.information_gain`);
    ``baseline``: (H, W), range- then sum-normalised as there. MIT's IG range-normalises the
    map too, which sets a regularised density's uniform floor to 0 (about -52 bits at a lone
    fixation) and undoes the regularisation; the gold standard is a density, so it is
    scored as one (Kummerer, Wallis & Bethge 2015 define IG on densities).
    """
    from psybench.attention.map_metrics import EPS

    b = np.asarray(baseline, np.float64)
    b = b - b.min()
    b = b / b.sum() if b.sum() > 0 else np.full_like(b, 1.0 / b.size)
    gains = []
    for p, c in zip(np.asarray(density, np.float64), np.asarray(counts)):
        f = c > 0
        if f.any():
            gains.append(float((np.log2(EPS + p[f]) - np.log2(EPS + b[f])).mean()))
    return float(np.mean(gains)) if gains else float("nan")
