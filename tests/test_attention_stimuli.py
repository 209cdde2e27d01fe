"""Attention stimuli: movie ingestion (OpenCV) and the rendered motion pop-out scene."""

import cv2
import numpy as np
import pytest

from psybench.attention.stimuli import MovieReadError, ingest_movie, render_popout, write_popout_store
from psybench.io.store import open_store


def _write_avi(path, n=20, size=(160, 120), fps=25.0):
    w, h = size
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    assert vw.isOpened()
    for i in range(n):
        img = np.zeros((h, w, 3), np.uint8)
        img[:, : w // 2] = 200  # bright left half
        img[: h // 4, w // 2 :] = 100 if i % 2 else 0  # flicker in the top right
        vw.write(img)
    vw.release()


def test_ingest_movie_downsamples_to_grid(tmp_path):
    movie = tmp_path / "clip.avi"
    _write_avi(movie)
    out = ingest_movie(movie, tmp_path / "clip.zarr", grid=(40, 30), chunk_frames=7)
    store = open_store(out)
    frames = np.asarray(store["frames"])
    assert frames.shape == (20, 30, 40) and frames.dtype == np.float32
    assert store.dims["frames"] == ("t", "y", "x")
    assert store.attrs["frames_per_s"] == pytest.approx(25.0)
    # the container's own timestamps of the decoded frames (40 ms apart from 0)
    np.testing.assert_allclose(store.attrs["frame_times_ms"], np.arange(20) * 40.0)
    assert store.attrs["source_size"] == [160, 120] and store.attrs["grid"] == [40, 30]
    np.testing.assert_allclose(frames[:, 10:, 2:18].mean(), 200 / 255, atol=0.03)  # JPEG tolerance
    assert frames[:, 20:, 25:].max() < 0.05
    assert frames[1, 2, 30] - frames[0, 2, 30] == pytest.approx(100 / 255, abs=0.05)


def test_container_rate_checks_timestamps():
    from psybench.attention.ingest import _container_rate

    even = np.arange(10) * 40.0
    assert _container_rate("m.mp4", 25.0, even, override=False) == 25.0
    assert _container_rate("m.mp4", 0.0, even, override=False) == pytest.approx(25.0)  # rate from timestamps
    uneven = np.r_[even[:5], even[5:] + 30.0]  # a 30 ms hiccup: variable frame rate
    with pytest.raises(MovieReadError, match=r"m\.mp4: frame 5 .*variable frame rate"):
        _container_rate("m.mp4", 25.0, uneven, override=False)
    with pytest.raises(MovieReadError, match="no frame rate"):
        _container_rate("m.mp4", 0.0, np.zeros(1), override=False)


def test_lags_are_placed_by_time():
    from psybench.attention.tuning import LagResolutionError, lag_frames

    assert lag_frames([100, 300], 10.0) == [1, 3]  # whole frames
    # 25 frames/s: 100 ms = 2.5 frames -> frame t-3 is on screen then (Python's round gave 2, i.e. 80 ms)
    assert lag_frames([100, 300], 25.0) == [3, 8]
    assert lag_frames([100, 300], 30.0) == [3, 9]
    assert lag_frames([100, 300], 4.0) == [1, 2]  # 250 ms frames: 100 ms back is still the previous frame
    with pytest.raises(LagResolutionError, match=r"at 2 frames/s the lags 100 ms and 300 ms both fall"):
        lag_frames([100, 300], 2.0)


def test_ingest_movie_errors_name_the_file(tmp_path):
    bad = tmp_path / "garbage.mp4"
    bad.write_bytes(b"this is not a movie" * 10)
    with pytest.raises(MovieReadError, match="garbage.mp4"):
        ingest_movie(bad, tmp_path / "g.zarr")
    with pytest.raises(MovieReadError, match="missing.avi"):
        ingest_movie(tmp_path / "missing.avi", tmp_path / "m.zarr")


def test_popout_is_deterministic_and_target_moves_as_stated():
    a = render_popout(n_frames=12, seed=5)
    b = render_popout(n_frames=12, seed=5)
    np.testing.assert_array_equal(a.frames, b.frames)
    np.testing.assert_array_equal(a.target_xy, b.target_xy)
    c = render_popout(n_frames=12, seed=6)
    assert not np.array_equal(a.frames, c.frames)
    s = render_popout(n_frames=3, seed=0, target_direction_deg=180.0, distractor_direction_deg=0.0,
                      speed_px_s=60.0, frames_per_s=30.0)
    step_t = (s.target_xy[1] - s.target_xy[0] + 320) % 640 - 320
    step_l = (s.lure_xy[1] - s.lure_xy[0] + 320) % 640 - 320
    np.testing.assert_allclose(step_t, [-2.0, 0.0], atol=1e-9)  # leftwards, 60 px/s at 30 frames/s
    np.testing.assert_allclose(step_l, [2.0, 0.0], atol=1e-9)


def test_popout_draws_boxes_where_positions_say():
    s = render_popout(n_frames=5, seed=2, noise_sd=0.0, luminance_range=None, box_luminance=0.7,
                      lure_luminance=0.9, background=0.3)
    for t in range(5):
        tx, ty = (s.target_xy[t] / 16).astype(int)
        lx, ly = (s.lure_xy[t] / 16).astype(int)
        target = s.frames[t, ty, tx]
        assert target == pytest.approx(0.7, abs=1e-6) or target == pytest.approx(0.9, abs=1e-6)
        assert s.frames[t, ly, lx] == pytest.approx(0.9, abs=1e-6)
    assert s.frames.min() == pytest.approx(0.3, abs=1e-6)


def test_write_popout_store_holds_target_track(tmp_path):
    out = write_popout_store(tmp_path / "p.zarr", n_frames=8, seed=1)
    store = open_store(out)
    assert store["target_xy"].shape == (8, 2) and store.dims["target_xy"] == ("t", "coord")
    assert store.attrs["stimulus"]["kind"] == "popout" and store.attrs["stimulus"]["seed"] == 1


def test_bad_grid_names_the_key():
    with pytest.raises(ValueError, match="grid"):
        render_popout(grid=(2, 2))
