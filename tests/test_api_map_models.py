"""Map-output attention models (kind ``map``) through ``psybench.score`` and the config.

A map model has no Fisher tuning and no Table 1: ``psybench.score`` gives its untuned
rows, the ones the workflow's ``attention_map_scores`` jobs write (Bylinskii et al.
2019's metrics and Shic & Scassellati 2007, sec. 5.2's rank percentile).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import TINY_ATTENTION_CONFIG

import psybench
from psybench.aggregate.table import SCORE_COLUMNS
from psybench.api import score_config
from psybench.attention.map_models import map_model_scores
from psybench.attention.models import map_models_of, row_algorithms, saliency_models
from psybench.config import ConfigError, track_models

PAIRS = {("A", "A"), ("A", "B")}


def _check_rows_equal_direct_scores(rows, name, work, entry):
    """Each pair's rows equal map_model_scores on the stores the call wrote (the test movie, its gaze)."""
    assert list(rows.columns) == [*SCORE_COLUMNS, "data"]  # attention rows say recorded / synthetic
    assert set(rows["model"]) == {f"{name} untuned map"}
    assert set(rows["experiment"]) == {f"{tr}_on_{te}" for tr, te in PAIRS}
    for tr, te in PAIRS:
        got = rows[rows["experiment"] == f"{tr}_on_{te}"].set_index("metric")["value"]
        want = map_model_scores(entry, work / "stimuli" / f"{te}.zarr", work / "gaze" / f"{te}.csv",
                                same_movie=tr == te, lags_ms=[100, 300], n_splits=5)["scores"]
        assert set(got.index) == set(want) and "rank_percentile" in want
        for metric, value in want.items():
            assert got[metric] == pytest.approx(value, rel=1e-12, nan_ok=True), (tr, te, metric)


def test_builtin_centre_bias_gives_its_untuned_map_rows(tmp_path):
    """The registry knows centre_bias is a map model: no kind, no L, its untuned rows on every pair."""
    rows = psybench.score("centre_bias", "attention", config=TINY_ATTENTION_CONFIG, workdir=tmp_path, progress=False)
    _check_rows_equal_direct_scores(rows, "centre_bias", tmp_path, {"name": "centre_bias", "algorithm": "centre_bias"})
    # "attention/saliency_metrics" is every row a map model has
    only = psybench.score("centre_bias", "attention/saliency_metrics", config=TINY_ATTENTION_CONFIG, progress=False)
    np.testing.assert_array_equal(only["value"], rows["value"])
    # the pop-out target is off-centre on some frames: the centre prior is no perfect observer
    rp = rows[rows["metric"] == "rank_percentile"]["value"]
    assert ((rp > 0) & (rp < 100)).all()


def test_user_map_function_is_scored_untuned(tmp_path):
    """A plain function of RGB frames (b, H, W, 3) -> maps (b, H, W), kind map, named by its function."""
    def brightness(frames, *, gain=1.0):
        return gain * np.asarray(frames, np.float64).mean(-1)

    rows = psybench.score(brightness, "attention", kind="map", config=TINY_ATTENTION_CONFIG, workdir=tmp_path,
                          progress=False)
    _check_rows_equal_direct_scores(rows, "brightness", tmp_path, {"name": "brightness", "callable": brightness,
                                                                   "kind": "map"})
    centre = psybench.score("centre_bias", "attention", config=TINY_ATTENTION_CONFIG, progress=False)
    assert not np.array_equal(rows["value"].to_numpy(), centre["value"].to_numpy())


def test_map_model_errors_say_why():
    with pytest.raises(ValueError, match=r"'centre_bias' is a map-output model .* no Table 1 rows"):
        psybench.score("centre_bias", "attention/table1", config=TINY_ATTENTION_CONFIG, progress=False)
    with pytest.raises(ValueError, match=r"'centre_bias' is a map-output model .* drop L=1"):
        psybench.score("centre_bias", "attention", L=1, config=TINY_ATTENTION_CONFIG, progress=False)


def test_config_knows_a_builtin_map_models_kind():
    """{name, algorithm: centre_bias} needs neither kind nor L; its rows' algorithm is centre_bias;
    a tuned model without L is an error naming the key."""
    cfg = copy.deepcopy(TINY_ATTENTION_CONFIG)
    cfg["attention"]["models"].append({"name": "cb", "algorithm": "centre_bias"})
    cfg = score_config(cfg)
    specs = track_models(cfg, "attention")
    assert [m.name for m in saliency_models(cfg, specs)] == ["raw"]
    assert [m.name for m in map_models_of(cfg, specs)] == ["cb"]
    assert row_algorithms(cfg, specs) == {"cb untuned map": "centre_bias"}
    cfg["attention"]["models"][0].pop("L")
    with pytest.raises(ConfigError, match=r"attention\.models\[0\]\.L is required for model 'raw'"):
        saliency_models(cfg, specs)
