"""rank_counts and FeatureTable: the fast paths of Table 1 against direct computation."""

import numpy as np
import pytest

from psybench.attention.feature_table import FeatureTable
from psybench.attention.rank_counts import rank_counts
from psybench.attention.tuning import feature_vectors, frame_features


def _brute(S, cells):
    n, K, U = S.shape
    lower = np.zeros((n, cells.shape[1], U), np.int64)
    equal = np.zeros_like(lower)
    for f in range(n):
        for j, c in enumerate(cells[f]):
            lower[f, j] = (S[f] < S[f, c]).sum(0)
            equal[f, j] = (S[f] == S[f, c]).sum(0)
    return lower, equal


@pytest.mark.parametrize("ties", [False, True])
def test_rank_counts_equal_brute_force(ties):
    rng = np.random.default_rng(3)
    for _ in range(16):
        n, K, U, d = rng.integers(1, 5), rng.integers(2, 600), rng.integers(1, 30), rng.integers(1, 40)  # both paths
        S = rng.integers(0, 4, size=(n, K, U)) if ties else rng.normal(size=(n, K, U))
        S = S.astype(np.float32)
        cells = rng.integers(0, K, size=(n, d))
        cells[:, -1] = cells[:, 0]  # repeated gaze cells are counted once and returned for each
        lower, equal = rank_counts(S, cells)
        want = _brute(S, cells)
        assert np.array_equal(lower, want[0]) and np.array_equal(equal, want[1])


def test_rank_counts_beyond_uint16():
    S = np.zeros((1, 70000, 1), np.float32)  # every cell ties: counts above the uint16 range stay exact
    lower, equal = rank_counts(S, np.array([[5]]))
    assert lower[0, 0, 0] == 0 and equal[0, 0, 0] == 70000


@pytest.mark.parametrize("path", ["direct", "sorted"])
def test_both_paths_count_ieee_comparisons(monkeypatch, path):
    """NaN is below, above and level with nothing; -0.0 ties 0.0; integer and boolean maps count exactly."""
    import psybench.attention.rank_counts as rc

    monkeypatch.setattr(rc, "SORT_ABOVE", 0 if path == "sorted" else 10**9)
    monkeypatch.setattr(rc, "SORT_ABOVE_SMALL_U", 0 if path == "sorted" else 10**9)
    rng = np.random.default_rng(5)
    S = rng.integers(-2, 3, size=(3, 50, 20)).astype(np.float64)
    S[rng.random(S.shape) < 0.1] = np.nan
    S[S == 0] = rng.choice([0.0, -0.0], size=int((S == 0).sum()))
    cells = rng.integers(0, 50, size=(3, 7))
    for maps in (S, S.astype(np.float32), np.nan_to_num(S).astype(np.int64) + 2**60, np.nan_to_num(S) > 0):
        lower, equal = rank_counts(maps, cells)
        want = _brute(maps, cells)
        assert np.array_equal(lower, want[0]) and np.array_equal(equal, want[1])


def test_direct_path_beyond_a_16_bit_run():
    S = np.zeros((1, 70000, 20), np.float32)  # many maps side by side, every cell ties: the 16-bit runs add up
    S[0, :40000, 3] = -1.0
    lower, equal = rank_counts(S, np.array([[69999, 5]]))
    assert lower[0, 0, 3] == 40000 and equal[0, 0, 3] == 30000 and equal[0, 1, 0] == 70000


def test_rank_counts_rejects_cells_off_the_map():
    with pytest.raises(ValueError, match="gazed cells"):
        rank_counts(np.zeros((1, 4, 1)), np.array([[4]]))


def test_feature_table_serves_the_same_vectors():
    rng = np.random.default_rng(0)
    maps = rng.random((12, 5, 7, 2)).astype(np.float32)
    lags, L = [1, 3], 3
    table = FeatureTable(maps, lags=lags, L=L)
    streamed = FeatureTable(maps, lags=lags, L=L, max_mb=0)
    assert table.table is not None and streamed.table is None
    frames = np.array([3, 11, 4, 4])
    rows, cols = np.array([0, 4, 2, 2]), np.array([6, 0, 3, 3])
    assert np.array_equal(table.points(frames, rows, cols), feature_vectors(maps, frames, rows, cols, lags=lags, L=L))
    assert np.array_equal(table.frames(frames), frame_features(maps, frames, lags=lags, L=L))
    assert np.array_equal(streamed.frames(frames), table.frames(frames))
    with pytest.raises(ValueError, match="no history"):
        table.points(np.array([2]), np.array([0]), np.array([0]))
