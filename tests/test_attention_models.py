"""Attention models: one config shape, registered feature families, shared feature stores, user callables."""

import copy
import sys

import numpy as np
import pytest
import yaml

from psybench.attention.models import feature_key, pair_movies, saliency_models
from psybench.attention.responses import feature_maps, saliency_model
from psybench.config import SCHEMA_PATH, ConfigError, validate_config
from psybench.registry import list_models

BASE = {
    "tracks": ["attention"],
    "attention": {
        "movies": {"A": {"popout": {"seed": 1}, "observers": {"p_target": [0.9, 0.1]}}},
        "models": [
            {"name": "raw", "algorithm": "raw", "L": [1, 5]},
            {"name": "pyramid", "algorithm": "pyramid", "params": {"levels": 3, "sigma": 1.0}, "L": [1, 3]},
            {"name": "itti", "algorithm": "itti", "L": 3},
        ],
        "pairs": [["A", "A"]],
    },
}

USER_MODULE = '''
import numpy as np


def edges(frames, *, gain=1.0):
    f = np.asarray(frames, np.float32)
    return np.stack([f, gain * np.abs(np.gradient(f, axis=2))], axis=-1)


def wrong(frames):
    return np.asarray(frames, np.float32)
'''


def _config(**attention):
    cfg = copy.deepcopy(BASE)
    cfg["attention"].update(copy.deepcopy(attention))
    return validate_config(cfg)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "user_saliency_mod.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "user_saliency_mod"
    sys.modules.pop("user_saliency_mod", None)


def test_registry_lists_the_three_feature_families_with_defaults():
    rows = {r["name"]: r for r in list_models("attention")}
    assert {"raw", "pyramid", "itti"} <= set(rows)
    assert all(rows[n]["kind"] == "saliency" for n in ("raw", "pyramid", "itti"))
    assert rows["pyramid"]["params"] == "levels=3, sigma=1.0"
    assert "history" not in rows["itti"]["params"]  # the streamed history is not a model parameter


def test_default_config_models_give_todays_labels_and_store_names():
    cfg = yaml.safe_load((SCHEMA_PATH.parent / "config.yaml").read_text())
    cfg["tracks"] = ["attention"]
    cfg["aggregate"]["leaderboards"] = []  # the default pages name motion and intphys, not run here
    models = saliency_models(validate_config(cfg))
    rows = [(r["features"], r["L"]) for m in models for r in m.rows()]
    assert rows == [("raw", 1), ("raw", 5), ("pyramid", 1), ("pyramid", 3), ("itti", 1), ("itti", 3)]
    assert [m.features for m in models] == ["raw", "pyramid", "itti"]  # results/attention/responses/<key>/


def test_feature_key_is_shared_by_equal_family_and_params_and_differs_otherwise(user_module):
    cfg = _config(models=[
        {"name": "p_default", "algorithm": "pyramid", "L": 1},
        {"name": "p_explicit", "algorithm": "pyramid", "params": {"levels": 3}, "L": 3},
        {"name": "p_other", "algorithm": "pyramid", "params": {"levels": 2}, "L": 1},
        {"name": "mine", "callable": f"{user_module}:edges", "L": 1},
    ])
    keys = [m.features for m in saliency_models(cfg)]
    assert keys[0] == keys[1] == "pyramid"
    assert keys[2].startswith("pyramid-") and len(keys[2]) == len("pyramid-") + 8
    assert keys[3] == f"{user_module}.edges"
    assert feature_key(saliency_models(cfg)[2].spec) == keys[2]  # deterministic


@pytest.mark.parametrize(
    "models, match",
    [
        ([{"features": "raw", "L": 1}], r"attention\.models\[0\].*name: NAME, algorithm: raw \| pyramid \| itti"),
        ([{"name": "x", "algorithm": "raw"}], r"attention\.models\[0\]\.L is required for model 'x' \(kind saliency\)"),
        ([{"name": "x", "algorithm": "horn_schunck", "L": 1}], r"attention\.models\[0\].*belongs to track 'motion'"),
        ([{"name": "x", "algorithm": "pyramid", "params": {"octaves": 2}, "L": 1}],
         r"attention\.models\[0\].*unknown parameter\(s\) \['octaves'\]"),
        ([{"name": "x", "algorithm": "raw", "L": [2]}], r"attention\.models\[0\]\.L.*odd"),
    ],
)
def test_bad_model_entries_name_the_key(models, match):
    cfg = copy.deepcopy(BASE)
    cfg["attention"]["models"] = models
    with pytest.raises(ConfigError, match=match):
        saliency_models(validate_config(cfg))


def test_old_features_section_is_rejected_naming_the_key():
    cfg = copy.deepcopy(BASE)
    cfg["attention"]["features"] = {"raw": {}}
    with pytest.raises(ConfigError, match=r"config key attention: .*'features' was unexpected"):
        validate_config(cfg)


def test_pairs_must_name_configured_movies():
    with pytest.raises(ConfigError, match=r"attention\.pairs.*\['Z'\]"):
        pair_movies(_config(pairs=[["A", "Z"]])["attention"])


def test_user_callable_is_a_feature_family(user_module):
    frames = np.random.default_rng(0).random((7, 30, 40)).astype(np.float32)
    spec = saliency_model(f"{user_module}:edges")
    name, func = spec.name, spec.algorithm.function
    assert name == spec.algorithm.name == f"{user_module}:edges" and spec.algorithm.source == "user"
    maps = feature_maps(frames, model=f"{user_module}:edges", chunk_frames=3, gain=2.0).compute()
    assert maps.shape == (7, 30, 40, 2) and maps.dtype == np.float32
    np.testing.assert_array_equal(maps, func(frames, gain=2.0))
    wrong_shape = r"saliency model 'user_saliency_mod:wrong' returned 'maps' of shape \(1, 30, 40\)"
    with pytest.raises(ValueError, match=wrong_shape):
        feature_maps(frames, model=f"{user_module}:wrong").compute()
