"""The screen a gaze file states is used when the config gives none (and reported); gaze off the movie's
picture (letterbox bars, past the frame's edge) is invalid and counted, never moved onto edge cells."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psybench.attention.gaze import load_gaze, mark_invalid, recording_screen, write_gaze_table
from psybench.attention.gaze.columns import sample_table
from psybench.io.store import ArraySpec, write_store

DATA = Path(__file__).parent / "data" / "gaze"
ARFF = DATA / "gazecom" / "arff_data_example.arff"
COORD = DATA / "gazecom" / "YFK_welpen_20s_1.coord"
EYELINK = DATA / "eyelink" / "eyelink_monocular_example.asc"


def _store(tmp_path, source_size, n_frames=10, fps=10.0):
    attrs = {"frames_per_s": fps, "grid": [8, 6], "source_size": list(source_size)}
    frames = ArraySpec(np.zeros((n_frames, 6, 8), np.float32), ("t", "y", "x"))
    return write_store(tmp_path / "movie.zarr", {"frames": frames}, attrs)


def _coord(path, screen, rows):
    """A GazeCom ``.coord`` file (Dorr et al. 2010): ``gaze w h``, ``geometry``, samples ``t_us x y conf``."""
    lines = [f"gaze {screen[0]} {screen[1]}", "geometry distance 0.45 width 0.4 height 0.32"]
    lines += [f"{int(t * 1000)} {x} {y} 1" for t, x, y in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_gaze_on_letterbox_bars_is_off_the_movie_not_on_its_edge(tmp_path):
    """A 1280 x 720 movie shown 'contain' on the file's 1280 x 1024 screen: bars of 152 px above and below.
    Gaze on a bar is counted under off_movie and leaves no fixation; gaze on the picture lands where it looked
    (screen (640, 512) is the movie's centre (640, 360); screen (100, 160) is movie (100, 8))."""
    store = _store(tmp_path, (1280, 720))
    rows = [(0, 640, 512), (20, 640, 60), (40, 640, 1000), (100, 100, 160), (120, 640, 1e9), (200, 5, 1010)]
    gaze = _coord(tmp_path / "s01.coord", (1280, 1024), rows)
    counts_out = tmp_path / "c.csv"
    table = write_gaze_table("m", {"gaze": str(gaze)}, store, tmp_path / "g.csv", counts_out=counts_out)
    n = pd.read_csv(counts_out).iloc[0]
    assert (n["samples"], n["off_screen"], n["off_movie"], n["valid"]) == (6, 1, 3, 2)
    assert n["lost_share"] == pytest.approx(1 / 6)  # gaze on the bars is real gaze, not lost data
    frames = table.set_index("frame")
    np.testing.assert_allclose(frames.loc[0, ["x", "y"]].to_numpy(float), [640.0, 360.0])  # 0-100 ms: one sample
    np.testing.assert_allclose(frames.loc[1, ["x", "y"]].to_numpy(float), [100.0, 8.0])
    assert not frames.loc[2, "valid"]  # 200 ms: only the bottom bar was looked at
    assert (n["screen_px"], n["screen_from"], n["movie_px"], n["movie_from"]) == ("1280x1024", "file", "1280x720",
                                                                                  "assumed")


def test_past_the_frame_edge_is_off_the_movie_when_the_screen_is_the_movie(tmp_path):
    """Without any screen, the movie is the screen: a sample 5 % past its edge is within the tracker's margin
    (not off the screen) but looked at no cell of the movie; the edges themselves are on it."""
    W, H = 640, 480
    s = sample_table("s1", "m", [0.0, 1.0, 2.0, 3.0], [-0.05 * W, 0.0, W, 320.0], [10.0, 0.0, H, H + 1.0],
                     [True] * 4)
    out, n = mark_invalid(s, (0, 0, W, H), margin=0.1, movie_area=(0, 0, W, H))
    assert out["valid"].tolist() == [False, True, True, False]
    assert (n["off_screen"], n["off_movie"], n["valid"]) == (0, 2, 2)


def test_file_geometry_fills_what_the_config_leaves_out():
    arff = load_gaze(ARFF)
    screen = recording_screen(arff, None, ARFF, (640, 360))
    assert (screen["width_px"], screen["height_px"], screen["movie_px"], screen["fit"]) == (1280, 720, [640, 360],
                                                                                            "contain")
    assert (screen["width_mm"], screen["height_mm"], screen["distance_mm"]) == (400.0, 225.0, 450.0)
    assert screen["sources"] == {"screen_px": "file", "size_mm": "file", "movie_px": "assumed"}
    # GazeCom's geometry line is in metres: the same screen in mm
    coord = recording_screen(load_gaze(COORD), None, COORD, None)
    assert (coord["width_mm"], coord["height_mm"], coord["distance_mm"]) == pytest.approx((400.0, 225.0, 450.0))
    assert coord["sources"]["movie_px"] == "none"  # no movie size known: positions stay as they are
    # the config wins key by key
    cfg = {"width_px": 1920, "height_px": 1080, "distance_mm": 600, "movie_px": [1280, 720], "fit": "native"}
    mixed = recording_screen(arff, cfg, ARFF, (640, 360))
    assert (mixed["width_px"], mixed["distance_mm"], mixed["width_mm"], mixed["movie_px"]) == (1920, 600, 400.0,
                                                                                               [1280, 720])
    assert mixed["sources"] == {"screen_px": "config", "size_mm": "config+file", "movie_px": "config"}
    # EyeLink: DISPLAY_COORDS 0 0 1279 1023 (SR Research's inclusive pixel coordinates) is a 1280 x 1024 screen
    eyelink = recording_screen(load_gaze(EYELINK), {}, EYELINK, (1280, 1024))
    assert (eyelink["width_px"], eyelink["height_px"]) == (1280, 1024)
    assert eyelink["sources"] == {"screen_px": "file", "size_mm": "none", "movie_px": "assumed"}


def test_a_config_screen_that_disagrees_with_the_file_is_used_and_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="psybench.attention.gaze"):
        screen = recording_screen(load_gaze(COORD), {"width_px": 1920, "height_px": 1080}, COORD, (1280, 720))
    assert (screen["width_px"], screen["height_px"]) == (1920, 1080)
    assert f"gaze file {COORD} states a 1280x720 px screen, the config's screen is 1920x1080 px" in caplog.text


def test_ivt_takes_pixels_per_degree_from_the_files_geometry(tmp_path):
    """GazeCom's own geometry: 1280 px over 400 mm at 450 mm, so one degree at the centre is
    450 tan(1 deg) 1280 / 400 = 25.13 screen px, 12.57 px of the half-size (640 x 360) movie filling the screen.
    Without px_per_deg configured or stored, I-VT uses that, and its saccades are ivt_filter's with it."""
    from psybench.attention.gaze import ivt_filter, to_movie_pixels

    store = _store(tmp_path, (640, 360), n_frames=500, fps=25.0)
    want = 450 * np.tan(np.radians(1.0)) * 1280 / 400 / 2
    spec = {"gaze": str(COORD), "ivt": {"enabled": True}}
    write_gaze_table("m", spec, store, tmp_path / "g.csv", counts_out=tmp_path / "c.csv")
    n = pd.read_csv(tmp_path / "c.csv").iloc[0]
    assert n["px_per_deg"] == pytest.approx(want, rel=1e-12)
    raw = load_gaze(COORD)
    moved = to_movie_pixels(raw, recording_screen(raw, None, COORD, (640, 360)), (640, 360), COORD)
    oracle = ivt_filter(moved, px_per_deg=want)
    assert n["saccade"] == int((moved["valid"].to_numpy() & ~oracle.sort_index()["valid"].to_numpy()).sum()) > 0
    # a CSV states no geometry: the error names the key
    csv = tmp_path / "s.csv"
    csv.write_text("subject,t,x,y\ns,0,1,1\ns,10,2,2\n")
    with pytest.raises(ValueError, match=r"attention\.movies\.m\.ivt: px_per_deg is unknown"):
        write_gaze_table("m", {"gaze": str(csv), "ivt": {"enabled": True}}, store, tmp_path / "h.csv")
