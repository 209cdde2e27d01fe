"""Tests of psybench.motion.stimuli against analytic ground truth."""

import math
import re
import warnings

import numpy as np
import pytest
from scipy import ndimage

from psybench.io.store import open_store
from psybench.motion.display import Display, TemporalAliasingWarning
from psybench.motion.stimuli import (
    FAMILIES,
    Stimulus,
    render,
    render_bar,
    render_barberpole,
    render_dashed_bar,
    render_diamond,
    render_grating,
    stimulus_set,
    write_stimulus,
)

SMALL = Display(width_px=128, height_px=128)


def _centroid(frame, background):
    w = frame.astype(np.float64) - background
    rows, cols = np.indices(w.shape)
    return (w * cols).sum() / w.sum(), (w * rows).sum() / w.sum()


# --- sub-pixel motion -------------------------------------------------------------------
@pytest.mark.parametrize("direction", [0.0, 30.0, 225.0])
def test_bar_centroid_moves_at_exact_subpixel_velocity(direction):
    d = SMALL
    stim = render_bar(d, length_deg=3, width_deg=0.5, tilt_deg=45, direction_deg=direction, speed_deg_s=10,
                      contrast=1.0, duration_ms=300)
    step = 10 * d.px_per_deg / d.frames_per_s  # 0.8 px/frame
    u, v = step * math.cos(math.radians(direction)), -step * math.sin(math.radians(direction))
    np.testing.assert_allclose(stim.attrs["truth"]["velocity_px_per_frame"], [u, v], atol=1e-12)
    c = np.array([_centroid(f, d.background) for f in stim.frames])
    t = np.arange(len(c))
    # the trajectory's slope is the true sub-pixel velocity and it is centred on the display
    assert np.polyfit(t, c[:, 0], 1)[0] == pytest.approx(u, abs=2e-3)
    assert np.polyfit(t, c[:, 1], 1)[0] == pytest.approx(v, abs=2e-3)
    # pixel index i has its centre at i + 0.5 px, so the display centre is at index (W - 1) / 2
    np.testing.assert_allclose(c.mean(axis=0), [(d.width_px - 1) / 2, (d.height_px - 1) / 2], atol=0.01)
    # frame-to-frame steps: the 4 x 4 sample lattice resolves positions to 1/4 px along an
    # edge normal, so the steps scatter by less than that; integer rounding of the position
    # would give steps of 0 or 1 px
    steps = np.diff(c, axis=0)
    bound = 0.07 if direction != 225.0 else 0.2  # 225: a horizontal bar, edges along sample rows
    assert np.abs(steps - [u, v]).max() < bound


def test_point_sampled_bar_equals_oracle_at_analytic_positions():
    d = Display(width_px=64, height_px=64, antialias=False)
    stim = render_bar(d, length_deg=3, width_deg=0.5, tilt_deg=30, direction_deg=20, speed_deg_s=7,
                      contrast=0.5, duration_ms=100)
    x = (np.arange(64) + 0.5 - 32) / 8
    X, Y = np.meshgrid(x, -x)
    n = len(stim.frames)
    axis = math.radians(20 + 90 + 30)
    for i, frame in enumerate(stim.frames):
        t = (i - (n - 1) / 2) / d.frames_per_s  # centre passes the display centre mid-way
        cx, cy = 7 * t * math.cos(math.radians(20)), 7 * t * math.sin(math.radians(20))
        a = (X - cx) * math.cos(axis) + (Y - cy) * math.sin(axis)
        b = -(X - cx) * math.sin(axis) + (Y - cy) * math.cos(axis)
        inside = (np.abs(a) <= 1.5) & (np.abs(b) <= 0.25)
        expected = np.where(inside, 0.75, 0.5).astype(np.float32)
        assert np.array_equal(frame, expected), f"frame {i}"


def test_bar_geometry_orientation_and_normal_direction():
    d = SMALL
    stim = render_bar(d, length_deg=8, width_deg=0.5, tilt_deg=30, direction_deg=0, speed_deg_s=10,
                      contrast=1.0, duration_ms=100)
    assert stim.attrs["normal_direction_deg"] == pytest.approx(30.0)
    assert stim.attrs["orientation_deg"] == pytest.approx(120.0)
    assert stim.attrs["normal_speed_deg_s"] == pytest.approx(10 * math.cos(math.radians(30)))
    # principal axis of the rendered bar (second moments, visual y up) = orientation
    w = stim.frames[0].astype(np.float64) - d.background
    rows, cols = np.indices(w.shape)
    x, y = cols, -rows
    mx, my = (w * x).sum() / w.sum(), (w * y).sum() / w.sum()
    cxx = (w * (x - mx) ** 2).sum()
    cyy = (w * (y - my) ** 2).sum()
    cxy = (w * (x - mx) * (y - my)).sum()
    axis = 0.5 * math.degrees(math.atan2(2 * cxy, cxx - cyy)) % 180
    assert axis == pytest.approx(120.0, abs=0.5)
    # area = length x width
    area_px = (w / (1.0 - d.background)).sum()
    assert area_px == pytest.approx(8 * 0.5 * d.px_per_deg**2, rel=5e-3)


# --- gratings ---------------------------------------------------------------------------
def test_grating_matches_analytic_sinusoid_inside_and_background_outside():
    d = SMALL
    sf, speed, c, direction = 0.27, 37.0, 0.6, 30.0
    stim = render_grating(d, diameter_deg=10, sf_cpd=sf, speed_deg_s=speed, direction_deg=direction,
                          contrast=c, duration_ms=100)
    x = (np.arange(d.width_px) + 0.5 - d.width_px / 2) / d.px_per_deg
    y = (d.height_px / 2 - (np.arange(d.height_px) + 0.5)) / d.px_per_deg
    X, Y = np.meshgrid(x, y)
    r = np.hypot(X, Y)
    half_diag = math.sqrt(0.5) / d.px_per_deg  # a pixel whose centre is this far from the edge is whole
    inside, outside = r < 5 - half_diag, r > 5 + half_diag
    proj = X * math.cos(math.radians(direction)) + Y * math.sin(math.radians(direction))
    for i, frame in enumerate(stim.frames):
        t = i / d.frames_per_s
        expected = d.background * (1 + c * np.cos(2 * np.pi * sf * (proj - speed * t)))
        np.testing.assert_allclose(frame[inside], expected[inside], atol=1e-6)
        assert np.all(frame[outside] == np.float32(d.background))
    assert stim.attrs["temporal_frequency_hz"] == pytest.approx(sf * speed)


def test_grating_michelson_contrast_equals_requested():
    d = SMALL
    # period 16 px: with this phase a pixel centre sits on a peak and one on a trough
    x0 = 0.5 / d.px_per_deg
    stim = render_grating(d, diameter_deg=12, sf_cpd=0.5, speed_deg_s=5, contrast=0.4, duration_ms=50,
                          phase_deg=-360 * 0.5 * x0)
    f = stim.frames[0].astype(np.float64)
    lmax, lmin = f.max(), f.min()
    assert (lmax - lmin) / (lmax + lmin) == pytest.approx(0.4, abs=1e-6)
    assert (lmax + lmin) / 2 == pytest.approx(d.background, abs=1e-6)


def test_default_grating_is_10_hz():
    stim = render_grating(SMALL, diameter_deg=4, duration_ms=50)
    assert stim.attrs["temporal_frequency_hz"] == pytest.approx(10.0, abs=0.01)


@pytest.mark.parametrize("diameter", [3.0, 8.0, 13.0])
def test_aperture_area_is_pi_r_squared(diameter):
    d = SMALL
    # a near-zero spatial frequency makes the carrier 1, so the frame shows the aperture coverage
    stim = render_grating(d, diameter_deg=diameter, sf_cpd=1e-9, speed_deg_s=1, contrast=0.5, duration_ms=20)
    coverage = (stim.frames[0].astype(np.float64) / d.background - 1) / 0.5
    area_deg2 = coverage.sum() / d.px_per_deg**2
    assert area_deg2 == pytest.approx(math.pi * (diameter / 2) ** 2, rel=2e-3)
    assert stim.attrs["aperture_area_deg2"] == pytest.approx(math.pi * (diameter / 2) ** 2)


def test_soft_edge_is_monotone_ramp():
    d = SMALL
    stim = render_grating(d, diameter_deg=12, sf_cpd=1e-9, speed_deg_s=1, contrast=1.0, duration_ms=20,
                          edge_deg=2.0)
    profile = stim.frames[0, d.height_px // 2, d.width_px // 2:].astype(np.float64)
    assert np.all(np.diff(profile) <= 1e-6)
    assert profile[0] == pytest.approx(1.0, abs=1e-6)
    assert profile[-1] == pytest.approx(d.background)


# --- anti-aliasing ----------------------------------------------------------------------
def test_antialias_on_off_differ_only_at_edges():
    on, off = SMALL, Display(width_px=128, height_px=128, antialias=False)
    kw = dict(length_deg=6, width_deg=0.5, tilt_deg=45, speed_deg_s=10, contrast=1.0, duration_ms=100)
    a, b = render_bar(on, **kw).frames, render_bar(off, **kw).frames
    cov = (a - on.background) / (1 - on.background)
    differ = a != b
    assert differ.any()
    partial = (cov > 1e-6) & (cov < 1 - 1e-6)
    assert np.all(partial[differ])  # pixels differ only where an edge crosses them
    assert set(np.unique(b)) <= {np.float32(0.5), np.float32(1.0)}  # point-sampled: two levels

    kw = dict(diameter_deg=9, sf_cpd=0.27, speed_deg_s=37, contrast=1.0, duration_ms=50)
    a, b = render_grating(on, **kw).frames, render_grating(off, **kw).frames
    x = (np.arange(128) + 0.5 - 64) / 8
    r = np.hypot(*np.meshgrid(x, x))
    differ = np.any(a != b, axis=0)
    assert differ.any()
    assert np.all(np.abs(r[differ] - 4.5) <= math.sqrt(0.5) / 8 + 1e-9)


# --- temporal aliasing ------------------------------------------------------------------
def test_aliasing_warning_at_nyquist_and_not_below():
    d = SMALL
    # 2 c/deg = 4 px period: Nyquist displacement 2 px/frame = 25 deg/s at 8 px/deg, 100 Hz
    with pytest.warns(TemporalAliasingWarning, match="Nyquist"):
        render_grating(d, diameter_deg=4, sf_cpd=2.0, speed_deg_s=25.0, duration_ms=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        render_grating(d, diameter_deg=4, sf_cpd=2.0, speed_deg_s=24.0, duration_ms=20)
    with pytest.warns(TemporalAliasingWarning, match="Nyquist"):
        render_barberpole(d, aspect_ratio=2, short_side_deg=4, sf_cpd=2.0, speed_deg_s=25.0, duration_ms=20)
    # solid shapes warn above 4 px/frame
    with pytest.warns(TemporalAliasingWarning):
        render_bar(d, length_deg=1, speed_deg_s=60, contrast=1, duration_ms=20)


# --- diamonds ---------------------------------------------------------------------------
def _va_direction_from_vertices(vertices, direction):
    """Independent oracle: average of the 4 edges' normal velocities (length weighted)."""
    v = np.array([math.cos(math.radians(direction)), math.sin(math.radians(direction))])
    total, weight = np.zeros(2), 0.0
    for k in range(4):
        e = np.subtract(vertices[(k + 1) % 4], vertices[k])
        length = np.hypot(*e)
        n = np.array([e[1], -e[0]]) / length
        total += length * (v @ n) * n
        weight += length
    va = total / weight
    return math.degrees(math.atan2(va[1], va[0]))


@pytest.mark.parametrize("direction", [0.0, 90.0, 180.0, 270.0])
def test_diamond_vector_average_bias_is_44_deg_and_flips_with_handedness(direction):
    biases = {}
    for hand in ("cw", "ccw"):
        stim = render_diamond(SMALL, handedness=hand, direction_deg=direction, size_deg=4, line_width_deg=0.25,
                              contrast=1.0, duration_ms=30)
        va = _va_direction_from_vertices(stim.attrs["vertices_deg"], direction)
        bias = (va - direction + 180) % 360 - 180
        assert bias == pytest.approx(stim.attrs["vector_average_bias_deg"], abs=1e-9)
        assert stim.attrs["vector_average_direction_deg"] == pytest.approx(va % 360, abs=1e-9)
        # edges oblique: no edge parallel or orthogonal to the motion (a type II configuration)
        rel = [(n - direction) % 180 for n in stim.attrs["edge_normals_deg"]]
        assert all(5 < r < 85 or 95 < r < 175 for r in rel)
        biases[hand] = bias
    assert biases["ccw"] == pytest.approx(44.0, abs=1e-6)
    assert biases["cw"] == pytest.approx(-44.0, abs=1e-6)


def test_diamond_rhombus_geometry_and_mirror_images():
    d = SMALL
    kw = dict(direction_deg=0.0, size_deg=6, line_width_deg=0.25, contrast=1.0, duration_ms=50)
    ccw, cw = render_diamond(d, handedness="ccw", **kw), render_diamond(d, handedness="cw", **kw)
    v = np.asarray(ccw.attrs["vertices_deg"])
    sides = np.hypot(*(np.roll(v, -1, axis=0) - v).T)
    np.testing.assert_allclose(sides, 6.0)  # a rhombus of the requested edge length
    e1, e2 = v[1] - v[0], v[3] - v[0]
    angle = math.degrees(math.acos(abs(e1 @ e2) / (np.hypot(*e1) * np.hypot(*e2))))
    assert angle == pytest.approx(ccw.attrs["interior_angle_deg"])
    # CW is CCW mirrored about the motion axis (horizontal here): flip the rows
    diff = np.abs(cw.frames - ccw.frames[:, ::-1, :])
    assert diff.max() < 1e-6
    # the outline passes through the vertices at the middle frame
    mid = len(ccw.frames) // 2
    centre = np.array([0.0, 0.0]) + 10 * (mid - (len(ccw.frames) - 1) / 2) / d.frames_per_s * np.array([1, 0])
    for vx, vy in v + centre:
        col, row = int((vx * 8) + 64), int(64 - vy * 8)
        assert ccw.frames[mid, row, col] > d.background


def test_diamond_rejects_unreachable_bias():
    with pytest.raises(ValueError, match="interior_angle_deg"):
        render_diamond(SMALL, handedness="cw", direction_deg=0, size_deg=4, line_width_deg=0.25, contrast=1,
                       duration_ms=30, interior_angle_deg=60)
    with pytest.raises(ValueError, match="handedness"):
        render_diamond(SMALL, handedness="left", direction_deg=0, size_deg=4, line_width_deg=0.25, contrast=1,
                       duration_ms=30)


# --- dashed bars and barber-poles -------------------------------------------------------
@pytest.mark.parametrize("n_tiles", [1, 3, 5])
def test_dashed_bar_tiles_at_fixed_total_length(n_tiles):
    d = Display(width_px=160, height_px=160)
    stim = render_dashed_bar(d, length_deg=12, n_tiles=n_tiles, gap_fraction=0.3, width_deg=0.5, tilt_deg=45,
                             speed_deg_s=10, contrast=1.0, duration_ms=30)
    frame = stim.frames[0] > d.background + 0.25
    _, count = ndimage.label(frame)
    assert count == n_tiles
    # extent along the bar axis (135 deg) is the total length whatever the number of tiles
    rows, cols = np.nonzero(stim.frames[0] > d.background)
    a = (cols * math.cos(math.radians(135)) - rows * math.sin(math.radians(135))) / d.px_per_deg
    assert a.max() - a.min() == pytest.approx(12.0, abs=0.3)
    p = stim.attrs["tile_period_deg"]
    assert n_tiles * stim.attrs["tile_length_deg"] + (n_tiles - 1) * stim.attrs["gap_deg"] == pytest.approx(12.0)
    assert stim.attrs["tile_length_deg"] == pytest.approx(0.7 * p if n_tiles > 1 else 12.0)


def test_barberpole_axes_and_aperture():
    d = SMALL
    stim = render_barberpole(d, aspect_ratio=3, short_side_deg=4, sf_cpd=1e-9, speed_deg_s=1, contrast=0.5,
                             duration_ms=20)
    assert stim.attrs["grating_normal_deg"] == pytest.approx(45.0)
    assert stim.attrs["long_axis_deg"] == pytest.approx(0.0)
    assert stim.attrs["perceived_direction_deg"] == pytest.approx(0.0)
    cov = (stim.frames[0].astype(np.float64) / d.background - 1) / 0.5
    assert cov.sum() / 64 == pytest.approx(12 * 4, rel=1e-3)
    rows, cols = np.nonzero(cov > 0.5)
    assert (cols.max() - cols.min() + 1) / 8 == pytest.approx(12, abs=0.15)
    assert (rows.max() - rows.min() + 1) / 8 == pytest.approx(4, abs=0.15)
    # drift up-left (135 deg): the long axis within 90 deg of it is leftward
    other = render_barberpole(d, aspect_ratio=2, short_side_deg=4, grating_orientation_deg=135, duration_ms=20)
    assert other.attrs["long_axis_deg"] == pytest.approx(180.0)
    assert other.attrs["truth"]["direction_deg"] == pytest.approx(135.0)
    square = render_barberpole(d, aspect_ratio=1, short_side_deg=4, duration_ms=20)
    assert square.attrs["perceived_direction_deg"] == pytest.approx(45.0)


# --- misc -------------------------------------------------------------------------------
def test_renders_are_deterministic_and_well_formed():
    spec = stimulus_set({"duration_ms": 100})
    d = Display()
    for name in ("diamond_cw_dir015", "bar_len16", "dashed_n04", "barberpole_ar2_dir015", "grating_d08"):
        fam, params = spec[name]["family"], spec[name]["params"]
        a, b = render(fam, d, **params), render(fam, d, **params)
        assert isinstance(a, Stimulus)
        assert a.frames.dtype == np.float32 and a.frames.shape == (10, 256, 256)
        assert 0.0 <= a.frames.min() and a.frames.max() <= 1.0
        assert np.array_equal(a.frames, b.frames)
        assert a.attrs == b.attrs
        assert a.attrs["family"] == fam and a.attrs["params"]["duration_ms"] == 100


def test_object_leaving_display_is_rejected():
    with pytest.raises(ValueError, match="display spans"):
        render_bar(SMALL, length_deg=30, contrast=1, duration_ms=100)
    with pytest.raises(ValueError, match="motion.bars.lengths_deg"):
        stimulus_set({"bars": {"lengths_deg": [4, 60]}}, display=Display())


def test_default_stimulus_set():
    spec = stimulus_set({"duration_ms": 500, "readout": {"lambda_ms": 50}, "models": []}, display=Display())
    # every experiment at 0 and 15 deg: 2 x (2 diamonds + 4 bars + 4 dashed bars + 3 barber-poles + 6 gratings)
    assert len(spec) == 38
    assert all(re.fullmatch(r"[a-z0-9_]+", n) for n in spec)
    for name in ("diamond_cw_dir000", "diamond_ccw_dir015", "bar_len04", "bar_len16_dir015", "dashed_n01",
                 "dashed_n08_dir015", "barberpole_ar1", "barberpole_ar3_dir015", "grating_d01", "grating_d28_dir015"):
        assert name in spec
    # the direction of motion of each family at 15 deg; the barber-pole rotated as a whole
    assert spec["bar_len04_dir015"]["params"]["direction_deg"] == 15.0
    assert spec["dashed_n01_dir015"]["params"]["direction_deg"] == 15.0
    assert spec["grating_d01_dir015"]["params"]["direction_deg"] == 15.0
    assert spec["barberpole_ar3_dir015"]["params"]["aperture_orientation_deg"] == 15.0
    assert "aperture_orientation_deg" not in spec["barberpole_ar3"]["params"]  # 0 deg: the earlier spec
    # the diamonds' own directions replace motion.directions_deg for them only
    own = stimulus_set({"directions_deg": [0], "diamonds": {"directions_deg": [0, 90]}})
    assert {n for n in own if n.startswith("diamond_cw")} == {"diamond_cw_dir000", "diamond_cw_dir090"}
    assert "bar_len04" in own and "bar_len04_dir090" not in own
    # a subset of the experiments (the generalisation runs)
    only = stimulus_set({}, experiments=["diamonds"])
    assert set(only) == {"diamond_cw_dir000", "diamond_ccw_dir000", "diamond_cw_dir015", "diamond_ccw_dir015"}
    assert {s["experiment"] for s in spec.values()} == {"diamonds", "dashed_bars", "barberpole", "grating_size"}
    assert {s["family"] for s in spec.values()} == set(FAMILIES)
    assert spec["dashed_n04"]["params"]["speed_deg_s"] == spec["bar_len04"]["params"]["speed_deg_s"]
    # a whole config works too, and fractional values stay valid wildcards
    whole = stimulus_set({"motion": {"bars": {"lengths_deg": [2.5, 5]}}})
    assert "bar_len02p5" in whole and "bar_len05" in whole


@pytest.mark.parametrize(
    "cfg,key",
    [
        ({"gratings": {"diameters_deg": [1, 2, -4]}},
         r"motion\.gratings\.diameters_deg\[2\]"
         r": -4 is less than or equal to the minimum of 0"),
        ({"gratings": {"diameter_deg": [1, 2]}}, r"motion\.gratings: .*'diameter_deg' was unexpected"),
        ({"diamond": {}}, r"motion: .*'diamond' was unexpected"),
        ({"dashed_bars": {"n_tiles": [1, 2.5]}}, r"motion\.dashed_bars\.n_tiles\[1\]: 2\.5 is not of type 'integer'"),
        ({"dashed_bars": {"gap_fraction": 1.0}},
         r"motion\.dashed_bars\.gap_fraction"
         r": 1\.0 is greater than or equal to the maximum of 1"),
        ({"barberpole": {"aspect_ratios": [0.5, 2]}},
         r"motion\.barberpole\.aspect_ratios\[0\]"
         r": 0\.5 is less than the minimum of 1"),
        ({"contrast": 1.5}, r"motion\.contrast: 1\.5 is greater than the maximum of 1"),
        ({"duration_ms": "500"}, r"motion\.duration_ms: '500' is not of type 'number'"),
        ({"bars": {"tilt_deg": 90}}, r"motion\.bars\.tilt_deg: 90 is greater than or equal to the maximum of 90"),
        ({"bars": {"lengths_deg": [4, 4]}}, r"motion\.bars\.lengths_deg\[1\] duplicates"),
        ({"diamonds": {"directions_deg": [0, 360]}}, r"motion\.diamonds\.directions_deg\[1\] duplicates"),
        ({"directions_deg": [15, 375]}, r"motion\.directions_deg\[1\] duplicates"),
        ({"directions_deg": []}, r"motion\.directions_deg: \[\] should be non-empty"),
        ({"diamonds": {"interior_angle_deg": 60}}, r"motion\.diamonds\.interior_angle_deg"),
    ],
)
def test_config_errors_name_the_key(cfg, key):
    # value constraints come from config/schema.yaml (the one place they are written);
    # the last three are checks the schema cannot express
    with pytest.raises(ValueError, match=key):
        stimulus_set(cfg)


def test_write_stimulus_round_trip(tmp_path):
    d = Display(width_px=96, height_px=96)
    spec = {"family": "bar", "experiment": "dashed_bars",
            "params": {"length_deg": 4.0, "width_deg": 0.5, "tilt_deg": 45.0, "direction_deg": 0.0,
                       "speed_deg_s": 10.0, "contrast": 1.0, "duration_ms": 200.0}}
    out = write_stimulus("bar_len04", spec, d.to_attrs(), tmp_path / "bar_len04.zarr", code_hash="abc123")
    store = open_store(out, deep=True)
    frames = store["frames"]
    assert store.dims["frames"] == ("t", "y", "x")
    assert frames.shape == (20, 96, 96) and frames.dtype == np.float32
    assert frames.chunksize[1:] == (96, 96)  # chunked along time only
    expected = render("bar", d, **spec["params"]).frames
    np.testing.assert_array_equal(frames.compute(), expected)
    attrs = store.attrs
    assert attrs["stage"] == "stimuli" and attrs["code_hash"] == "abc123"
    assert Display.from_config(attrs["display"]) == d
    stim = attrs["stimulus"]
    assert stim["name"] == "bar_len04" and stim["family"] == "bar" and stim["experiment"] == "dashed_bars"
    assert stim["params"]["length_deg"] == 4.0
    assert stim["truth"]["velocity_px_per_frame"] == pytest.approx([0.8, 0.0])
    assert stim["truth"]["velocity_deg_s"] == pytest.approx([10.0, 0.0])
    assert stim["normal_direction_deg"] == pytest.approx(45.0)
    # deterministic: a second write gives identical attributes and data
    again = open_store(write_stimulus("bar_len04", spec, d, tmp_path / "again.zarr", code_hash="abc123"))
    assert again.attrs == attrs


def test_write_stimulus_names_the_stimulus_on_bad_params(tmp_path):
    with pytest.raises(ValueError, match="grating_d99"):
        write_stimulus("grating_d99", {"family": "grating", "params": {"diameter_deg": -1}}, Display(),
                       tmp_path / "x.zarr")
