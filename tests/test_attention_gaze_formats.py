"""Gaze loaders on real public files (GazeCom .coord and ARFF, DIEM event_data, pymovements' dataset samples)
and generated ones.

The real files and their sources and licences are listed in tests/data/gaze/*/README.md.
"""

from pathlib import Path

import numpy as np
import pytest

from psybench.attention import gaze as gz
from psybench.attention.gaze.geometry import deg_to_screen_px, screen_to_movie
from psybench.attention.gaze.tables import load_table

DATA = Path(__file__).parent / "data" / "gaze"


def test_gazecom_coord_as_distributed():
    df = gz.load_gaze(DATA / "gazecom" / "YFK_welpen_20s_1.coord")  # auto: by the .coord suffix
    # header 'geometry distance 0.45 width 0.4 height 0.225' (keyed), screen 1280 x 720
    assert df.attrs["geometry"] == {"distance": 0.45, "width": 0.4, "height": 0.225}
    assert df.attrs["screen_px"] == [1280.0, 720.0]
    assert len(df) == 134 and df["valid"].all()
    # timestamps as recorded: the first sample is at 34000 us = 34 ms, the next at 102 ms
    np.testing.assert_allclose(df["t_ms"].iloc[:3], [34.0, 102.0, 106.0])
    np.testing.assert_allclose(df[["x", "y"]].iloc[0], [768.2, 263.2])


def test_gazecom_arff_as_distributed():
    df = gz.load_gaze(DATA / "gazecom" / "arff_data_example.arff")
    assert df.attrs["metadata"]["distance_mm"] == 450.0 and df.attrs["screen_px"] == [1280.0, 720.0]
    assert len(df) == 127
    np.testing.assert_allclose(df["t_ms"].iloc[:2], [1.0, 5.0])
    np.testing.assert_allclose(df[["x", "y"]].iloc[1], [417.0, 188.1])


def _fails_naming(tmp_path, name, text, match):
    """Write ``text`` to ``name`` and check that loading it fails with ``match`` (file and line)."""
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(gz.GazeFormatError, match=match):
        gz.load_gaze(p)


def _edited(path, line, text):
    lines = path.read_text().splitlines()
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


def test_gazecom_broken_rows_name_file_and_line(tmp_path):
    coord = _edited(DATA / "gazecom" / "YFK_welpen_20s_1.coord", 21, "34000 768.2 oops 1")
    _fails_naming(tmp_path, "bad.coord", coord, r"bad\.coord, line 21.*'oops'")
    _fails_naming(tmp_path, "geo.coord", "gaze 1280 720\ngeometry distance 0.45 width wide height 0.2\n1 2 3 1\n",
                  r"geo\.coord, line 2")
    arff = _edited(DATA / "gazecom" / "arff_data_example.arff", 31, "9000,417.0")
    _fails_naming(tmp_path, "bad.arff", arff, r"bad\.arff, line 31: 2 fields")


def test_crcns_cols_header_is_honoured(tmp_path):
    p = tmp_path / "MC-tv-news.e-ceyeS"
    # columns in a non-default order: by count this would read x=status, y=x
    p.write_text("period = 500Hz\ncols = status x y pd\n0 100 200 5\n2 101 201 5\n0 102 202 5\n")
    df = gz.load_gaze(p)
    np.testing.assert_allclose(df["x"], [100, 101, 102])
    np.testing.assert_allclose(df["t_ms"], [0, 2, 4])
    assert df["valid"].tolist() == [True, False, True]
    _fails_naming(tmp_path, "MC-b.e-ceyeS", "cols = x y status\n1 2 0\n1 2\n", r"MC-b\.e-ceyeS, line 3")
    # iLab markEye's layout: asterisked columns only on saccade-onset rows
    r = tmp_path / "MC-c.e-ceyeS"
    r.write_text("period = 240Hz\nppd = 34\ntrash = 0\ncols = x y pd status *targetx *targety *ampl *interval\n"
                 "10 20 5 0\n11 21 5 1 300 200 8.5 120\n12 22 5 0\n")
    df = gz.load_gaze(r)
    np.testing.assert_allclose(df[["x", "y"]], [[10, 20], [11, 21], [12, 22]])
    # without cols: 4-column rows with 8-column saccade-onset rows
    u = tmp_path / "MC-d.e-ceyeS"
    u.write_text("10 20 5 0\n11 21 5 1 300 200 8.5 120\n12 22 5 2\n")
    assert gz.load_gaze(u)["valid"].tolist() == [True, True, False]


def test_crcns_subject_is_the_folder_in_the_data_sets_layout(tmp_path):
    """CRCNS eye-1 ships data-orig/<subject>/<clip>.e-ceyeS with clips such as tv-news01 (hyphenated).

    Splitting such a stem at its '-' made subject 'tv' and movie 'news01' for every subject,
    merging all subjects of a clip into one.
    """
    rows = "period = 240Hz\nppd = 34\ntrash = 0\n10 20 5 0\n11 21 5 0\n"
    for sub in ("JZ", "VN"):
        (tmp_path / "data-orig" / sub).mkdir(parents=True)
        (tmp_path / "data-orig" / sub / "tv-news01.e-ceyeS").write_text(rows)
    subjects = {gz.load_gaze(tmp_path / "data-orig" / sub / "tv-news01.e-ceyeS")["subject"].iloc[0]
                for sub in ("JZ", "VN")}
    assert subjects == {"JZ", "VN"}
    df = gz.load_gaze(tmp_path / "data-orig" / "JZ" / "tv-news01.e-ceyeS")
    assert set(df["movie"]) == {"tv-news01"} and df.attrs["px_per_deg"] == 34.0
    (tmp_path / "gaze" / "CZ").mkdir(parents=True)  # copied elsewhere, still in its subject's folder
    (tmp_path / "gaze" / "CZ" / "tv-ads01.e-ceyeS").write_text(rows)
    df = gz.load_gaze(tmp_path / "gaze" / "CZ" / "tv-ads01.e-ceyeS")
    assert (df["subject"].iloc[0], df["movie"].iloc[0]) == ("CZ", "tv-ads01")
    (tmp_path / "flat").mkdir()  # the flat <subject>-<clip> naming is kept
    (tmp_path / "flat" / "JZ-beverly01.e-ceyeS").write_text(rows)
    df = gz.load_gaze(tmp_path / "flat" / "JZ-beverly01.e-ceyeS")
    assert (df["subject"].iloc[0], df["movie"].iloc[0]) == ("JZ", "beverly01")


def test_diem_event_flags_and_screen_mapping(tmp_path):
    p = tmp_path / "diem1s_ami_ib_1280x720.txt"
    p.write_text(
        "1\t700\t500\t3.1\t1\t720\t500\t3.0\t2\n"  # both eyes valid (fixation, saccade)
        "2\t650\t480\t3.1\t0\t660\t490\t3.0\t1\n"  # left eye blink -> right only
        "3\t640\t480\t0\t-1\t640\t480\t0\t0\n"  # error and blink: invalid though coordinates look fine
    )
    df = gz.load_diem(p, screen_px=(1280, 960), movie_px=(1280, 720))  # movie centred, 120 px bars
    np.testing.assert_allclose(df["x"].iloc[:2], [710, 660])
    np.testing.assert_allclose(df["y"].iloc[:2], [500 - 120, 490 - 120])
    assert df["valid"].tolist() == [True, True, False]
    _fails_naming(tmp_path, "p_m.txt", "1\t1\t1\t1\t1\t1\t1\t1\t1\n2\t1\t1\t1\t7\t1\t1\t1\t1\n",
                  r"p_m\.txt, line 2.*event flag 7")


def test_diem_event_data_as_distributed():
    """A real DIEM file (frames 1-330 of diem5s01 on arctic_bears, tab-separated, CRLF) by its own name."""
    f = DATA / "diem" / "diem5s01.asc_15_arctic_bears_1066x710.txt"
    df = gz.load_gaze(f)  # auto: not .csv/.coord/.arff/.e-ceyeS, first line not 'gaze ' -> DIEM
    # DIEM's name <participant>.asc_<n>_<video>: not subject 'diem5s01.asc' and movie '15_arctic...'
    assert set(df["subject"]) == {"diem5s01"} and set(df["movie"]) == {"arctic_bears_1066x710"}
    assert len(df) == 330
    # timestamps as recorded: frame f (from 1) at (f - 1) / 30 s
    np.testing.assert_allclose(df["t_ms"].iloc[[0, 1, 329]], [0.0, 1000 / 30, 329 * 1000 / 30])
    # 36 rows have no eye flagged fixation (1) or saccade (2): blinks (0), with zeros or
    # off-screen coordinates, and two dropped frames (-1, at frames 190-191)
    assert int(df["valid"].sum()) == 294
    assert not df["valid"].iloc[[11, 15, 60, 189, 190]].any()  # frames 12, 16, 61 (1282.3, 1499.6), 190, 191
    # frame 1: both eyes fixating -> their mean; frame 11: left saccade (2), right fixation (1)
    np.testing.assert_allclose(df[["x", "y"]].iloc[0], [(647.4 + 633.9) / 2, (503.8 + 446.2) / 2])
    np.testing.assert_allclose(df[["x", "y"]].iloc[10], [(668.7 + 599.7) / 2, (559.6 + 651.6) / 2])
    # frame 322: left eye fixating, right eye blinking -> the left eye alone
    np.testing.assert_allclose(df[["x", "y"]].iloc[321], [344.3, 678.9])
    assert df["valid"].iloc[321]


def test_diem_real_rows_break_with_file_and_line(tmp_path):
    text = (DATA / "diem" / "diem5s01.asc_15_arctic_bears_1066x710.txt").read_bytes().decode()
    rows = text.split("\r\n")
    rows[189] = "190\t0\t0\t0\t-1\t0\t0\t0"  # a dropped frame that lost its last field
    p = tmp_path / "diem5s01.asc_15_cut.txt"
    p.write_bytes("\r\n".join(rows).encode())
    with pytest.raises(gz.GazeFormatError, match=r"cut\.txt, line 190: 8 fields"):
        gz.load_diem(p)


def test_screen_geometry_against_hand_values():
    x, y = screen_to_movie([0, 1280], [0, 960], (1280, 960), (640, 360), fit="contain")  # scale 2, bars 120 px
    np.testing.assert_allclose(x, [0, 640])
    np.testing.assert_allclose(y, [-60, 420])
    x, y = screen_to_movie([640], [480], (1280, 960), (640, 480), fit="native")
    np.testing.assert_allclose([x[0], y[0]], [320, 240])
    # 45 deg right at 500 mm on a 500 mm wide 1000 px screen: tan 45 * 500 mm = 500 mm = 1000 px right of centre
    x, y = deg_to_screen_px([45.0], [0.0], {"width_px": 1000, "height_px": 600, "width_mm": 500, "distance_mm": 500})
    np.testing.assert_allclose([x[0], y[0]], [1500, 300])


def test_table_loader_reads_dataset_exports_through_a_mapping():
    # GazeBase (pymovements' sample): n in ms, x/y in degrees from the centre, val 0 = valid
    screen = {"width_px": 1680, "height_px": 1050, "width_mm": 474, "distance_mm": 550}
    gb = load_table(DATA / "pymovements" / "gazebase_example.csv",
                    columns={"time": "n", "x": "x", "y": "y", "valid": "val", "valid_values": [0],
                             "position_unit": "deg"}, screen=screen)
    assert len(gb) == 10 and gb["valid"].all()
    np.testing.assert_allclose(gb["t_ms"].iloc[:3], [0, 1, 2])
    ex, ey = deg_to_screen_px(-16.03606, 5.905495, screen)
    np.testing.assert_allclose(gb[["x", "y"]].iloc[0], [ex, ey])
    # JuDo1000: tab-separated .csv, binocular pixels -> mean of the eyes, timestamps as recorded
    jd = load_table(DATA / "pymovements" / "judo1000_example.csv",
                    columns={"time": "time", "x": ["x_left", "x_right"], "y": ["y_left", "y_right"],
                             "subject": "trialId", "sep": "\t"})
    np.testing.assert_allclose(jd[["t_ms", "x", "y"]].iloc[0], [8005274, (649.5 + 640.6) / 2, (531.1 + 529.1) / 2])
    assert jd["subject"].iloc[0] == "1"
    # HBN: time in samples at 120 Hz
    hbn = load_table(DATA / "pymovements" / "hbn_example.csv",
                     columns={"time": "time", "x": "x_pix", "y": "y_pix", "time_unit": "samples",
                              "sampling_rate_hz": 120})
    np.testing.assert_allclose(hbn["t_ms"].iloc[:2], [0, 1000 / 120])


def test_table_loader_errors(tmp_path):
    p = tmp_path / "rec.tsv"
    p.write_text("ts\tgx\tgy\n0\t1\t2\n4\tx\t3\n")
    cols = {"time": "ts", "x": "gx", "y": "gy"}
    with pytest.raises(gz.GazeFormatError, match=r"rec\.tsv, line 3.*'gx'"):
        load_table(p, columns=cols)
    with pytest.raises(gz.GazeFormatError, match=r"missing column\(s\) \['gaze_x'\]"):
        load_table(p, columns={**cols, "x": "gaze_x"})
    with pytest.raises(ValueError, match="unknown key"):
        load_table(p, columns={**cols, "colour": "red"})
    good = tmp_path / "good.tsv"
    good.write_text("ts\tgx\tgy\n0\t1\t2\n")
    with pytest.raises(ValueError, match="width_mm"):
        load_table(good, columns={**cols, "position_unit": "deg"}, screen={"width_px": 10, "height_px": 10})


def test_any_csv_layout_loads_through_the_config_mapping_without_code(tmp_path):
    from psybench.attention.gaze.movie_table import write_gaze_table
    from psybench.config import check_schema
    from psybench.io.store import ArraySpec, write_store

    rec = tmp_path / "lab_export.txt"  # a lab's own layout: semicolons, seconds, normalised, y up, flag column
    rec.write_text("who;secs;gx;gy;ok\nP1;0.00;0.50;0.50;yes\nP1;0.05;0.25;0.75;yes\nP1;0.10;0.9;0.1;no\n")
    entry = {"file": "movie.mp4", "gaze": str(rec), "gaze_format": "table",
             "gaze_columns": {"time": "secs", "time_unit": "s", "x": "gx", "y": "gy", "position_unit": "norm",
                              "y_up": True, "subject": "who", "valid": "ok", "valid_values": ["yes"], "sep": ";"},
             "screen": {"width_px": 1280, "height_px": 960, "movie_px": [640, 480], "fit": "contain"}}
    cfg = check_schema({"tracks": ["attention"], "attention": {"movies": {"m": entry}}})
    spec = cfg["attention"]["movies"]["m"]
    store = write_store(tmp_path / "m.zarr", {"frames": ArraySpec(np.zeros((3, 3, 4), np.float32), ("t", "y", "x"))},
                        {"frames_per_s": 20.0})
    table = write_gaze_table("m", spec, store, tmp_path / "gaze.csv")
    # frame 0: screen centre (640, 480) -> movie centre (320, 240); frame 1: (320, 240) on screen -> (160, 120)
    np.testing.assert_allclose(table[["x", "y"]].iloc[:2], [[320, 240], [160, 120]])
    assert table["subject"].iloc[0] == "P1" and table["valid"].tolist() == [True, True, False]
    bad = {**entry, "gaze_columns": {**entry["gaze_columns"], "time_unit": "minutes"}}
    with pytest.raises(ValueError, match="time_unit"):
        check_schema({"tracks": ["attention"], "attention": {"movies": {"m": bad}}})
