"""Plausibility models on generated IntPhys dev data, and the streamed next-frame fit."""
import dask.array as da
import numpy as np
import pandas as pd
import pytest

from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, list_movies
from psybench.intphys.metrics import score_table
from psybench.intphys.models import (
    Observation,
    constant,
    flow_surprise,
    observe,
    random_control,
    tracking_permanence,
    train_nextframe,
)
from psybench.intphys.models.nextframe import _features
from psybench.intphys.models.observation import luminance
from psybench.intphys.responses import ModelSpecError, predict_shard


@pytest.fixture(scope="module")
def dev_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("dev")
    generate_intphys(root, "dev", n_frames=16, height=64, width=64, seed=11, threads=2)
    n = len(list_movies(root, "dev"))
    ingest_shard(root, "dev", root / "s.zarr", root / "s.csv", shard=0, shard_size=n, threads=2)
    return root


@pytest.fixture(scope="module")
def dev(dev_root):
    return observe(dev_root / "s.zarr", dev_root / "s.csv"), pd.read_csv(dev_root / "s.csv")


def _overall(table, metric, **f):
    sel = table["metric"] == metric
    for k in ("block", "visibility", "motion", "n_objects"):
        sel &= table[k] == f.get(k, "all")
    return table[sel].iloc[0]


def test_tracking_beats_chance_on_visible(dev):
    observation, meta = dev
    t = score_table(tracking_permanence(observation, threads=2), meta, model="tracking", n_boot=300)
    for block in ("O1", "O2", "O3"):
        row = _overall(t, "L_R", block=block, visibility="visible")
        assert row["value"] <= 0.15 and row["ci_high"] < 0.5, row
    assert _overall(t, "L_A", visibility="visible")["value"] < 0.2


@pytest.mark.parametrize("model", [constant, random_control])
def test_controls_at_chance(dev, model):
    observation, meta = dev
    p = model(observation)
    assert ((p >= 0) & (p <= 1)).all()
    # 99 % intervals: two metrics at 95 % would exclude chance for ~10 % of seeds by luck alone
    t = score_table(p, meta, model="c", n_boot=1000, ci=0.99)
    for metric in ("L_R", "L_A"):
        row = _overall(t, metric)
        assert row["ci_low"] <= 0.5 <= row["ci_high"], row


def test_flow_surprise_is_one_for_a_still_movie():
    scene = np.tile(np.random.default_rng(0).integers(0, 255, (1, 1, 32, 32, 3), dtype=np.uint8), (2, 6, 1, 1, 1))
    scene[1, 4:] = 255 - scene[1, 4:]  # an abrupt change in movie 2
    p = flow_surprise(Observation(movies=("a", "b"), scene=da.from_array(scene, chunks=(1, 6, 32, 32, 3))))
    # identical frames: Farneback flow ~0 on random texture, residual bilinear error < 0.1 % of range
    assert p["a"] > 0.9 and p["b"] < 0.01


def test_streamed_fit_equals_direct_least_squares():
    rng = np.random.default_rng(2)
    scene = rng.integers(0, 255, (5, 6, 16, 16, 3), dtype=np.uint8)
    lam = 1e-3
    fit = train_nextframe([da.from_array(scene, chunks=(1, 6, 16, 16, 3))], size=8, ridge=lam, threads=2)
    X = np.concatenate([_features(luminance(m, 8).astype(np.float64)[:-1]) for m in scene])  # (N, P, F)
    y = np.concatenate([luminance(m, 8).astype(np.float64)[1:].reshape(5, -1) for m in scene])
    for p in (0, 27, 63):
        reg = lam * len(y) * np.eye(10)
        reg[0, 0] = 0
        w = np.linalg.solve(X[:, p].T @ X[:, p] + reg, X[:, p].T @ y[:, p])  # all movies at once
        np.testing.assert_allclose(fit["weights"][p], w, rtol=1e-6, atol=1e-8)
    assert int(fit["n_samples"]) == 25


LABEL_COLUMNS = ("possible", "block", "visibility", "motion", "n_objects", "quadruplet")


def test_observation_holds_no_labels(dev):
    observation, meta = dev
    assert set(LABEL_COLUMNS) <= set(meta.columns)  # the table has them ...
    fields = ["depth", "depth_units", "masks", "masks_grayscale", "movies", "scene"]
    assert sorted(vars(observation)) == fields  # ... a model not
    assert not any(hasattr(observation, c) for c in LABEL_COLUMNS)
    assert observation.movies == tuple(meta["movie"])
    assert observation.masks_grayscale[0][0] == (0, "sky")


def test_user_callable_through_predict_shard_sees_no_labels(dev_root, tmp_path, monkeypatch):
    (tmp_path / "peek_labels.py").write_text(
        "import pandas as pd\n"
        "SEEN = {}\n"
        "def model(observation, *, value=0.5):\n"
        f"    SEEN.update({{k: getattr(observation, k, None) for k in {LABEL_COLUMNS!r}}})\n"
        "    return pd.Series(value, index=list(observation.movies))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = {"name": "peek", "callable": "peek_labels:model", "params": {"value": 0.25}}
    df = predict_shard(entry, dev_root / "s.zarr", dev_root / "s.csv", tmp_path / "p.csv")
    import peek_labels

    assert peek_labels.SEEN == dict.fromkeys(LABEL_COLUMNS)
    assert (df["p"] == 0.25).all() and list(df.columns) == ["movie", "p"]
    bad = {"name": "bad", "callable": "peek_labels:model", "params": {"value": 2.0}}
    with pytest.raises(ModelSpecError, match=r"model 'bad' returned P = 2\.0"):
        predict_shard(bad, dev_root / "s.zarr", dev_root / "s.csv", tmp_path / "q.csv")


def test_predict_shards_writes_each_shard_as_alone(dev_root, tmp_path):
    """The workflow's one job per model: every shard's table the bytes predict_shard writes alone."""
    from psybench.intphys.responses import predict_shards

    for shard in ("shard_0000", "shard_0001"):  # the one ingested shard under two shard names
        (tmp_path / f"{shard}.zarr").symlink_to(dev_root / "s.zarr", target_is_directory=True)
        (tmp_path / f"{shard}.csv").symlink_to(dev_root / "s.csv")
    entry = {"name": "random", "algorithm": "random", "params": {"seed": 3}}
    stores, tables = [tmp_path / f"shard_000{i}.zarr" for i in (0, 1)], [tmp_path / f"shard_000{i}.csv" for i in (0, 1)]
    outs = [tmp_path / "out" / f"shard_000{i}.csv" for i in (0, 1)]
    predict_shards(entry, stores, tables, outs)
    predict_shard(entry, dev_root / "s.zarr", dev_root / "s.csv", tmp_path / "alone.csv")
    assert outs[0].read_bytes() == outs[1].read_bytes() == (tmp_path / "alone.csv").read_bytes()
    with pytest.raises(ValueError, match="name different shards"):
        predict_shards(entry, stores, tables[::-1], outs)
    with pytest.raises(ValueError, match="2 shard stores, 1 metadata tables"):
        predict_shards(entry, stores, tables[:1], outs)


def test_models_are_registered_and_configured_like_every_track(dev_root, tmp_path):
    from psybench.config import ConfigError, track_models
    from psybench.registry import list_models

    assert {r["name"] for r in list_models("intphys")} == {"constant", "random", "flow", "nextframe", "tracking",
                                                          "cnn_future", "representation_surprise"}
    # one algorithm, two parameter sets (intra-technique evaluation)
    cfg = {"intphys": {"models": [{"name": "low", "algorithm": "constant", "params": {"value": 0.25}},
                                  {"name": "high", "algorithm": "constant", "params": {"value": 0.75}}]}}
    specs = track_models(cfg, "intphys")
    assert [s.params["value"] for s in specs.values()] == [0.25, 0.75]
    for entry in cfg["intphys"]["models"]:
        df = predict_shard(entry, dev_root / "s.zarr", dev_root / "s.csv", tmp_path / f"{entry['name']}.csv")
        assert (df["p"] == entry["params"]["value"]).all()
    # the old {name: {kind}} mapping names the key and shows the new shape
    with pytest.raises(ConfigError, match=r"config key intphys\.models: .*write models: \[\{name: NAME, algorithm"):
        track_models({"intphys": {"models": {"constant": {"kind": "constant"}}}}, "intphys")
    with pytest.raises(ConfigError, match=r"intphys\.models\[0\].*unknown algorithm 'surprise'"):
        track_models({"intphys": {"models": [{"name": "x", "algorithm": "surprise"}]}}, "intphys")
