import copy
from pathlib import Path

import pytest
import yaml

from psybench.config import ConfigError, load_config, validate_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cfg():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def test_default_config_is_valid(cfg):
    out = validate_config(copy.deepcopy(cfg))
    assert out["display"]["frames_per_s"] == 100
    assert load_config(ROOT / "config" / "config.yaml")["tracks"]


def test_defaults_are_filled():
    cfg = {"motion": {"models": [{"name": "hs", "algorithm": "horn_schunck"}]}}
    out = validate_config(cfg)
    assert out["display"]["px_per_deg"] == 8
    assert out["motion"]["readout"]["lambda_ms"] == 50
    assert out["motion"]["models"][0]["params"] == {}


def test_misspelt_key_is_named(cfg):
    cfg["motion"]["diamons"] = cfg["motion"].pop("diamonds")
    with pytest.raises(ConfigError, match=r"config key motion: .*'diamons' was unexpected"):
        validate_config(cfg)


def test_negative_diameter_is_named(cfg):
    cfg["motion"]["gratings"]["diameters_deg"][1] = -4
    with pytest.raises(ConfigError, match=r"motion\.gratings\.diameters_deg\[1\]"):
        validate_config(cfg)


def test_unknown_algorithm_is_named(cfg):
    cfg["motion"]["models"].append({"name": "mystery", "algorithm": "no_such_flow"})
    with pytest.raises(ConfigError, match=r"motion\.models\[\d+\].*mystery.*no_such_flow"):
        validate_config(cfg)


def test_unknown_model_parameter_is_named(cfg):
    cfg["motion"]["models"][0]["params"] = {"alhpa": 3}
    with pytest.raises(ConfigError, match=r"motion\.models\[0\].*alhpa"):
        validate_config(cfg)


def test_duplicate_model_name(cfg):
    cfg["motion"]["models"].append(dict(cfg["motion"]["models"][0]))
    with pytest.raises(ConfigError, match="used twice"):
        validate_config(cfg)


def test_unimportable_user_callable_is_named(cfg):
    cfg["motion"]["models"].append({"name": "mine", "callable": "nonexistent_pkg.flow:estimate"})
    with pytest.raises(ConfigError, match=r"mine.*nonexistent_pkg"):
        validate_config(cfg)


def test_bad_display_value(cfg):
    cfg["display"]["frames_per_s"] = 0
    with pytest.raises(ConfigError, match=r"display\.frames_per_s"):
        validate_config(cfg)


def test_yaml_errors_name_the_file(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("display: [unclosed\n")
    with pytest.raises(ConfigError, match="c.yaml"):
        load_config(p)


def test_string_for_numeric_parameter_is_named(cfg):
    i = next(k for k, m in enumerate(cfg["motion"]["models"]) if m.get("algorithm") == "horn_schunck")
    cfg["motion"]["models"][i]["params"] = {"alpha": "1.0e9"}
    with pytest.raises(ConfigError, match=rf"motion\.models\[{i}\].*'alpha' must be a number"):
        validate_config(cfg)
