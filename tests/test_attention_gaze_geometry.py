"""Screen geometry applied to every gaze format in one place, sample counts, recordings outside the movie's time."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psybench.attention.gaze import GazeFormatError, load_gaze, recording_screen, to_movie_pixels, write_gaze_table
from psybench.attention.gaze.movie_table import COUNT_COLUMNS
from psybench.io.store import ArraySpec, write_store

DATA = Path(__file__).parent / "data" / "gaze"
COORD = DATA / "gazecom" / "YFK_welpen_20s_1.coord"
ARFF = DATA / "gazecom" / "arff_data_example.arff"
EYELINK = DATA / "eyelink" / "eyelink_monocular_example.asc"


def _own_valid(path: Path) -> int:
    """The oracle: samples whose own confidence flag is >= 0.5 (GazeCom's loaders' rule), read from the text."""
    text = path.read_text().splitlines()
    if path.suffix == ".arff":
        rows = [ln.split(",") for ln in text[text.index("@DATA") + 1:] if ln.strip()]
    else:
        rows = [ln.split() for ln in text if ln[:1].isdigit()]
    return sum(float(r[3]) >= 0.5 for r in rows)


def _store(tmp_path, source_size, n_frames=25, fps=25.0):
    attrs = {"frames_per_s": fps, "grid": [4, 3], "source_size": list(source_size)}
    frames = ArraySpec(np.zeros((n_frames, 3, 4), np.float32), ("t", "y", "x"))
    return write_store(tmp_path / "movie.zarr", {"frames": frames}, attrs)


def _counts(tmp_path, spec, store):
    write_gaze_table("welpen", spec, store, tmp_path / "gaze.csv", counts_out=tmp_path / "gaze.counts.csv")
    counts = pd.read_csv(tmp_path / "gaze.counts.csv")
    assert list(counts.columns) == COUNT_COLUMNS
    return counts.set_index("file")


def test_real_gazecom_files_keep_their_valid_samples_with_the_screen_geometry(tmp_path, caplog):
    """GazeCom shows its 1280 x 720 movies full-screen on a 1280 x 720 display (the files' own ``gaze`` line /
    ARFF metadata); here the movie is stored at half size (640 x 360). Without any screen in the config the
    files' own screen is used and the movie taken as filling it (said in the log and the counts); with
    ``screen.movie_px`` too, every sample the file itself flags valid stays valid, whichever format."""
    store = _store(tmp_path, (640, 360))
    oracle = {str(COORD): _own_valid(COORD), str(ARFF): _own_valid(ARFF)}
    assert oracle == {str(COORD): 134, str(ARFF): 127}
    files = [str(COORD), str(ARFF)]
    with caplog.at_level(logging.WARNING, logger="psybench.attention.gaze"):
        without = _counts(tmp_path, {"gaze": files}, store)
    assert without["valid"].to_dict() == oracle  # before: positions taken as pixels of the 640 x 360 frame
    assert (without["screen_px"] == "1280x720").all() and (without["screen_from"] == "file").all()
    assert (without["movie_px"] == "640x360").all() and (without["movie_from"] == "assumed").all()
    assert (without["size_mm_from"] == "file").all()
    assert f"gaze file {COORD}: a 1280x720 px screen and no screen.movie_px" in caplog.text
    caplog.clear()
    # the screen size comes from the files; the config gives the movie's size as shown
    with caplog.at_level(logging.WARNING, logger="psybench.attention.gaze"):
        counts = _counts(tmp_path, {"gaze": files, "screen": {"movie_px": [1280, 720], "fit": "contain"}}, store)
    assert counts["valid"].to_dict() == oracle
    assert (counts[["flagged", "no_time", "off_screen", "off_movie", "outside_movie", "saccade"]] == 0).all().all()
    assert counts["samples"].to_dict() == oracle and (counts["lost_share"] == 0).all()
    assert (counts["movie_from"] == "config").all() and (counts["screen_from"] == "file").all()
    assert "loses" not in caplog.text
    # the same with the screen size in the config
    spec = {"gaze": files, "screen": {"width_px": 1280, "height_px": 720, "movie_px": [1280, 720]}}
    counts = _counts(tmp_path, spec, store)
    assert counts["valid"].to_dict() == oracle and (counts["screen_from"] == "config").all()


def test_every_format_goes_through_the_same_mapping():
    """Screen centre of a 1280 x 960 screen is the centre of a 640 x 360 movie shown 'contain' (scale 1/2), and
    the stored frame's source_size rescales it again; GazeCom, ARFF and EyeLink positions all take this path."""
    for path in (COORD, ARFF, EYELINK):
        raw = load_gaze(path)
        raw.loc[0, ["x", "y"]] = [640.0, 480.0]
        screen = recording_screen(raw, {"width_px": 1280, "height_px": 960, "movie_px": [640, 360]}, path)
        out = to_movie_pixels(raw, screen, (320, 180), path)
        np.testing.assert_allclose(out.loc[0, ["x", "y"]].to_numpy(float), [160.0, 90.0])
        # the picture is 1280 x 720 on the screen, 120 px bars above and below: its top left lands on (0, 0)
        raw.loc[0, ["x", "y"]] = [0.0, 120.0]
        out = to_movie_pixels(raw, screen, (320, 180), path)
        np.testing.assert_allclose(out.loc[0, ["x", "y"]].to_numpy(float), [0.0, 0.0], atol=1e-9)
    with pytest.raises(ValueError, match=r"x\.csv: screen\.movie_px needs screen\.width_px"):
        to_movie_pixels(load_gaze(COORD), {"movie_px": [1, 1]}, None, "x.csv")


def test_eyelink_on_the_tracker_clock_fails_at_the_gaze_stage_naming_the_file(tmp_path):
    """The file's samples are at 2,154,556 ms of the tracker's clock; a 100 s movie never overlaps them."""
    store = _store(tmp_path, (1280, 1024), n_frames=2500, fps=25.0)
    with pytest.raises(GazeFormatError, match=rf"{EYELINK}: no valid sample within the movie's 0-100000 ms"):
        write_gaze_table("m", {"gaze": str(EYELINK)}, store, tmp_path / "gaze.csv")
    assert not (tmp_path / "gaze.csv").exists()
    # from the SYNCTIME message (2,096,367 ms) nine samples are 58.2-58.4 s into the movie, seven 242.9 s in
    spec = {"gaze": str(EYELINK), "gaze_format": "eyelink", "gaze_onset_message": "SYNCTIME"}
    table = write_gaze_table("m", spec, store, tmp_path / "gaze.csv", counts_out=tmp_path / "c.csv")
    n = pd.read_csv(tmp_path / "c.csv").iloc[0]
    assert (n["samples"], n["outside_movie"]) == (16, 7) and n["valid"] == 16 - 7 - n["flagged"] > 0
    assert table["valid"].sum() > 0


def test_samples_outside_the_movie_are_counted_not_lost(tmp_path):
    """A recording running 10 ms past a 100 ms movie: the late sample is counted under outside_movie, and the
    recording is not warned about (it lost nothing)."""
    store = _store(tmp_path, (640, 480), n_frames=10, fps=100.0)
    gaze = tmp_path / "s01.csv"
    gaze.write_text("subject,t,x,y\ns01,0,100,100\ns01,50,110,100\ns01,100,120,100\ns01,105,1e9,1e9\n")
    counts = _counts(tmp_path, {"gaze": [str(gaze)]}, store).iloc[0]
    assert (counts["samples"], counts["off_screen"], counts["outside_movie"], counts["valid"]) == (4, 1, 1, 2)
    assert counts["lost_share"] == 0.25 and counts["max_lost_share"] == 0.25


def test_saccades_are_counted_per_file(tmp_path):
    """I-VT on two files at 100 Hz, 10 px per deg: a 100 px step in 10 ms is 1000 deg/s > 30 deg/s, one saccade
    in the first file, none in the second; each file's valid count drops by its own saccades."""
    store = _store(tmp_path, (640, 480), n_frames=10, fps=100.0)
    moving, still = tmp_path / "s01.csv", tmp_path / "s02.csv"
    moving.write_text("subject,t,x,y\ns01,0,100,100\ns01,10,100,100\ns01,20,200,100\ns01,30,200,100\n")
    still.write_text("subject,t,x,y\ns02,0,300,100\ns02,10,300,100\ns02,20,300,100\n")
    spec = {"gaze": [str(moving), str(still)], "ivt": {"enabled": True, "px_per_deg": 10.0}}
    counts = _counts(tmp_path, spec, store)
    assert counts["saccade"].tolist() == [1, 0] and counts["valid"].tolist() == [3, 3]
    assert counts["lost_share"].tolist() == [0.0, 0.0]  # saccades are not lost data


@pytest.mark.workflow
def test_workflow_gaze_stage_writes_counts_and_stops_on_a_recording_outside_the_movie(harness, tmp_path):
    """rules/attention.smk: the gaze job writes the counts beside the gaze table (GazeCom files mapped through
    the config's movie_px: every sample their flags call valid kept), and an EyeLink recording on the tracker
    clock stops its gaze job, the log naming the file."""
    import shutil

    import cv2

    movies = {"W": {"file": "data/clip.avi", "gaze": ["data/welpen.coord", "data/welpen.arff"],
                    "screen": {"movie_px": [1280, 720], "fit": "contain"}},
              "E": {"file": "data/clip.avi", "gaze": "data/s01.asc"}}
    cfg = harness.tiny_attention_config(grid=[8, 6], movies=movies, pairs=[["W", "W"]])
    work = harness.copy(tmp_path / "wf", cfg)
    (work / "data").mkdir()
    for src, dst in ((COORD, "welpen.coord"), (ARFF, "welpen.arff"), (EYELINK, "s01.asc")):
        shutil.copy(src, work / "data" / dst)
    vw = cv2.VideoWriter(str(work / "data" / "clip.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (640, 360))
    for _ in range(20):  # 2 s at 10 frames/s, stored at half GazeCom's 1280 x 720
        vw.write(np.full((360, 640, 3), 128, np.uint8))
    vw.release()
    harness.run(work, "--cores", "1", "results/attention/gaze/W.csv")
    counts = pd.read_csv(work / "results/attention/gaze/W.counts.csv").set_index("file")
    assert counts["valid"].to_dict() == {"data/welpen.coord": _own_valid(COORD), "data/welpen.arff": _own_valid(ARFF)}
    failed = harness.run(work, "--cores", "1", "results/attention/gaze/E.csv", check=False)
    assert failed.returncode != 0
    log = (work / "logs/attention/gaze/E.log").read_text()
    assert "data/s01.asc: no valid sample within the movie's 0-2000 ms" in log
    assert not (work / "results/attention/gaze/E.csv").exists()
