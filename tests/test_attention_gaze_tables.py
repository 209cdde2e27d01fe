"""Table exports the column mapping could not describe before: SMI's ``##`` comment header (with its sampling
rate and screen), message rows between the samples, and no time column (rows at a fixed sampling rate)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psybench.attention.gaze import GazeFormatError, recording_screen, write_gaze_table
from psybench.attention.gaze.tables import load_table
from psybench.io.store import ArraySpec, write_store

DATA = Path(__file__).parent / "data" / "gaze"
BEGAZE = DATA / "smi" / "begaze_example.txt"
HBN = DATA / "pymovements" / "hbn_example.csv"
SMI_COLUMNS = {"time": "Time", "time_unit": "us", "x": "L POR X [px]", "y": "L POR Y [px]",
               "valid": "Pupil Confidence", "valid_values": [1], "keep_rows": {"column": "Type", "values": ["SMP"]}}


def test_smi_begaze_export_reads_as_pymovements_reads_it():
    """pymovements' own test of its BeGaze parser gives the answer: 11 SMP rows at 10000000.123 ...
    10000021.123 ms, x 850.71, y 717.53, the last three with pupil confidence 0; the header states 1000 Hz,
    a 1680 x 1050 px screen of 474 x 297 mm at 700 mm."""
    s = load_table(BEGAZE, columns=SMI_COLUMNS, movie="m")
    want_t = [10000000.123, 10000002.123, 10000004.123, 10000006.123, 10000008.123, 10000011.123, 10000014.345,
              10000017.345, 10000019.123, 10000020.123, 10000021.123]
    np.testing.assert_allclose(s["t_ms"], want_t, rtol=0, atol=1e-6)
    assert (s["x"] == 850.71).all() and (s["y"] == 717.53).all()
    assert s["valid"].tolist() == [True] * 8 + [False] * 3
    assert s.attrs["sampling_rate_hz"] == 1000.0 and s.attrs["screen_px"] == [1680.0, 1050.0]
    assert s.attrs["screen_mm"] == {"width_mm": 474.0, "height_mm": 297.0, "distance_mm": 700.0}
    screen = recording_screen(s, None, BEGAZE, (840, 525))
    assert screen["sources"] == {"screen_px": "file", "size_mm": "file", "movie_px": "assumed"}


def test_smi_without_keep_rows_or_with_comments_kept_names_the_line():
    # the first MSG row (file line 44) has message text where x belongs
    with pytest.raises(GazeFormatError, match=r"begaze_example\.txt, line 44: column 'L POR X \[px\]' value "
                                              r"'# Message: START_A'"):
        load_table(BEGAZE, columns={k: v for k, v in SMI_COLUMNS.items() if k != "keep_rows"})
    with pytest.raises(GazeFormatError, match=r"begaze_example\.txt: not a delimited table"):  # "##" lines kept
        load_table(BEGAZE, columns={**SMI_COLUMNS, "comment": "%"})
    with pytest.raises(ValueError, match=r"keep_rows must be \{column: <name>, values: \[...\]\}"):
        load_table(BEGAZE, columns={**SMI_COLUMNS, "keep_rows": ["SMP"]})


def test_rows_at_a_fixed_rate_instead_of_a_time_column(tmp_path):
    """HBN's time column counts samples at 120 Hz from 0: leaving it out and giving the rate gives the same
    times; each subject's rows are counted on their own; SMI's header rate serves when the config gives none."""
    with_time = load_table(HBN, columns={"time": "time", "time_unit": "samples", "sampling_rate_hz": 120,
                                         "x": "x_pix", "y": "y_pix"})
    without = load_table(HBN, columns={"x": "x_pix", "y": "y_pix", "sampling_rate_hz": 120})
    np.testing.assert_allclose(without["t_ms"], with_time["t_ms"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(without["t_ms"], np.arange(10) * 1000 / 120)
    two = tmp_path / "two.csv"
    two.write_text("who,gx,gy\nA,1,1\nB,2,2\nA,3,3\nA,4,4\nB,5,5\n")
    t = load_table(two, columns={"x": "gx", "y": "gy", "subject": "who", "sampling_rate_hz": 50})
    assert t["t_ms"].tolist() == [0.0, 0.0, 20.0, 40.0, 20.0]
    smi = load_table(BEGAZE, columns={k: v for k, v in SMI_COLUMNS.items() if k not in ("time", "time_unit")})
    np.testing.assert_allclose(smi["t_ms"], np.arange(11.0))  # 1000 Hz from '## Sample Rate:'
    with pytest.raises(ValueError, match=r"gaze_columns for .*two\.csv: 'time' \(column name\) or "
                                         r"'sampling_rate_hz'"):
        load_table(two, columns={"x": "gx", "y": "gy"})


def test_smi_export_through_the_gaze_stage_uses_the_files_screen(tmp_path):
    """The config names columns only: the screen (1680 x 1050 px) comes from the file's '##' header, the movie
    (840 x 525, half size) is taken as filling it, so screen (850.71, 717.53) is movie (425.355, 358.765). SMI's
    times are on the tracker's clock (1e7 ms), so the rows are taken at the header's 1000 Hz from 0 ms."""
    from psybench.config import check_schema

    store = write_store(tmp_path / "m.zarr", {"frames": ArraySpec(np.zeros((2, 3, 4), np.float32), ("t", "y", "x"))},
                        {"frames_per_s": 100.0, "grid": [4, 3], "source_size": [840, 525]})
    cols = {k: v for k, v in SMI_COLUMNS.items() if k not in ("time", "time_unit")}
    entry = {"file": "m.mp4", "gaze": str(BEGAZE), "gaze_format": "table", "gaze_columns": cols}
    spec = check_schema({"tracks": ["attention"], "attention": {"movies": {"m": entry}}})["attention"]["movies"]["m"]
    table = write_gaze_table("m", spec, store, tmp_path / "g.csv", counts_out=tmp_path / "c.csv")
    n = pd.read_csv(tmp_path / "c.csv").iloc[0]
    assert (n["samples"], n["flagged"], n["outside_movie"], n["valid"]) == (11, 3, 0, 8)
    assert (n["screen_px"], n["screen_from"], n["size_mm_from"]) == ("1680x1050", "file", "file")
    np.testing.assert_allclose(table.loc[table["frame"] == 0, ["x", "y"]].to_numpy(float), [[425.355, 358.765]])
