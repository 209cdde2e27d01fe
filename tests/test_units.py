"""The frame clock (psybench.units): one conversion between milliseconds and frames."""

from __future__ import annotations

import numpy as np
import pytest

from psybench.attention.tuning import lag_frames
from psybench.motion.display import Display
from psybench.units import frame_ms, frames_to_ms, ms_to_frames


def test_frame_onsets_are_i_times_1000_over_the_rate():
    assert frame_ms(100) == 10.0
    assert frames_to_ms(3, 30) == 100.0  # 3 * 1000 / 30, one rounding
    t = frames_to_ms(np.arange(4), 25)
    np.testing.assert_array_equal(t, [0.0, 40.0, 80.0, 120.0])


def test_nearest_floor_and_ceil_count_frames_by_hand():
    # 210 ms at 50 frames/s is 10.5 frames: half to even
    assert ms_to_frames(210, 50) == 10 and ms_to_frames(230, 50) == 12
    # 100 ms at 25 frames/s is 2.5 frames: on screen frame 2, covered by 3 frames
    assert ms_to_frames(100, 25, rounding="floor") == 2
    assert ms_to_frames(100, 25, rounding="ceil") == 3
    # a time on a frame onset stays on it despite rounding error (100 * 30 / 1000 < 3 in binary)
    assert ms_to_frames(100, 30, rounding="ceil") == 3
    assert ms_to_frames(frames_to_ms(7, 30), 30, rounding="floor") == 7
    out = ms_to_frames(np.array([0.0, 19.9, 20.0, 39.9]), 50, rounding="floor")
    assert out.dtype == np.int64 and out.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("fps", [0, -10, float("nan"), float("inf")])
def test_a_rate_that_is_not_a_positive_number_is_refused(fps):
    with pytest.raises(ValueError, match="frames_per_s"):
        ms_to_frames(100, fps)


def test_unknown_rounding_is_refused():
    with pytest.raises(ValueError, match="rounding"):
        ms_to_frames(100, 50, rounding="up")


@pytest.mark.parametrize("fps", [10, 24, 25, 30, 50, 60, 100, 200])
def test_motion_display_and_attention_lags_use_the_same_clock(fps):
    display = Display(frames_per_s=fps)
    for ms in (0, 16.7, 100, 250, 300, 1000):
        assert display.ms_to_frames(ms) == ms_to_frames(ms, fps)
    assert display.frame_ms == frame_ms(fps)
    np.testing.assert_array_equal(display.coords(n_t=7)["t"].values, frames_to_ms(np.arange(7), fps))
    assert lag_frames([100.0, 300.0], fps) == [ms_to_frames(lag, fps, rounding="ceil") for lag in (100.0, 300.0)]
