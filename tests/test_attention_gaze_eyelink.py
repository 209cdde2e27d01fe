"""EyeLink ASCII recordings: real edf2asc files from pymovements' tests, read through pymovements.

Oracle: an independent reading of the sample lines (SR Research EyeLink 1000 User
Manual, sec. 4.9: ``<time> <xl> <yl> <pl> [<xr> <yr> <pr>] <flags>``, ``.`` missing).
Sources and licence: tests/data/gaze/eyelink/README.md.
"""

import shutil
from pathlib import Path

import numpy as np
import pytest

from psybench.attention import gaze as gz
from psybench.attention.gaze.loaders import GazeFormatError

DATA = Path(__file__).parent / "data" / "gaze" / "eyelink"


def _oracle(path):
    """(time, mean of the valid eyes, valid) from the sample lines, read by hand."""
    rows = []
    for line in path.read_text().splitlines():
        if line[:1].isdigit():
            tok = line.split()
            eyes = [tok[1 + 3 * e: 4 + 3 * e] for e in range((len(tok) - 2) // 3)]
            ok = [(x, y) for x, y, p in eyes if x != "." and y != "." and float(p) > 0]
            xy = np.mean([[float(x), float(y)] for x, y in ok], axis=0) if ok else [np.nan, np.nan]
            rows.append((float(tok[0]), *xy, bool(ok)))
    return np.array(rows, dtype=float)


@pytest.mark.parametrize("name, n, eyes, screen", [("eyelink_monocular_example.asc", 16, "L", [1280.0, 1024.0]),
                                                   ("eyelink_binocular_example.asc", 368, "LR", [1921.0, 1081.0])])
def test_real_asc_files_match_their_sample_lines(name, n, eyes, screen):
    df = gz.load_gaze(DATA / name)  # auto: by the .asc suffix
    ref = _oracle(DATA / name)
    assert len(df) == n == len(ref)
    assert df.attrs["eyes"] == eyes and df.attrs["sampling_rate_hz"] == 1000.0 and df.attrs["screen_px"] == screen
    np.testing.assert_array_equal(df["t_ms"], ref[:, 0])  # the tracker clock, as recorded
    np.testing.assert_array_equal(df["valid"], ref[:, 3].astype(bool))
    v = df["valid"].to_numpy()
    np.testing.assert_allclose(df[["x", "y"]].to_numpy()[v], ref[v][:, 1:3], atol=1e-9)


def test_binocular_blink_falls_back_to_the_other_eye():
    df = gz.load_eyelink(DATA / "eyelink_binocular_example.asc")
    row = df[df["t_ms"] == 1408787].iloc[0]  # 'SBLINK L': left eye '.', pupil 0; right eye 933.4 568.2
    assert row["valid"] and (row["x"], row["y"]) == (933.4, 568.2)
    assert 0 < (~df["valid"]).sum() < len(df)  # both eyes lost somewhere, not everywhere


def test_onset_message_sets_time_zero():
    df = gz.load_eyelink(DATA / "eyelink_monocular_example.asc", onset_message=r"^SYNCTIME_READING_SCREEN_0$")
    assert df["t_ms"].iloc[0] == 2154556 - 2154598
    with pytest.raises(GazeFormatError, match=r"no MSG line matches onset_message 'MOVIE_START'"):
        gz.load_eyelink(DATA / "eyelink_monocular_example.asc", onset_message="MOVIE_START")


def test_broken_sample_names_file_and_line(tmp_path):
    lines = (DATA / "eyelink_monocular_example.asc").read_text().splitlines(True)
    i = next(k for k, ln in enumerate(lines) if ln.startswith("2154557"))
    lines[i] = lines[i].replace("138.2", "13x.2")
    bad = tmp_path / "bad.asc"
    bad.write_text("".join(lines))
    with pytest.raises(GazeFormatError, match=rf"bad\.asc, line {i + 1}: sample value '13x.2' is neither"):
        gz.load_gaze(bad)
    bad.write_text("** CONVERTED FROM x.edf\nMSG\t1 hello\n")
    with pytest.raises(GazeFormatError, match=r"bad\.asc: no sample lines"):
        gz.load_gaze(bad)


def test_auto_detects_edf2asc_output_by_its_first_line(tmp_path):
    p = tmp_path / "sub_1.txt"
    shutil.copy(DATA / "eyelink_monocular_example.asc", p)
    assert len(gz.load_gaze(p)) == 16 and gz.load_gaze(p)["subject"].iloc[0] == "sub_1"


def test_onset_message_from_config_only_for_eyelink():
    from psybench.attention.gaze.movie_table import _loader_options

    assert _loader_options("m", {"gaze_onset_message": "SYNCTIME"}, "eyelink") == {"onset_message": "SYNCTIME"}
    with pytest.raises(ValueError, match=r"attention.movies.m: gaze_onset_message needs gaze_format 'eyelink'"):
        _loader_options("m", {"gaze_onset_message": "SYNCTIME"}, "auto")
