"""Plausibility models on generated IntPhys dev data, and the streamed next-frame fit."""
import dask.array as da
import numpy as np
import pandas as pd
import pytest

from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, list_movies
from psybench.intphys.metrics import score_table
from psybench.intphys.models import (
    _features,
    _gray,
    constant,
    flow_surprise,
    random_control,
    tracking_permanence,
    train_nextframe,
)
from psybench.io.store import open_store


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    root = tmp_path_factory.mktemp("dev")
    generate_intphys(root, "dev", n_frames=16, height=64, width=64, seed=11, threads=2)
    n = len(list_movies(root, "dev"))
    ingest_shard(root, "dev", root / "s.zarr", root / "s.csv", shard=0, shard_size=n, threads=2)
    return open_store(root / "s.zarr"), pd.read_csv(root / "s.csv")


def _overall(table, metric, **f):
    sel = table["metric"] == metric
    for k in ("block", "visibility", "motion", "n_objects"):
        sel &= table[k] == f.get(k, "all")
    return table[sel].iloc[0]


def test_tracking_beats_chance_on_visible(dev):
    store, meta = dev
    t = score_table(tracking_permanence(store, meta, threads=2), meta, model="tracking", n_boot=300)
    for block in ("O1", "O2", "O3"):
        row = _overall(t, "L_R", block=block, visibility="visible")
        assert row["value"] <= 0.15 and row["ci_high"] < 0.5, row
    assert _overall(t, "L_A", visibility="visible")["value"] < 0.2


@pytest.mark.parametrize("model", [constant, random_control])
def test_controls_at_chance(dev, model):
    store, meta = dev
    p = model(store, meta)
    assert ((p >= 0) & (p <= 1)).all()
    # 99 % intervals: two metrics at 95 % would exclude chance for ~10 % of seeds by luck alone
    t = score_table(p, meta, model="c", n_boot=1000, ci=0.99)
    for metric in ("L_R", "L_A"):
        row = _overall(t, metric)
        assert row["ci_low"] <= 0.5 <= row["ci_high"], row


def test_flow_surprise_is_one_for_a_still_movie():
    scene = np.tile(np.random.default_rng(0).integers(0, 255, (1, 1, 32, 32, 3), dtype=np.uint8), (2, 6, 1, 1, 1))
    scene[1, 4:] = 255 - scene[1, 4:]  # an abrupt change in movie 2

    class S:
        attrs = {"movies": ["a", "b"]}
        arrays = {"scene": da.from_array(scene, chunks=(1, 6, 32, 32, 3))}

        def __getitem__(self, k):
            return self.arrays[k]

    p = flow_surprise(S(), None)
    # identical frames: Farneback flow ~0 on random texture, residual bilinear error < 0.1 % of range
    assert p["a"] > 0.9 and p["b"] < 0.01


def test_streamed_fit_equals_direct_least_squares():
    rng = np.random.default_rng(2)
    scene = rng.integers(0, 255, (5, 6, 16, 16, 3), dtype=np.uint8)
    lam = 1e-3
    fit = train_nextframe([da.from_array(scene, chunks=(1, 6, 16, 16, 3))], size=8, ridge=lam, threads=2)
    X = np.concatenate([_features(_gray(m, 8).astype(np.float64)[:-1]) for m in scene])  # (N, P, F)
    y = np.concatenate([_gray(m, 8).astype(np.float64)[1:].reshape(5, -1) for m in scene])
    for p in (0, 27, 63):
        reg = lam * len(y) * np.eye(10)
        reg[0, 0] = 0
        w = np.linalg.solve(X[:, p].T @ X[:, p] + reg, X[:, p].T @ y[:, p])  # all movies at once
        np.testing.assert_allclose(fit["weights"][p], w, rtol=1e-6, atol=1e-8)
    assert int(fit["n_samples"]) == 25
