"""Per-map saliency metrics with the MIT saliency benchmark's definitions.

Each function scores one map (one frame) and follows the MATLAB code of the MIT
saliency benchmark (Bylinskii, Judd, Oliva, Torralba & Durand 2019, "What do
different evaluation metrics tell us about saliency models?", IEEE TPAMI 41(3),
sec. 3 and the benchmark's ``code_forMetrics``) on every map, tied and degenerate
maps included. ``fixations`` is a fixation map of the same shape as the map; as in
the MIT code it is used as a binary map (cells > 0 are fixated, each counted once).

Defaults (the names the metrics table uses):

* AUC-Judd (:func:`auc_judd`) -- thresholds at the map values of the fixated cells,
  TP = fixated cells at or above, FP = other cells at or above, trapezoid area. MIT
  breaks ties by adding ``U(0, 1e-7)`` jitter to the map; this function returns the
  *expectation* of that score over the jitter, exactly (derivation in the Notes of
  :func:`auc_judd`), so it is deterministic and free of sampling error.
  :func:`auc_judd_jitter` is MIT's literal seeded jitter.
* AUC-Borji (:func:`auc_borji`) -- map range-normalised; negatives are ``n_fix``
  cells drawn uniformly with replacement; thresholds ``0:step:max``; mean over
  ``n_splits`` draws.
* sAUC (:func:`auc_shuffled`) -- as AUC-Borji, but the negatives are
  ``min(n_fix, n_other)`` distinct cells fixated on other frames, drawn without
  replacement.
* NSS -- mean at the fixated cells of the map z-scored with the sample SD (ddof 1,
  MATLAB's ``std``).
* CC -- Pearson correlation of the map and the fixation density.
* KL -- ``sum Q log(eps + Q / (P + eps))``, map and density each divided by its sum
  (a zero map stays zero), eps = 2^-52 (MATLAB's ``eps``).
* SIM -- ``sum min(P, Q)``, *both* the map and the fixation density range-normalised
  to [0, 1] and then divided by their sum (a zero map stays zero).
* IG -- mean over fixated cells of ``log2(eps + P) - log2(eps + B)``, map *and
  baseline* range-normalised, then sum-normalised (Kummerer, Wallis & Bethge 2015,
  PNAS 112(52); MIT's ``InfoGain.m``).

Degenerate maps give what MIT's code gives: a constant map has no NSS, CC, SIM or
IG (NaN), AUC-Borji/sAUC 0.5 and AUC-Judd (with jitter) above 0.5.

A map holding NaN or infinity (a saliency map, fixation density or baseline) is an
error (:func:`finite_map`, ``ValueError`` naming the map and its first bad cell) in
every function here and in the stack path of the workflow
(:func:`psybench.attention.stack_metrics.score_stack`,
:func:`psybench.attention.metrics.score_frames`). MIT's code has no single answer for
such a map (NaN from its NSS and CC, a finite KL, an AUC-Judd from wherever ``sort``
puts the NaN), so no number is given for it.

Variants, under their own names (not in the default table):
:func:`auc_judd_no_jitter` (ties counted as above, no jitter),
:func:`auc_shuffled_rank` (exact Mann-Whitney rank AUC, ties 1/2, all other
fixations with multiplicity), :func:`similarity_sum_normalised` and
:func:`information_gain_sum_normalised` (no range normalisation of the density /
baseline). The single departure from MIT: KL of a map with negative values (where
MIT's ``KLdiv.m`` takes the log of a negative number) range-normalises the map first.
"""

from __future__ import annotations

import numpy as np

from psybench.attention.defaults import N_SPLITS, SEED

__all__ = [
    "EPS",
    "finite_map",
    "JITTER",
    "auc_judd",
    "auc_judd_jitter",
    "auc_judd_no_jitter",
    "auc_borji",
    "auc_shuffled",
    "borji_negatives",
    "shuffled_negatives",
    "auc_shuffled_rank",
    "nss",
    "cc",
    "kl_div",
    "similarity",
    "similarity_sum_normalised",
    "information_gain",
    "information_gain_sum_normalised",
]

#: MATLAB's ``eps`` (2^-52), the regulariser of KL and IG in the MIT code.
EPS = float(np.finfo(np.float64).eps)
#: Upper bound of MIT's AUC-Judd tie-breaking jitter (``rand / 10000000``).
JITTER = 1e-7


def finite_map(m, what: str = "saliency map") -> np.ndarray:
    """``m`` as a float64 array; ``ValueError`` naming ``what`` and its first cell when it holds NaN or infinity."""
    m = np.asarray(m, np.float64)
    bad = ~np.isfinite(m)
    if bad.any():
        cell = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{what} holds {int(bad.sum())} non-finite value(s) (NaN or inf), the first at cell "
                         f"{cell}: metrics need a finite map")
    return m


def _mask(fix, shape) -> np.ndarray:
    fix = np.asarray(fix)
    if fix.shape != tuple(shape):
        raise ValueError(f"fixation map of shape {fix.shape} does not match the saliency map {tuple(shape)}")
    return fix > 0


def _range(s: np.ndarray) -> np.ndarray:
    """Min-max scaling to [0, 1]; a constant map becomes NaN (MIT's 0/0)."""
    s = np.asarray(s, np.float64)
    lo, hi = s.min(), s.max()
    return (s - lo) / (hi - lo) if hi > lo else np.full_like(s, np.nan)


def _unit(s: np.ndarray) -> np.ndarray:
    """Min-max scaling to [0, 1]; a constant map becomes 0 (where only the order matters)."""
    s = np.asarray(s, np.float64)
    lo, hi = s.min(), s.max()
    return (s - lo) / (hi - lo) if hi > lo else np.zeros_like(s)


def _sum1(m: np.ndarray) -> np.ndarray:
    """Divide by the sum; a zero map stays zero (MIT's ``if any(map(:))``)."""
    m = np.asarray(m, np.float64)
    return m / m.sum() if m.any() else m


def _range_sum1(m: np.ndarray) -> np.ndarray:
    """MIT's distribution: range-normalised then sum-normalised; a zero map stays zero."""
    m = np.asarray(m, np.float64)
    return _sum1(_range(m)) if m.any() else m


def _rank_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Mann-Whitney AUC: P(pos > neg) + P(pos = neg) / 2."""
    pos = np.asarray(pos, np.float64)
    neg = np.sort(np.asarray(neg, np.float64))
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    lower = np.searchsorted(neg, pos, side="left")
    upper = np.searchsorted(neg, pos, side="right")
    return float(np.mean((lower + 0.5 * (upper - lower)) / neg.size))


def _judd_curve(s: np.ndarray, f: np.ndarray) -> float:
    """Judd's ROC area of a flat map ``s`` and boolean mask ``f`` (ties counted as above)."""
    n_fix, n_pix = int(f.sum()), s.size
    th = np.sort(s[f])[::-1]
    above = np.searchsorted(np.sort(s), th, side="left")
    above = n_pix - above
    i = np.arange(1, n_fix + 1)
    tp = np.concatenate([[0.0], i / n_fix, [1.0]])
    fp = np.concatenate([[0.0], (above - i) / (n_pix - n_fix), [1.0]])
    return float(np.trapezoid(tp, fp))


def auc_judd(saliency: np.ndarray, fixations: np.ndarray) -> float:
    """AUC-Judd: the expectation of MIT's jittered score, computed exactly.

    Parameters
    ----------
    saliency : ndarray, shape (H, W)
    fixations : ndarray, shape (H, W)
        Fixation map; cells > 0 are fixated.

    Returns
    -------
    float
        NaN without fixations or without non-fixated cells.

    Notes
    -----
    Once the jitter has made all values distinct, Judd's curve has a point at each
    of the ``n`` fixated values; its trapezoids give every non-fixated cell that lies
    above the lowest fixated value half a fixation more than the exact ROC area, so
    ``AUC-Judd = AUC_MW + A / (2 n m)`` with ``AUC_MW`` the Mann-Whitney area, ``m`` the
    non-fixated cells and ``A`` those above the lowest fixated value. Over random
    tie-breaking, ``E[AUC_MW]`` counts tied pairs 1/2, and a non-fixated cell tied with
    the ``k`` lowest fixated cells lies above the lowest of them with probability
    ``k / (k + 1)``. This equals the mean of MIT's score wherever distinct map values
    are more than the jitter (1e-7) apart.
    """
    s = finite_map(saliency).ravel()
    f = _mask(fixations, np.shape(saliency)).ravel()
    n, m = int(f.sum()), int((~f).sum())
    if n == 0 or m == 0:
        return float("nan")
    pos, neg = s[f], s[~f]
    low = pos.min()
    k = int((pos == low).sum())
    above = (neg > low).sum() + (neg == low).sum() * k / (k + 1)
    return _rank_auc(pos, neg) + float(above) / (2 * n * m)


def auc_judd_jitter(saliency: np.ndarray, fixations: np.ndarray, *, seed: int = SEED) -> float:
    """MIT's AUC-Judd literally: ``U(0, 1e-7)`` jitter (seeded), range-normalise, Judd's curve."""
    s = finite_map(saliency)
    f = _mask(fixations, s.shape).ravel()
    if not f.any() or f.all():
        return float("nan")
    s = _unit(s + np.random.default_rng(seed).random(s.shape) * JITTER).ravel()
    return _judd_curve(s, f)


def auc_judd_no_jitter(saliency: np.ndarray, fixations: np.ndarray) -> float:
    """Variant: Judd's curve without jitter (tied cells all counted as above; may exceed an FP rate of 1)."""
    s = finite_map(saliency)
    f = _mask(fixations, s.shape).ravel()
    if not f.any() or f.all():
        return float("nan")
    return _judd_curve(s.ravel(), f)


def _stepped_auc(pos: np.ndarray, negs: np.ndarray, step: float) -> float:
    """Borji's ROC area, mean over splits: thresholds ``0:step:max`` of a [0, 1] map, TP/FP at or above.

    ``pos`` (n,) are the fixated values, ``negs`` (n_splits, m) each split's
    negatives. One threshold grid up to the largest value of all splits serves every
    split: thresholds above a split's own maximum add (0, 0) points, of zero area.
    """
    top = max(pos.max(), negs.max())
    th = np.arange(int(np.floor(top / step + 1e-9)) + 1)[::-1] * step if np.isfinite(top) else np.array([np.nan])
    tp = np.concatenate([[0.0], (pos[None] >= th[:, None]).mean(1), [1.0]])
    fp = (negs[:, None, :] >= th[None, :, None]).mean(2)
    fp = np.concatenate([np.zeros((len(negs), 1)), fp, np.ones((len(negs), 1))], axis=1)
    return float(np.mean(np.trapezoid(tp[None, :], fp, axis=1)))


def auc_borji(saliency: np.ndarray, fixations: np.ndarray, *, n_splits: int = N_SPLITS, step: float = 0.1,
              seed: int = SEED, negatives: np.ndarray | None = None) -> float:
    """AUC-Borji (MIT's ``AUC_Borji.m``).

    Negatives of split ``k``: ``default_rng(seed).integers(0, H * W, size=(n_splits,
    n_fix))[k]`` (flat cell indices, with replacement); ``n_fix`` = fixated cells.
    ``negatives``: those indices already drawn (:func:`borji_negatives`).
    """
    s = _range(finite_map(saliency)).ravel()
    f = _mask(fixations, np.shape(saliency)).ravel()
    pos = s[f]
    if pos.size == 0:
        return float("nan")
    if negatives is None:
        negatives = borji_negatives(s.size, pos.size, n_splits=n_splits, seed=seed)
    return _stepped_auc(pos, s[negatives], step)


def borji_negatives(n_cells: int, n_fix: int, *, n_splits: int = N_SPLITS, seed: int = SEED) -> np.ndarray:
    """The negatives of :func:`auc_borji`, flat cell indices, shape (n_splits, n_fix).

    They depend on the fixations and the seed only, not on the map: one draw serves
    every map scored against the same fixations.
    """
    return np.random.default_rng(seed).integers(0, n_cells, size=(n_splits, n_fix))


def shuffled_negatives(
    fixations: np.ndarray, other_fixations: np.ndarray, *, n_splits: int = N_SPLITS, seed: int = SEED
) -> np.ndarray | None:
    """The negatives of :func:`auc_shuffled`, flat cell indices, shape (n_splits, min(n_fix, n_other)).

    None when no cell is fixated or no other cell is. Independent of the map, like
    :func:`borji_negatives`.
    """
    shape = np.shape(fixations)
    n_fix = int(_mask(fixations, shape).sum())
    ind = np.flatnonzero(_mask(other_fixations, shape).ravel())
    if n_fix == 0 or ind.size == 0:
        return None
    n_oth = min(n_fix, ind.size)
    # one permutation of ind's positions per split, drawn in turn: the same draws as
    # n_splits calls of rng.permutation(ind.size), in one call
    order = np.random.default_rng(seed).permuted(np.tile(np.arange(ind.size), (n_splits, 1)), axis=1)
    return ind[order[:, :n_oth]]


def auc_shuffled(
    saliency: np.ndarray,
    fixations: np.ndarray,
    other_fixations: np.ndarray,
    *,
    n_splits: int = N_SPLITS,
    step: float = 0.1,
    seed: int = SEED,
    negatives: np.ndarray | None = None,
) -> float:
    """Shuffled AUC (MIT's ``AUC_shuffled.m``): negatives are cells fixated on other frames.

    ``other_fixations`` is used as a binary map (its fixated cells ``ind``, in flat
    order). Negatives of split ``k``: the first ``min(n_fix, len(ind))`` entries of
    ``ind[rng.permutation(len(ind))]``, one permutation per split from
    ``rng = default_rng(seed)``. NaN when no other cell is fixated. ``negatives``:
    those indices already drawn (:func:`shuffled_negatives`).
    """
    s = _range(finite_map(saliency)).ravel()
    pos = s[_mask(fixations, np.shape(saliency)).ravel()]
    if negatives is None:
        negatives = shuffled_negatives(fixations, other_fixations, n_splits=n_splits, seed=seed)
    if pos.size == 0 or negatives is None:
        return float("nan")
    return _stepped_auc(pos, s[negatives], step)


def auc_shuffled_rank(saliency: np.ndarray, fixations: np.ndarray, other_fixations: np.ndarray) -> float:
    """Variant: exact rank sAUC (Mann-Whitney, ties 1/2), fixations counted with multiplicity."""
    s = finite_map(saliency)
    f, o = np.asarray(fixations), np.asarray(other_fixations)
    if f.shape != s.shape or o.shape != s.shape:
        raise ValueError("auc_shuffled_rank: saliency, fixations and other_fixations must share a shape")
    pos = np.repeat(s.ravel(), np.maximum(f.ravel(), 0).astype(int))
    neg = np.repeat(s.ravel(), np.maximum(o.ravel(), 0).astype(int))
    return _rank_auc(pos, neg)


def nss(saliency: np.ndarray, fixations: np.ndarray) -> float:
    """NSS: mean at the fixated cells of the map z-scored with the sample SD (ddof 1)."""
    s = finite_map(saliency)
    f = _mask(fixations, s.shape)
    sd = s.std(ddof=1) if s.size > 1 else 0.0
    if sd == 0 or not f.any():
        return float("nan")
    return float(((s - s.mean()) / sd)[f].mean())


def cc(saliency: np.ndarray, density: np.ndarray) -> float:
    """Pearson correlation coefficient between the map and a fixation density map."""
    a = finite_map(saliency).ravel()
    b = finite_map(density, "fixation density").ravel()
    a = a - a.mean()
    b = b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")


def kl_div(saliency: np.ndarray, density: np.ndarray) -> float:
    """KL divergence of the fixation density Q from the map P (lower is better)."""
    s = finite_map(saliency)
    P = _sum1(s if s.min() >= 0 else _unit(s))
    Q = _sum1(finite_map(density, "fixation density"))
    return float((Q * np.log(EPS + Q / (P + EPS))).sum())


def similarity(saliency: np.ndarray, density: np.ndarray) -> float:
    """SIM: histogram intersection of the map and the density, both range- then sum-normalised."""
    P, Q = _range_sum1(finite_map(saliency)), _range_sum1(finite_map(density, "fixation density"))
    if np.isnan(P).all() or np.isnan(Q).all():
        return float("nan")
    return float(np.minimum(P, Q).sum())


def similarity_sum_normalised(saliency: np.ndarray, density: np.ndarray) -> float:
    """Variant: SIM with the map range-normalised but the density only sum-normalised."""
    P = _range_sum1(finite_map(saliency))
    return float(np.minimum(P, _sum1(finite_map(density, "fixation density"))).sum())


def _gain(P: np.ndarray, B: np.ndarray, fixations) -> float:
    f = _mask(fixations, P.shape)
    if not f.any():
        return float("nan")
    return float((np.log2(EPS + P[f]) - np.log2(EPS + B[f])).mean())


def information_gain(saliency: np.ndarray, fixations: np.ndarray, baseline: np.ndarray) -> float:
    """Information gain (bits per fixated cell) of the map over ``baseline`` (MIT's ``InfoGain.m``).

    Parameters
    ----------
    saliency, fixations, baseline : ndarray, shape (H, W)
        Map, fixation map (cells > 0 fixated, each once) and baseline map (e.g.
        :func:`psybench.attention.metrics.centre_baseline`); map and baseline are
        range-normalised, then sum-normalised.
    """
    P = _sum1(_range(finite_map(saliency)))
    B = _sum1(_range(finite_map(baseline, "baseline")))
    if P.shape != B.shape:
        raise ValueError(f"baseline of shape {B.shape} does not match the saliency map {P.shape}")
    return _gain(P, B, fixations)


def information_gain_sum_normalised(saliency: np.ndarray, fixations: np.ndarray, baseline: np.ndarray) -> float:
    """Variant: IG with the baseline only sum-normalised (its minimum kept), fixations weighted by count."""
    P = _sum1(_range(finite_map(saliency)))
    B = _sum1(finite_map(baseline, "baseline"))
    w = np.maximum(np.asarray(fixations), 0).astype(np.float64)
    if w.shape != P.shape:
        raise ValueError(f"fixation map of shape {w.shape} does not match the saliency map {P.shape}")
    if w.sum() == 0:
        return float("nan")
    return float(((np.log2(EPS + P) - np.log2(EPS + B)) * w).sum() / w.sum())
