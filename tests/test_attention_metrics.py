"""Saliency metrics against independent re-implementations of the MIT benchmark's code.

The ``mit_*`` oracles below transliterate the MATLAB of the MIT saliency benchmark
(cvzoya/saliency, ``code_forMetrics/*.m``: loops, MATLAB's ``eps`` and ``std``) line by
line, without sharing code with psybench; SciPy and scikit-learn are further oracles.
Every metric is checked within 1e-9 on untied maps, on tied maps (a constant map, a
map with a zero half, integer-valued maps) and on fixation maps with counts > 1.
"""

import itertools

import numpy as np
import pytest
from scipy.stats import pearsonr, zscore
from sklearn.metrics import roc_auc_score

from psybench.attention import map_metrics as MM
from psybench.attention import metrics as M

MATLAB_EPS = 2.0**-52
TOL = 1e-9


def trapz(x, y):
    return sum((x[j + 1] - x[j]) * (y[j + 1] + y[j]) / 2 for j in range(len(x) - 1))


def mit_judd(sal, fix, jitter=None):
    S = np.asarray(sal, float)
    if jitter is not None:
        S = S + jitter
    S = ((S - S.min()) / (S.max() - S.min())).ravel()
    F = np.asarray(fix).ravel()
    Sth = S[F > 0]
    Nf, Np = len(Sth), len(S)
    tp, fp = [0.0], [0.0]
    for i, thresh in enumerate(sorted(Sth, reverse=True), start=1):
        aboveth = int(np.sum(S >= thresh))
        tp.append(i / Nf)
        fp.append((aboveth - i) / (Np - Nf))
    return trapz(fp + [1.0], tp + [1.0])


def mit_stepped(Sth, curfix, step=0.1):
    mx = max(max(Sth), max(curfix))
    threshes = [k * step for k in range(int(np.floor(mx / step + 1e-9)) + 1)][::-1]
    tp = [0.0] + [sum(v >= t for v in Sth) / len(Sth) for t in threshes] + [1.0]
    fp = [0.0] + [sum(v >= t for v in curfix) / len(curfix) for t in threshes] + [1.0]
    return trapz(fp, tp)


def mit_borji(sal, fix, n_splits, seed):
    S = np.asarray(sal, float)
    S = ((S - S.min()) / (S.max() - S.min())).ravel()
    Sth = list(S[np.asarray(fix).ravel() > 0])
    r = np.random.default_rng(seed).integers(0, S.size, size=(n_splits, len(Sth)))  # documented draw protocol
    return float(np.mean([mit_stepped(Sth, list(S[r[k]])) for k in range(n_splits)]))


def mit_shuffled(sal, fix, other, n_splits, seed):
    S = np.asarray(sal, float)
    S = ((S - S.min()) / (S.max() - S.min())).ravel()
    Sth = list(S[np.asarray(fix).ravel() > 0])
    ind = [i for i, v in enumerate(np.asarray(other).ravel()) if v > 0]
    n_oth = min(len(Sth), len(ind))
    rng = np.random.default_rng(seed)
    aucs = []
    for _ in range(n_splits):
        perm = rng.permutation(len(ind))
        aucs.append(mit_stepped(Sth, [S[ind[p]] for p in perm[:n_oth]]))
    return float(np.mean(aucs))


def mit_dist(m, range_first=True):
    m = np.asarray(m, float)
    if np.any(m):
        if range_first:
            m = (m - m.min()) / (m.max() - m.min())
        m = m / m.sum()
    return m


def mit_similarity(a, b):
    return float(np.sum(np.minimum(mit_dist(a), mit_dist(b))))


def mit_kl(sal, dens):
    P, Q = mit_dist(sal, range_first=False), mit_dist(dens, range_first=False)
    return float(np.sum(Q * np.log(MATLAB_EPS + Q / (P + MATLAB_EPS))))


def mit_infogain(sal, fix, base):
    m1 = np.asarray(sal, float).ravel()
    mb = np.asarray(base, float).ravel()
    m1 = (m1 - m1.min()) / (m1.max() - m1.min())
    mb = (mb - mb.min()) / (mb.max() - mb.min())
    m1, mb = m1 / m1.sum(), mb / mb.sum()
    locs = np.asarray(fix).ravel().astype(bool)
    return float(np.mean(np.log2(MATLAB_EPS + m1[locs]) - np.log2(MATLAB_EPS + mb[locs])))


def _maps():
    rng = np.random.default_rng(0)
    fix = np.zeros((12, 16), int)
    fix[rng.integers(0, 12, 9), rng.integers(0, 16, 9)] = 1
    fix[3, 2] = fix[5, 4] = 2  # two observers on one cell: MIT's maps are binary
    half = rng.random((12, 16))
    half[:, :8] = 0.0  # black bars / saturated regions: a tied half
    fix_half = fix.copy()
    fix_half[[1, 7, 10], [0, 3, 6]] = 1  # fixations inside the tied half
    return {
        "untied": (rng.random((12, 16)), fix),
        "zero-half": (half, fix_half),
        "integer": (rng.integers(0, 4, (12, 16)).astype(float), fix),
    }


MAPS = _maps()


@pytest.mark.parametrize("name", sorted(MAPS))
def test_nss_cc_kl_sim_ig_match_mit_code(name):
    sal, fix = MAPS[name]
    dens = M.fixation_density(fix, sigma=1.0)
    base = M.centre_baseline(sal.shape)
    assert MM.nss(sal, fix) == pytest.approx(zscore(sal, axis=None, ddof=1)[fix > 0].mean(), abs=TOL)
    assert MM.cc(sal, dens) == pytest.approx(pearsonr(sal.ravel(), dens.ravel())[0], abs=TOL)
    assert MM.kl_div(sal, dens) == pytest.approx(mit_kl(sal, dens), abs=TOL)
    assert MM.similarity(sal, dens) == pytest.approx(mit_similarity(sal, dens), abs=TOL)
    assert MM.information_gain(sal, fix, base) == pytest.approx(mit_infogain(sal, fix, base), abs=TOL)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_auc_borji_and_shuffled_match_mit_code(name):
    sal, fix = MAPS[name]
    other = np.zeros_like(fix)
    other[3:6, 2:9] = 2
    other[0, :] = 1
    assert MM.auc_borji(sal, fix, n_splits=20, seed=3) == pytest.approx(mit_borji(sal, fix, 20, 3), abs=TOL)
    assert MM.auc_shuffled(sal, fix, other, n_splits=20, seed=4) == pytest.approx(
        mit_shuffled(sal, fix, other, 20, 4), abs=TOL)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_auc_judd_jitter_is_mit_code_with_the_same_jitter(name):
    sal, fix = MAPS[name]
    jitter = np.random.default_rng(5).random(sal.shape) * 1e-7  # MIT: rand(size) / 10000000
    assert MM.auc_judd_jitter(sal, fix, seed=5) == pytest.approx(mit_judd(sal, fix, jitter), abs=TOL)


def test_auc_judd_untied_equals_mit_code_with_or_without_jitter():
    sal, fix = MAPS["untied"]
    assert MM.auc_judd(sal, fix) == pytest.approx(mit_judd(sal, fix), abs=TOL)
    assert MM.auc_judd(sal, fix) == pytest.approx(mit_judd(sal, fix, np.random.default_rng(1).random(sal.shape) * 1e-7),
                                                  abs=TOL)
    # Judd's curve exceeds the exact ROC area by less than 1/(2 n_fix)
    ref = roc_auc_score((fix > 0).ravel(), sal.ravel())
    assert ref <= MM.auc_judd(sal, fix) <= ref + 1 / (2 * (fix > 0).sum())


@pytest.mark.parametrize(
    "sal",
    [np.zeros((2, 3)), np.array([[0.0, 0, 0], [1, 1, 2]]), np.array([[1.0, 1, 2], [2, 0, 1]])],
    ids=["constant", "tied-low", "tied-mixed"],
)
def test_auc_judd_is_the_exact_expectation_over_tie_breaking(sal):
    fix = np.array([[1, 0, 1], [0, 1, 0]])
    # all 720 orders of the cells, each breaking the ties one way (integer gaps >> 1e-3 tie breaker)
    vals = [mit_judd(sal, fix, np.array(p, float).reshape(2, 3) * 1e-3) for p in itertools.permutations(range(6))]
    assert MM.auc_judd(sal, fix) == pytest.approx(np.mean(vals), abs=TOL)


def test_auc_judd_on_tied_maps_within_sampling_error_of_mit_jitter():
    sal, fix = MAPS["zero-half"]
    for s in (sal, np.zeros_like(sal)):
        draws = [mit_judd(s, fix, np.random.default_rng(k).random(s.shape) * 1e-7) for k in range(300)]
        se = np.std(draws, ddof=1) / np.sqrt(len(draws))
        assert abs(MM.auc_judd(s, fix) - np.mean(draws)) < 4 * se + 1e-12
    # without jitter the FP rate of a tied map passes 1 and the area collapses (the old bug, kept as a named variant)
    assert MM.auc_judd_no_jitter(np.zeros_like(sal), fix) < 0.2 < MM.auc_judd(np.zeros_like(sal), fix)


def test_degenerate_maps_give_what_mit_gives():
    fix = np.zeros((6, 8), int)
    fix[2, 3] = fix[4, 4] = 1
    const = np.ones((6, 8))
    dens = M.fixation_density(fix, sigma=1.0)
    assert np.isnan(MM.nss(const, fix)) and np.isnan(MM.cc(const, dens))
    assert np.isnan(MM.similarity(const, dens)) and np.isnan(MM.information_gain(const, fix, M.centre_baseline((6, 8))))
    assert MM.similarity(np.zeros((6, 8)), dens) == 0.0  # MIT: a zero map stays zero
    assert MM.auc_borji(const, fix) == pytest.approx(0.5)
    assert np.isnan(MM.auc_judd(const, np.zeros_like(fix)))


def test_variants_keep_their_definitions():
    sal, fix = MAPS["untied"]
    other = np.zeros_like(fix)
    other[3:6, 2:9] = 2
    labels = np.r_[np.ones(fix.sum()), np.zeros(other.sum())]
    scores = np.r_[np.repeat(sal.ravel(), fix.ravel()), np.repeat(sal.ravel(), other.ravel())]
    assert MM.auc_shuffled_rank(sal, fix, other) == pytest.approx(roc_auc_score(labels, scores), abs=TOL)
    dens = M.fixation_density(fix, sigma=1.0)
    p = (sal - sal.min()) / np.ptp(sal)
    assert MM.similarity_sum_normalised(sal, dens) == pytest.approx(np.minimum(p / p.sum(), dens / dens.sum()).sum())
    base = M.centre_baseline(sal.shape)
    # range-normalising the baseline (MIT) sends its corners to 0: IG differs from the sum-normalised variant
    assert MM.information_gain(sal, fix, base) != pytest.approx(MM.information_gain_sum_normalised(sal, fix, base))


def test_score_frames_directions_and_names():
    rng = np.random.default_rng(2)
    counts = np.zeros((4, 10, 12), int)
    for t in range(4):
        counts[t, rng.integers(0, 10, 3), rng.integers(0, 12, 3)] += 1
    dens = np.stack([M.fixation_density(c, sigma=1.0) for c in counts])
    good = M.score_frames(dens + 1e-3 * rng.random(counts.shape), counts, n_splits=10)
    bad = M.score_frames(rng.random(counts.shape), counts, n_splits=10)
    assert set(good) == set(M.METRIC_DIRECTIONS)
    for k, direction in M.METRIC_DIRECTIONS.items():
        assert (good[k] > bad[k]) == (direction == "higher"), k
    with pytest.raises(ValueError, match="fixation"):
        M.score_frames(np.zeros((2, 3, 3)), np.zeros((2, 3, 4)))


def test_loo_ceiling_is_the_others_density_predicting_each_observer():
    rng = np.random.default_rng(7)
    oc = np.zeros((3, 5, 8, 10))
    for t in range(5):  # observers agree on a cell per frame, plus one stray observer's cell
        r, c = rng.integers(0, 8), rng.integers(0, 10)
        oc[:, t, r, c] = 1
    oc[2, 1] = 0
    oc[2, 1, 0, 0] = 1
    ceil = M.loo_ceiling(oc, n_splits=10)
    # by hand: mean over observers of score_frames(regularised density of the others, held-out counts), the
    # density blurred once more for the metrics that compare with the blurred fixations (CC, KL, SIM)
    from psybench.attention.gold_standard import choose_regularisation, density_information_gain, regularised_density

    by_hand = []
    for o in range(3):
        rest = oc.sum(0) - oc[o]
        b, w = choose_regularisation(np.delete(oc, o, axis=0))  # one other observer: (DENSITY_SIGMA, 0.5)
        p = regularised_density(rest, bandwidth=b, weight=w)
        raw = M.score_frames(p, oc[o], n_splits=10)
        blurred = M.score_frames(np.stack([M.fixation_density(f) for f in p]), oc[o], n_splits=10)
        by_hand.append({k: (blurred if k in ("CC", "KL", "SIM") else raw)[k] for k in M.METRIC_DIRECTIONS})
        by_hand[-1]["IG"] = density_information_gain(p, oc[o], M.centre_baseline((8, 10)))
    for k in M.METRIC_DIRECTIONS:
        assert ceil[k] == pytest.approx(np.nanmean([b[k] for b in by_hand]), abs=TOL), k
    assert ceil["AUC-Judd"] > 0.9  # people agree: the ceiling is near perfect
    with pytest.raises(ValueError, match="N >= 2"):
        M.loo_ceiling(oc[:1])
