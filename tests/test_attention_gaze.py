"""Gaze loaders (CSV, CRCNS eye-1, DIEM, GazeCom), resampling, I-VT, synthetic observers, controls."""

import numpy as np
import pandas as pd
import pytest

from psybench.attention import gaze as gz
from psybench.attention.stimuli import render_popout


def test_csv_loader(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("subject,t,x,y\ns1,0,10,20\ns1,16.7,11,21\ns2,0,300,200\n")
    df = gz.load_gaze(p, movie="A")
    assert list(df.columns) == gz.SAMPLE_COLUMNS
    assert df["subject"].tolist() == ["s1", "s1", "s2"] and (df["movie"] == "A").all()
    np.testing.assert_allclose(df["x"], [10, 11, 300])
    assert df["valid"].all()


def test_csv_loader_errors_name_file_and_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("subject,t,x,y\ns1,0,10,20\ns1,abc,11,21\n")
    with pytest.raises(gz.GazeFormatError, match=r"bad\.csv, line 3"):
        gz.load_csv(p)
    q = tmp_path / "cols.csv"
    q.write_text("who,t,x,y\ns1,0,1,2\n")
    with pytest.raises(gz.GazeFormatError, match=r"cols\.csv.*subject"):
        gz.load_csv(q)


def test_crcns_loader(tmp_path):
    p = tmp_path / "JZ-beverly01.e-ceyeS"
    p.write_text(
        "period = 240Hz\nppd = 34.0\ntrash = 1\n# comment\n"
        "0 0 0 0\n"  # trashed
        "100.0 200.0 5.0 0\n"
        "101.0 201.0 5.0 2\n"  # blink
        "102.0 202.0 5.0 1\n"
    )
    df = gz.load_gaze(p)
    assert df["subject"].iloc[0] == "JZ" and df["movie"].iloc[0] == "beverly01"
    np.testing.assert_allclose(df["t_ms"], [0, 1000 / 240, 2000 / 240])
    np.testing.assert_allclose(df["x"], [100, 101, 102])
    assert df["valid"].tolist() == [True, False, True]
    assert df.attrs["px_per_deg"] == 34.0


def test_crcns_malformed_row(tmp_path):
    p = tmp_path / "S-c.e-ceyeS"
    p.write_text("period = 240Hz\n1 2 3 4\n1 2 3 4 5\n")
    with pytest.raises(gz.GazeFormatError, match=r"S-c\.e-ceyeS, line 3"):
        gz.load_crcns(p)


def test_diem_loader(tmp_path):
    p = tmp_path / "p01_movie1.txt"
    p.write_text("1\t100\t50\t3.1\t1\t110\t52\t3.0\t1\n2\t0\t0\t0\t0\t120\t60\t3.0\t1\n3\t0\t0\t0\t0\t0\t0\t0\t0\n")
    df = gz.load_gaze(p, fmt="diem")
    assert df["subject"].iloc[0] == "p01" and df["movie"].iloc[0] == "movie1"
    np.testing.assert_allclose(df["t_ms"], [0, 1000 / 30, 2000 / 30])
    np.testing.assert_allclose(df["x"].iloc[:2], [105, 120])
    assert df["valid"].tolist() == [True, True, False]
    bad = tmp_path / "p02_movie1.txt"
    bad.write_text("1\t100\t50\n")
    with pytest.raises(gz.GazeFormatError, match=r"p02_movie1\.txt, line 1"):
        gz.load_diem(bad)


def test_gazecom_loader(tmp_path):
    p = tmp_path / "AAF_beach.txt"
    p.write_text("gaze 1280 720\ngeometry distance 0.56 0.4 0.225\n1000000 640 360 1.0\n1004000 641 361 0.0\n")
    df = gz.load_gaze(p)
    np.testing.assert_allclose(df["t_ms"], [1000.0, 1004.0])  # as recorded (us -> ms), no onset subtraction
    assert df["valid"].tolist() == [True, False]
    assert df.attrs["geometry"] == {"distance": 0.56, "width": 0.4, "height": 0.225}
    assert df.attrs["screen_px"] == [1280, 720]
    bad = tmp_path / "x.txt"
    bad.write_text("gaze 1280 720\n1000 1 2\n")
    with pytest.raises(gz.GazeFormatError, match=r"x\.txt, line 2"):
        gz.load_gazecom(bad)


def test_resample_to_frames_averages_valid_samples():
    s = pd.DataFrame({"subject": "a", "movie": "m", "t_ms": [0, 10, 20, 40, 70], "x": [0, 2, 4, 6, 100],
                      "y": [1, 1, 1, 1, 1], "valid": [True, True, True, True, False]})
    f = gz.resample_to_frames(s, frames_per_s=40, n_frames=3)  # 25 ms frames
    assert list(f.columns) == gz.FRAME_COLUMNS
    np.testing.assert_allclose(f["x"].to_numpy()[:2], [2.0, 6.0])
    assert f["valid"].tolist() == [True, True, False]


def test_ivt_marks_fast_samples():
    t = np.arange(6) * 10.0
    x = np.array([0, 0.1, 0.2, 20, 20.1, 20.2])  # one 19.8 px jump in 10 ms
    s = pd.DataFrame({"subject": "a", "movie": "m", "t_ms": t, "x": x, "y": 0.0, "valid": True})
    out = gz.ivt_filter(s, px_per_deg=10.0, threshold_deg_s=30.0)  # 0.1 px / 10 ms = 1 deg/s; jump = 198 deg/s
    assert out["valid"].tolist() == [True, True, True, False, True, True]


def test_synthetic_observers_follow_their_preference():
    sc = render_popout(n_frames=90, seed=4)
    raw = gz.synthetic_observers(sc.target_xy, sc.lure_xy, p_target=[1.0, 0.0], frames_per_s=30,
                                 source_size=(640, 480), seed=3)
    again = gz.synthetic_observers(sc.target_xy, sc.lure_xy, p_target=[1.0, 0.0], frames_per_s=30,
                                   source_size=(640, 480), seed=3)
    pd.testing.assert_frame_equal(raw, again)
    f = gz.resample_to_frames(raw, frames_per_s=30, n_frames=90)
    for subj, obj in (("obs00", sc.target_xy), ("obs01", sc.lure_xy)):
        g = f[f["subject"] == subj]
        d = np.hypot(*(g[["x", "y"]].to_numpy() - obj).T)
        assert np.median(d) < 25  # within ~1.5 grid cells of the preferred object
    # fixations: gaze speed is low most of the time, with a few saccades
    step = np.hypot(*np.diff(raw[raw["subject"] == "obs00"][["x", "y"]].to_numpy(), axis=0).T)
    assert np.median(step) < 10 and step.max() > 50  # pursuit at 1.7 px/sample + 3 px noise; saccades


def test_random_controls_shapes_and_statistics():
    rs = gz.random_saccade_scanpaths(200, source_size=(640, 480), frames_per_s=30, seed=0, n=2, jump_prob=0.1)
    assert set(rs["subject"]) == {"rs00", "rs01"} and len(rs) == 400
    assert rs["x"].between(0, 640).all() and rs["y"].between(0, 480).all()
    human = np.cumsum(np.random.default_rng(1).normal(0, 3, size=(300, 2)), axis=0) + [320, 240]
    rp = gz.random_physiological_scanpaths([human], 300, source_size=(640, 480), frames_per_s=30, seed=0)
    step = np.hypot(*np.diff(rp[["x", "y"]].to_numpy(), axis=0).T)
    h_step = np.hypot(*np.diff(human, axis=0).T)
    assert 0.5 < np.median(step) / np.median(h_step) < 2.0  # step lengths drawn from the human ones
    np.testing.assert_allclose(rp[["x", "y"]].to_numpy()[0], [320, 240])  # starts at the centre


def test_random_physiological_spill_search_keeps_step_persistence():
    """RP samples p(d(t+1) | d(t)) (section 5.1): runs of small and of large steps persist."""
    rng = np.random.default_rng(3)
    steps = []
    for _ in range(60):  # 20 small steps (fixation) then 5 large ones (saccade), in random directions
        for d in [1.0] * 20 + [40.0] * 5:
            a = rng.uniform(0, 2 * np.pi)
            steps.append([d * np.cos(a), d * np.sin(a)])
    track = np.vstack([[0.0, 0.0], np.cumsum(steps, axis=0)]) + [5000.0, 5000.0]  # far from any edge
    rp = gz.random_physiological_scanpaths([track], 3000, source_size=(20000, 20000), frames_per_s=30, seed=1,
                                           spill=0.05)
    d = np.hypot(*np.diff(rp[["x", "y"]].to_numpy(), axis=0).T)
    big = d > 20
    p_big_after_big = big[1:][big[:-1]].mean()
    p_big_after_small = big[1:][~big[:-1]].mean()
    # human conditionals: P(big | big) = 4/5, P(big | small) = 1/20; marginal 1/5
    assert abs(p_big_after_big - 0.8) < 0.08 and p_big_after_small < 0.1
    assert abs(big.mean() - 0.2) < 0.05
    # spill = 1 searches all time points: the dependence on the previous step is gone
    rp = gz.random_physiological_scanpaths([track], 3000, source_size=(20000, 20000), frames_per_s=30, seed=1,
                                           spill=1.0)
    d = np.hypot(*np.diff(rp[["x", "y"]].to_numpy(), axis=0).T)
    big = d > 20
    assert big[1:][big[:-1]].mean() < 0.3  # measured 0.17 (0.81 with spill 0.05)
