"""NaN or infinity in a map is the same error in every metric path.

The per-map functions (:mod:`psybench.attention.map_metrics`), the workflow's stack
path (:func:`psybench.attention.stack_metrics.score_stack` through
:func:`psybench.attention.metrics.score_frames`) and the map-model scoring all refuse
a map with a NaN or infinite cell, naming the map and the cell; before, AUC-Judd gave
about 0.93 per map and 0.00 through the stack for the same map, and KL a finite number.
On finite maps the two paths agree with each other and with the MIT code
(``tests/test_attention_batch.py``, ``tests/test_attention_metrics.py``).
"""

import numpy as np
import pytest

from psybench.attention import map_metrics as MM
from psybench.attention import metrics as M
from psybench.attention.stack_metrics import score_stack

H, W = 6, 8


def _frame():
    rng = np.random.default_rng(5)
    fix = np.zeros((H, W), int)
    fix[1, 1] = fix[4, 5] = fix[2, 6] = 1
    return rng.random((H, W)), fix


def _per_map_calls(sal, fix, dens, base):
    other = np.zeros_like(fix)
    other[0, :4] = 1
    return {
        "AUC-Judd": lambda: MM.auc_judd(sal, fix),
        "AUC-Judd jitter": lambda: MM.auc_judd_jitter(sal, fix),
        "AUC-Judd no jitter": lambda: MM.auc_judd_no_jitter(sal, fix),
        "AUC-Borji": lambda: MM.auc_borji(sal, fix, n_splits=5),
        "sAUC": lambda: MM.auc_shuffled(sal, fix, other, n_splits=5),
        "sAUC rank": lambda: MM.auc_shuffled_rank(sal, fix, other),
        "NSS": lambda: MM.nss(sal, fix),
        "CC": lambda: MM.cc(sal, dens),
        "KL": lambda: MM.kl_div(sal, dens),
        "SIM": lambda: MM.similarity(sal, dens),
        "SIM sum": lambda: MM.similarity_sum_normalised(sal, dens),
        "IG": lambda: MM.information_gain(sal, fix, base),
        "IG sum": lambda: MM.information_gain_sum_normalised(sal, fix, base),
    }


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", sorted(_per_map_calls(*_frame(), None, None)))
def test_every_per_map_function_refuses_a_non_finite_map(name, bad):
    sal, fix = _frame()
    sal[3, 2] = bad
    dens, base = M.fixation_density(fix, sigma=1.0), M.centre_baseline((H, W))
    with pytest.raises(ValueError, match=r"saliency map holds 1 non-finite value\(s\).*cell \(3, 2\)"):
        _per_map_calls(sal, fix, dens, base)[name]()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_stack_path_refuses_the_same_map_naming_map_and_frame(bad):
    sal, fix = _frame()
    maps = np.stack([np.stack([sal, sal]), np.stack([sal, sal])])  # (2 maps, 2 frames, H, W)
    maps[1, 1, 3, 2] = bad
    counts = np.stack([fix, fix])
    with pytest.raises(ValueError, match=r"saliency maps \(map, frame, row, column\).*cell \(1, 1, 3, 2\)"):
        M.score_frames(maps, counts, n_splits=5)
    with pytest.raises(ValueError, match=r"saliency maps \(frame, row, column\).*cell \(1, 3, 2\)"):
        M.score_frames(maps[1], counts, n_splits=5)
    # a frame nobody fixates is not scored, but its NaN map is still refused, as per map
    empty = counts.copy()
    empty[1] = 0
    with pytest.raises(ValueError, match="non-finite"):
        M.score_frames(maps[1], empty, n_splits=5)
    K = H * W
    flat = maps[:, 1].reshape(2, K)
    f = np.broadcast_to(fix.ravel() > 0, (2, K))
    dens = np.broadcast_to(M.fixation_density(fix, sigma=1.0).ravel(), (2, K))
    negs = np.broadcast_to(MM.borji_negatives(K, 3, n_splits=5, seed=0), (2, 5, 3))
    with pytest.raises(ValueError, match=r"saliency map \(row, cell\).*cell \(1, 26\)"):
        score_stack(flat, f, dens, M.centre_baseline((H, W)).ravel(), borji=negs, shuffled=None)


def test_non_finite_density_or_baseline_is_named():
    sal, fix = _frame()
    dens, base = M.fixation_density(fix, sigma=1.0), M.centre_baseline((H, W))
    dens[0, 0] = np.nan
    base[5, 7] = np.inf
    for call in (lambda: MM.cc(sal, dens), lambda: MM.kl_div(sal, dens), lambda: MM.similarity(sal, dens)):
        with pytest.raises(ValueError, match=r"fixation density holds .*cell \(0, 0\)"):
            call()
    with pytest.raises(ValueError, match=r"baseline holds .*cell \(5, 7\)"):
        MM.information_gain(sal, fix, base)
    K = H * W
    negs = MM.borji_negatives(K, 3, n_splits=5, seed=0)[None]
    with pytest.raises(ValueError, match=r"fixation density \(row, cell\)"):
        score_stack(sal.reshape(1, K), fix.reshape(1, K) > 0, dens.reshape(1, K), M.centre_baseline((H, W)).ravel(),
                    borji=negs, shuffled=None)
    with pytest.raises(ValueError, match=r"baseline holds"):
        score_stack(sal.reshape(1, K), fix.reshape(1, K) > 0, M.fixation_density(fix, sigma=1.0).reshape(1, K),
                    base.ravel(), borji=negs, shuffled=None)


def test_map_model_scores_refuse_a_nan_map():
    from psybench.attention.map_models import untuned_map_scores

    sal, fix = _frame()
    maps = np.stack([sal, sal])
    maps[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        untuned_map_scores(maps, np.stack([fix, fix])[None], n_splits=5)


def test_paths_agree_on_finite_maps_and_constant_maps():
    """One frame, per map and through the stack: the same numbers (NaN where MIT has none, for a constant map)."""
    sal, fix = _frame()
    counts = fix[None]
    dens, base = M.fixation_density(counts, sigma=1.0)[0], M.centre_baseline((H, W))
    for s in (sal, np.full((H, W), 0.3)):
        got = M.score_frames(s[None], counts, n_splits=5, seed=2)
        nb = MM.borji_negatives(H * W, 3, n_splits=5, seed=2)
        want = {"AUC-Judd": MM.auc_judd(s, fix), "AUC-Borji": MM.auc_borji(s, fix, negatives=nb),
                "sAUC": float("nan"), "NSS": MM.nss(s, fix), "CC": MM.cc(s, dens), "KL": MM.kl_div(s, dens),
                "SIM": MM.similarity(s, dens), "IG": MM.information_gain(s, fix, base)}
        for k, v in want.items():
            assert np.array_equal(got[k], v, equal_nan=True), (k, got[k], v)
