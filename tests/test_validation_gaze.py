"""Gaze samples off the screen or without a time are invalid and counted; empty recordings are errors."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from psybench.attention.gaze import GazeFormatError, mark_invalid, screen_bounds, write_gaze_table
from psybench.attention.gaze.columns import sample_table
from psybench.io.store import ArraySpec, write_store

W, H = 640, 480


def test_mark_invalid_counts_each_reason():
    x = [10.0, 1e9, 320.0, -0.05 * W, -0.2 * W, 320.0, 100.0]
    y = [10.0, 5.0, 240.0, 240.0, 240.0, H * 1.09, 100.0]
    t = [0.0, 4.0, np.nan, 12.0, 16.0, 20.0, 24.0]
    valid = [True, True, True, True, True, True, False]
    out, n = mark_invalid(sample_table("s1", "m", t, x, y, valid), (0, 0, W, H), margin=0.1)
    # kept: the on-screen sample, one 5 % left of the screen, one 9 % below it
    assert out["valid"].tolist() == [True, False, False, True, False, True, False]
    assert n == {"samples": 7, "already_invalid": 1, "no_time": 1, "off_screen": 2, "off_movie": 0,
                 "outside_movie": 0, "valid": 3}
    # a 20 ms movie: the samples at 20 and 24 ms fall in no frame (the one at 24 ms was already invalid)
    out, n = mark_invalid(sample_table("s1", "m", t, x, y, valid), (0, 0, W, H), margin=0.1, duration_ms=20.0)
    assert out["valid"].tolist() == [True, False, False, True, False, False, False]
    assert n["outside_movie"] == 1 and n["valid"] == 2


def test_screen_bounds_in_movie_pixels():
    assert screen_bounds((W, H)) == (0.0, 0.0, W, H)
    # a 640 x 480 movie scaled x2 on a 1280 x 1024 screen ('contain'): 32 px bands above and below,
    # i.e. 16 movie px; stored at half size (320 x 240), every bound halves
    screen = {"width_px": 1280, "height_px": 1024, "movie_px": [640, 480], "fit": "contain"}
    assert screen_bounds((W, H), screen) == pytest.approx((0.0, -16.0, 640.0, 496.0))
    assert screen_bounds((320, 240), screen) == pytest.approx((0.0, -8.0, 320.0, 248.0))


@pytest.fixture
def stimulus(tmp_path):
    path = tmp_path / "movie.zarr"
    attrs = {"frames_per_s": 10.0, "grid": [8, 6], "source_size": [W, H]}
    write_store(path, {"frames": ArraySpec(np.zeros((3, 6, 8), np.float32), ("t", "y", "x"))}, attrs)
    return path


def test_off_screen_samples_leave_the_frame_table_and_are_logged(stimulus, tmp_path, caplog):
    gaze = tmp_path / "s01.csv"
    gaze.write_text("subject,t,x,y\ns01,0,100,100\ns01,50,1e9,1e9\ns01,100,200,200\ns01,nan,300,300\n")
    with caplog.at_level(logging.WARNING, logger="psybench.attention.gaze.validity"):
        table = write_gaze_table("C", {"gaze": [str(gaze)]}, stimulus, tmp_path / "gaze.csv")
    # frame 0 (0-100 ms) averages only the sample at (100, 100); frame 1 has (200, 200)
    assert table.loc[table["frame"] == 0, ["x", "y"]].to_numpy().tolist() == [[100.0, 100.0]]
    assert table.loc[table["frame"] == 1, ["x", "y"]].to_numpy().tolist() == [[200.0, 200.0]]
    assert np.nanmax(table["x"]) < W
    assert f"gaze file {gaze}: 2 of 4 samples valid" in caplog.text
    assert "1 without a finite time, 1 off the screen" in caplog.text


@pytest.mark.parametrize("rows", ["", "s01,0,1e9,1e9\ns01,10,-5000,20\n", "s01,nan,10,10\n"],
                         ids=["header-only", "all-off-screen", "no-time"])
def test_recording_without_a_valid_sample_names_the_file(stimulus, tmp_path, rows):
    gaze = tmp_path / "s02.csv"
    gaze.write_text("subject,t,x,y\n" + rows)
    with pytest.raises(GazeFormatError, match=rf"{gaze}: no valid gaze sample"):
        write_gaze_table("C", {"gaze": [str(gaze)]}, stimulus, tmp_path / "gaze.csv")
    assert not (tmp_path / "gaze.csv").exists()


def test_a_nan_time_never_lands_in_a_frame():
    from psybench.attention.gaze.frames import resample_to_frames

    samples = sample_table("s1", "m", [np.nan, 1e30, 50.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [True, True, True])
    table = resample_to_frames(samples, frames_per_s=10.0, n_frames=2)
    assert table["valid"].tolist() == [True, False] and table["x"].iloc[0] == 3.0
