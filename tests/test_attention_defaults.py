"""The attention defaults are written once: the library's constants agree with config/schema.yaml."""

import yaml

from psybench.attention import defaults as d
from psybench.config import SCHEMA_PATH


def test_library_defaults_match_the_schema_defaults():
    att = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["attention"]["properties"]
    ev = att["evaluation"]["properties"]
    met = att["metrics"]["properties"]
    assert tuple(att["grid"]["default"]) == d.GRID
    assert att["chunk_frames"]["default"] == d.CHUNK_FRAMES
    assert tuple(float(x) for x in att["lags_ms"]["default"]) == d.LAGS_MS
    assert (ev["n_sets"]["default"], ev["n_negatives"]["default"], ev["min_dist_frac"]["default"]) == (
        d.N_SETS, d.N_NEGATIVES, d.MIN_DIST_FRAC)
    assert (ev["ties"]["default"], ev["scatter"]["default"], ev["seed"]["default"]) == (d.TIES, d.SCATTER, d.SEED)
    assert ev["in_memory_mb"]["default"] == d.IN_MEMORY_MB
    assert (met["density_sigma"]["default"], met["n_splits"]["default"]) == (d.DENSITY_SIGMA, d.N_SPLITS)
    ivt = att["movies"]["additionalProperties"]["properties"]["ivt"]["properties"]
    assert ivt["threshold_deg_s"]["default"] == d.IVT_THRESHOLD_DEG_S


def test_evaluation_settings_are_the_schema_section_field_by_field():
    import dataclasses

    import pytest

    ev = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["attention"]["properties"]["evaluation"]["properties"]
    fields = {f.name: f.default for f in dataclasses.fields(d.EvaluationSettings)}
    assert set(fields) == set(ev)  # every setting of attention.evaluation, and only those
    assert fields == {k: v["default"] for k, v in ev.items()}
    assert d.EvaluationSettings.from_config({}) == d.DEFAULT_EVALUATION
    settings = d.EvaluationSettings.from_config({"n_sets": 2, "ties": "paper"})
    assert (settings.n_sets, settings.ties, settings.seed) == (2, "paper", d.SEED)
    assert d.EvaluationSettings.from_config(settings) is settings
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 3
    with pytest.raises(ValueError, match=r"attention\.evaluation.*n_set"):
        d.EvaluationSettings.from_config({"n_set": 2})
