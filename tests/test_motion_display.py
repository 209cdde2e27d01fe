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
