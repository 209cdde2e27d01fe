"""pymovements' published dataset layouts, recognised by name and by header, read with pymovements' own
definitions: the real samples pymovements ships (GazeBase, JuDo1000, HBN) and a small file written from the
definition of every dataset whose gaze files are tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psybench.attention.gaze import GazeFormatError, detect_dataset, load_gaze, load_pymovements, write_gaze_table
from psybench.attention.gaze.geometry import deg_to_screen_px
from psybench.io.store import ArraySpec, write_store

pm = pytest.importorskip("pymovements")

DATA = Path(__file__).parent / "data" / "gaze" / "pymovements"


def _raw(path, sep=","):
    return pd.read_csv(path, sep=sep)


def test_real_samples_are_recognised_and_read_as_their_files_say():
    """The oracle is the file text itself (pandas), with the definitions' units: GazeBase n in ms and x/y in deg
    (within a pixel of our own flat-screen formula on its 1680 x 1050 px, 474 mm screen at 550 mm; pymovements'
    centre is (W - 1) / 2 and its pixels are not square), JuDo1000 the mean of both eyes, HBN steps at 120 Hz
    with its definition's centred origin (800 x 600 px, pymovements' centre (399.5, 299.5))."""
    gb_path, jd_path, hbn_path = (DATA / f"{n}_example.csv" for n in ("gazebase", "judo1000", "hbn"))
    assert [detect_dataset(p) for p in (gb_path, jd_path, hbn_path)] == ["GazeBase", "JuDo1000", "HBN"]
    gb, raw = load_gaze(gb_path), _raw(gb_path)
    assert gb.attrs["dataset"] == "GazeBase" and gb.attrs["screen_px"] == [1680.0, 1050.0]
    np.testing.assert_allclose(gb["t_ms"], raw["n"])
    ex, ey = deg_to_screen_px(raw["x"], raw["y"], {"width_px": 1680, "height_px": 1050, "width_mm": 474,
                                                   "distance_mm": 550})
    np.testing.assert_allclose(gb["x"], ex, atol=1.0)
    np.testing.assert_allclose(gb["y"], ey, atol=1.1)
    assert gb["valid"].tolist() == (raw["val"] == 0).tolist()
    jd, raw = load_gaze(jd_path), _raw(jd_path, "\t")
    np.testing.assert_allclose(jd["t_ms"], raw["time"])
    np.testing.assert_allclose(jd["x"], (raw["x_left"] + raw["x_right"]) / 2, rtol=1e-6)
    np.testing.assert_allclose(jd["y"], (raw["y_left"] + raw["y_right"]) / 2, rtol=1e-6)
    hbn, raw = load_gaze(hbn_path), _raw(hbn_path)
    np.testing.assert_allclose(hbn["t_ms"], raw["time"] * 1000 / 120)
    np.testing.assert_allclose(hbn["x"], raw["x_pix"] + 399.5, rtol=1e-6)
    np.testing.assert_allclose(hbn["y"], raw["y_pix"] + 299.5, rtol=1e-6)
    # by name, case-insensitive, and with the origin overridden (config wins)
    own = load_gaze(hbn_path, fmt="pymovements:hbn", origin="upper left")
    np.testing.assert_allclose(own["x"], raw["x_pix"], rtol=1e-6)


def _layouts():
    out = []
    for name in pm.DatasetLibrary.names():
        gaze = [r for r in pm.DatasetLibrary.get(name).resources if r.content == "gaze"]
        kw = (gaze[0].load_kwargs or {}) if gaze else {}
        if gaze and gaze[0].load_function is None and (kw.get("pixel_columns") or kw.get("position_columns")) \
                and not str(gaze[0].filename_pattern).endswith(".asc"):
            out.append(name)
    return out


LAYOUTS = _layouts()
N = 5


def _write_sample(tmp_path, name):
    """A small gaze file in dataset ``name``'s layout, from its pymovements definition: time 0..4 in the
    definition's unit, eye k at x = 100 + 10 k + i, y = 50 + 10 k + 2 i (deg datasets: x = i / 10, y = 0)."""
    definition = pm.DatasetLibrary.get(name)
    res = next(r for r in definition.resources if r.content == "gaze")
    kw = res.load_kwargs or {}
    read = kw.get("read_csv_kwargs") or {}
    pos = list(kw.get("pixel_columns") or kw.get("position_columns"))
    time = kw.get("time_column")
    overrides = read.get("schema_overrides") if isinstance(read.get("schema_overrides"), dict) else {}
    columns = list(read.get("columns") or overrides or [])
    raw_name = {v: k for k, v in (kw.get("column_map") or {}).items()}
    for c in ([time] if time is not None else []) + pos + [raw_name.get(t, t) for t in kw.get("trial_columns") or []]:
        if c not in columns:
            columns.append(c)
    i = np.arange(N)
    data = {}
    for c in columns:
        dtype = str(overrides.get(c, "Float64"))
        data[c] = ["a"] * N if "String" in dtype else [1] * N if "Int" in dtype else [1.5] * N
    if time is not None:  # InteRead's is '', the header of a written-out pandas index
        data[time] = list(i)
    deg = bool(kw.get("position_columns"))
    for k in range(len(pos) // 2):
        data[pos[2 * k]] = list(i / 10) if deg else list(100.0 + 10 * k + i)
        data[pos[2 * k + 1]] = [0.0] * N if deg else list(50.0 + 10 * k + 2 * i)
    suffix = ".tsv" if read.get("separator") == "\t" and not str(res.filename_pattern).endswith(".csv") else ".csv"
    path = tmp_path / f"{name}_sample{suffix}"
    pd.DataFrame(data)[columns].to_csv(path, sep=read.get("separator", ","), index=False,
                                       header=read.get("has_header", True) is not False)
    return path, definition, kw


@pytest.mark.parametrize("name", LAYOUTS)
def test_every_table_layout_reads_from_its_definition(tmp_path, name):
    path, definition, kw = _write_sample(tmp_path, name)
    got = load_gaze(path, fmt=f"pymovements:{name}")
    screen, rate = definition.experiment.screen, definition.experiment.sampling_rate
    unit = {"ms": 1.0, "us": 1e-3, "s": 1000.0, "step": 1000.0 / rate if rate else np.nan,
            None: 1000.0 / rate if rate else np.nan}[kw.get("time_unit") if kw.get("time_column") is not None else None]
    np.testing.assert_allclose(got["t_ms"], np.arange(N) * unit)
    n_eyes = len(kw.get("pixel_columns") or kw.get("position_columns")) // 2
    i = np.arange(N)
    if kw.get("position_columns"):  # degrees: within a pixel of the flat-screen formula
        ex, ey = deg_to_screen_px(i / 10, np.zeros(N),
                                  {"width_px": screen.width_px, "height_px": screen.height_px,
                                   "width_mm": 10 * screen.width_cm, "distance_mm": 10 * screen.distance_cm})
        np.testing.assert_allclose(got["x"], ex, atol=1.0)
        np.testing.assert_allclose(got["y"], ey, atol=1.0)
    else:
        k = (n_eyes - 1) / 2 if n_eyes in (1, 2) else 2  # one eye; the mean of two; the cyclopean third
        shift = ((screen.width_px - 1) / 2, (screen.height_px - 1) / 2) if screen.origin == "center" else (0, 0)
        np.testing.assert_allclose(got["x"], 100 + 10 * k + i + shift[0], rtol=1e-6)
        np.testing.assert_allclose(got["y"], 50 + 10 * k + 2 * i + shift[1], rtol=1e-6)
    assert got.attrs["screen_px"] == [float(screen.width_px), float(screen.height_px)]
    # recognised by its header where the layout has one and no other dataset declares the same columns
    read = kw.get("read_csv_kwargs") or {}
    if read.get("has_header") is False:
        assert detect_dataset(path) is None
        return
    try:
        found = detect_dataset(path)
    except GazeFormatError as exc:  # two datasets with one layout: the error names both
        assert name in str(exc) and "set gaze_format to one of" in str(exc)
        return
    assert found == name


def test_unknown_or_non_table_datasets_are_named(tmp_path):
    p = DATA / "hbn_example.csv"
    with pytest.raises(ValueError, match=r"pymovements has no dataset 'NoSuch'; known: \["):
        load_pymovements(p, dataset="NoSuch")
    with pytest.raises(ValueError, match="DIDEC.*read by from_begaze"):
        load_pymovements(p, dataset="DIDEC")
    with pytest.raises(ValueError, match="ToyDatasetEyeLink.*EyeLink .asc recordings; load them with gaze_format"):
        load_pymovements(p, dataset="ToyDatasetEyeLink")
    with pytest.raises(GazeFormatError, match=r"hbn_example\.csv: not readable as pymovements dataset JuDo1000"):
        load_pymovements(p, dataset="JuDo1000")


def test_config_names_a_dataset_and_the_gaze_stage_uses_its_screen(tmp_path, monkeypatch):
    """JuDo1000's screen (1280 x 1024 px) and a 640 x 512 movie filling it: the binocular mean (645.05, 530.1)
    of the first sample is movie (322.525, 265.05); an unknown dataset is a config error naming the key."""
    from psybench.attention.config_checks import check_config
    from psybench.config import ConfigError, check_schema

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.mp4").write_bytes(b"")

    store = write_store(tmp_path / "m.zarr", {"frames": ArraySpec(np.zeros((40, 3, 4), np.float32), ("t", "y", "x"))},
                        {"frames_per_s": 100.0, "grid": [4, 3], "source_size": [640, 512]})
    rec = tmp_path / "1_1.csv"
    rec.write_text((DATA / "judo1000_example.csv").read_text().replace("\t8005", "\t"))  # times from 274 ms
    entry = {"file": "m.mp4", "gaze": "1_1.csv", "gaze_format": "pymovements:JuDo1000"}
    models = [{"name": "raw", "algorithm": "raw", "L": [1]}]
    cfg = check_schema({"tracks": ["attention"], "attention": {"movies": {"m": entry}, "models": models}})
    check_config(cfg, {})
    write_gaze_table("m", cfg["attention"]["movies"]["m"], store, tmp_path / "g.csv", counts_out=tmp_path / "c.csv")
    n = pd.read_csv(tmp_path / "c.csv").iloc[0]
    assert (n["samples"], n["screen_px"], n["screen_from"], n["size_mm_from"]) == (10, "1280x1024", "file", "file")
    raw = load_gaze(rec, fmt="pymovements:JuDo1000")
    assert raw[["x", "y"]].iloc[0].tolist() == pytest.approx([645.05, 530.1], abs=1e-4)
    bad = {**entry, "gaze_format": "pymovements:Nope"}
    bad = check_schema({"tracks": ["attention"], "attention": {"movies": {"m": bad}, "models": models}})
    with pytest.raises(ConfigError, match=r"attention\.movies\.m\.gaze_format.*no dataset 'Nope'"):
        check_config(bad, {})
