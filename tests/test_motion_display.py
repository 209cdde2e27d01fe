import warnings

import numpy as np
import pytest

from psybench.motion.display import Display, TemporalAliasingWarning, direction_deg, wrap_deg


def test_default_mapping_conversions():
    d = Display()
    assert d.deg_to_px(2.5) == 20.0
    assert d.speed_to_px_per_frame(10.0) == pytest.approx(0.8)
    assert d.px_per_frame_to_speed(0.8) == pytest.approx(10.0)
    assert d.ms_to_frames(500) == 50
    assert d.frame_ms == 10.0


def test_original_benchmark_mapping():
    # RR-7317 conventions: 8 px/deg and 16 frames/s give 1 deg/s = 0.5 px/frame
    d = Display(px_per_deg=8, frames_per_s=16)
    assert d.speed_to_px_per_frame(1.0) == pytest.approx(0.5)


def test_michelson_levels():
    d = Display(background=0.5)
    lo, hi = d.contrast_levels(0.4)
    assert (hi - lo) / (hi + lo) == pytest.approx(0.4)
    assert (hi + lo) / 2 == pytest.approx(0.5)
    with pytest.raises(ValueError, match="contrast"):
        d.contrast_levels(1.5)


def test_aliasing_warning_at_nyquist_only():
    d = Display(px_per_deg=8, frames_per_s=100)
    # period 1 deg = 8 px; Nyquist displacement 4 px/frame = 50 deg/s
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not d.check_temporal_aliasing(40.0, spatial_period_deg=1.0)
    with pytest.warns(TemporalAliasingWarning, match="Nyquist"):
        assert d.check_temporal_aliasing(50.0, spatial_period_deg=1.0)


@pytest.mark.parametrize("key,value", [("px_per_deg", 0), ("frames_per_s", -1), ("width_px", 2.5), ("background", 1.0)])
def test_invalid_display_names_key(key, value):
    with pytest.raises(ValueError, match=f"display.{key}"):
        Display(**{key: value})


def test_from_config_rejects_unknown_key():
    with pytest.raises(ValueError, match="px_per_degree"):
        Display.from_config({"px_per_degree": 8})
    assert Display.from_config(Display().to_attrs()) == Display()


def test_direction_convention_visual_y_up():
    assert direction_deg(1.0, 0.0) == pytest.approx(0.0)
    assert direction_deg(0.0, -1.0) == pytest.approx(90.0)  # image v < 0 is upward
    assert direction_deg(-1.0, 0.0) == pytest.approx(180.0)
    np.testing.assert_allclose(wrap_deg([190.0, -190.0, 360.0]), [-170.0, 170.0, 0.0])


def _schema_display():
    import yaml

    from psybench.config import SCHEMA_PATH

    return yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["display"]["properties"]


def test_every_display_default_is_the_schema_default():
    # the workflow fills config defaults from the schema; Display() (tests, notebooks)
    # must describe the same display, field by field
    import dataclasses

    schema = _schema_display()
    fields = {f.name: f.default for f in dataclasses.fields(Display)}
    assert set(schema) == set(fields)
    for key, default in fields.items():
        assert "default" in schema[key], f"display.{key} has no schema default"
        assert schema[key]["default"] == default, key
    assert Display.from_config({k: v["default"] for k, v in schema.items()}).to_attrs() == Display().to_attrs()


def test_the_frame_rate_has_one_form_whatever_the_config_wrote():
    # YAML ``frames_per_s: 100`` (int), a generalisation level 100.0 and the default give
    # one display and the same store attributes (JSON 100.0, not 100 in some stores)
    import json

    from_yaml = Display.from_config({"frames_per_s": 100, "px_per_deg": 8, "width_px": 256.0})
    assert from_yaml == Display(frames_per_s=100.0) == Display()
    attrs = from_yaml.to_attrs()
    assert type(attrs["frames_per_s"]) is float and type(attrs["px_per_deg"]) is float
    assert type(attrs["width_px"]) is int
    assert json.dumps(attrs, sort_keys=True) == json.dumps(Display().to_attrs(), sort_keys=True)
    with pytest.raises(ValueError, match="display.frames_per_s"):
        Display(frames_per_s="100")
