"""Saliency metrics against hand-computable cases and independent references (scikit-learn, SciPy)."""

import numpy as np
import pytest
from scipy.stats import pearsonr, zscore
from sklearn.metrics import roc_auc_score

from psybench.attention import metrics as M


@pytest.fixture
def case():
    rng = np.random.default_rng(0)
    sal = rng.random((12, 16))
    fix = np.zeros((12, 16), int)
    fix[rng.integers(0, 12, 9), rng.integers(0, 16, 9)] = 1
    return sal, fix


def test_nss_matches_scipy_zscore(case):
    sal, fix = case
    assert M.nss(sal, fix) == pytest.approx(zscore(sal, axis=None)[fix > 0].mean())


def test_cc_matches_scipy_pearsonr(case):
    sal, fix = case
    dens = M.fixation_density(fix, sigma=1.0)
    assert M.cc(sal, dens) == pytest.approx(pearsonr(sal.ravel(), dens.ravel())[0])


def test_shuffled_auc_matches_sklearn(case):
    sal, fix = case
    other = np.zeros_like(fix)
    other[3:6, 2:9] = 2  # other frames' fixations, some cells twice
    labels = np.r_[np.ones(fix.sum()), np.zeros(other.sum())]
    scores = np.r_[np.repeat(sal.ravel(), fix.ravel()), np.repeat(sal.ravel(), other.ravel())]
    assert M.auc_shuffled(sal, fix, other) == pytest.approx(roc_auc_score(labels, scores))


def test_auc_judd_close_to_sklearn_and_hand_case(case):
    sal, fix = case
    n_fix = int((fix > 0).sum())
    ref = roc_auc_score((fix > 0).ravel(), sal.ravel())
    # Judd's curve has points only at fixation thresholds: it exceeds the exact ROC area by < 1/(2 n_fix)
    assert ref <= M.auc_judd(sal, fix) <= ref + 1 / (2 * n_fix) + 1e-12
    # hand case: 4 cells, fixated cell has the top value -> TP 1 at FP 0 -> AUC 1
    s = np.array([[0.9, 0.1], [0.2, 0.3]])
    f = np.array([[1, 0], [0, 0]])
    assert M.auc_judd(s, f) == pytest.approx(1.0)
    # fixated cell ranked second of four: points (0,0), (1/3, 1), (1,1) -> 1 - 1/6
    s2 = np.array([[0.5, 0.9], [0.2, 0.3]])
    assert M.auc_judd(s2, f) == pytest.approx(1 - 1 / 6)


def test_auc_borji_perfect_and_constant_maps():
    s = np.zeros((10, 10))
    f = np.zeros((10, 10), int)
    f[2, 3] = f[7, 7] = 1
    s[f > 0] = 1.0
    assert M.auc_borji(s, f, n_splits=50) > 0.95
    assert M.auc_borji(np.ones((10, 10)), f) == pytest.approx(0.5)


def test_kl_sim_ig_hand_cases():
    q = np.array([[1.0, 3.0], [0.0, 0.0]])
    assert M.kl_div(q, q) == pytest.approx(0.0, abs=1e-12)
    assert M.similarity(q, q) == pytest.approx(1.0)
    # KL of Q = (1/4, 3/4, 0, 0) from uniform P: 1/4 log(1) + 3/4 log(3)
    assert M.kl_div(np.ones((2, 2)), q) == pytest.approx(0.75 * np.log(3.0), rel=1e-9)
    # SIM of uniform vs Q: min(1/4, 1/4) + min(1/4, 3/4) = 1/2
    ramp = np.array([[1.0, 2.0], [3.0, 4.0]])  # min-max scaled to (0, 1/3, 2/3, 1) -> sum-normalised (0, 1/6, 1/3, 1/2)
    assert M.similarity(ramp, q) == pytest.approx(1 / 6)
    base = M.centre_baseline((6, 8))
    f = np.zeros((6, 8))
    f[1, 1] = 1
    b0 = base - base.min()  # the map is min-max scaled before normalising, so use a zero-minimum baseline
    assert M.information_gain(b0, f, b0) == pytest.approx(0.0, abs=1e-9)
    better = np.zeros((6, 8))
    better[1, 1] = 1.0
    assert M.information_gain(better, f, base) > 3  # nearly all mass on the fixation vs the centre prior


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
