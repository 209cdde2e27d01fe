"""Tests of psybench.motion.readouts against analytic solutions of RR-7317 eqs. 2-3."""

import dask.array as da
import numpy as np
import pytest

from psybench.io.integrity import open_group
from psybench.io.store import ArraySpec, open_store, write_store
from psybench.motion.display import Display
from psybench.motion.readouts import (
    compute_readout,
    direction_error,
    flow_field_from_distribution,
    half_differential_error,
    load_readout,
    mean_flow,
    mean_half_differential_error,
    perceived_direction,
    pursuit,
)

FRAME_MS = 10.0
LAM = 50.0


def test_pursuit_constant_input_matches_analytic_solution():
    v = np.array([2.0, -1.0])
    n = 60
    w = pursuit(np.tile(v, (n, 1)), frame_ms=FRAME_MS, lambda_ms=LAM)
    t = np.arange(n) * FRAME_MS
    expected = v[None, :] * (1.0 - np.exp(-t / LAM))[:, None]
    np.testing.assert_allclose(w, expected, rtol=0, atol=1e-12)
    assert np.all(w[0] == 0)


def test_pursuit_step_input_matches_analytic_solution():
    n, k_s = 80, 17
    c = np.array([-0.5, 3.0])
    vbar = np.zeros((n, 2))
    vbar[k_s:] = c
    w = pursuit(vbar, frame_ms=FRAME_MS, lambda_ms=37.0)
    t = np.arange(n) * FRAME_MS
    ramp = np.where(t >= t[k_s], 1.0 - np.exp(-(t - t[k_s]) / 37.0), 0.0)
    np.testing.assert_allclose(w, c[None, :] * ramp[:, None], rtol=0, atol=1e-12)


def test_pursuit_rejects_bad_arguments():
    with pytest.raises(ValueError, match="lambda_ms"):
        pursuit(np.zeros((3, 2)), frame_ms=10, lambda_ms=0)
    with pytest.raises(ValueError, match=r"\(T, 2\)"):
        pursuit(np.zeros((3, 3)), frame_ms=10)


def test_direction_error_conventions():
    # image coords: v downward, so (0, -1) points visually up = 90 deg.
    w = np.array([[1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, 0.0], [1e-3, 0.0]])
    err = direction_error(w, 0.0, min_speed=1e-2)
    assert err[0] == 0.0
    assert err[1] == pytest.approx(90.0)
    assert err[2] == pytest.approx(-180.0)  # wrapped into [-180, 180)
    assert np.isnan(err[3]) and np.isnan(err[4])
    # wrap across +-180: direction -170 vs truth 170 is +20 (CCW of the truth).
    d = np.radians(-170.0)
    e = direction_error(np.array([[np.cos(d), -np.sin(d)]]), 170.0)
    assert e[0] == pytest.approx(20.0)


def test_eq2_peaked_distribution_returns_its_velocity():
    vel = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-0.5, 0.25]])
    p = np.zeros((2, 3, 4, 4))
    p[..., 3] = 0.7
    out = flow_field_from_distribution(p, vel)
    np.testing.assert_allclose(out, np.broadcast_to([-0.5, 0.25], (2, 3, 4, 2)))
    # zero activity -> zero flow (defined, not NaN)
    np.testing.assert_array_equal(flow_field_from_distribution(np.zeros((5, 4)), vel), 0.0)
    # symmetric population, uniform activity -> zero mean velocity
    sym = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    np.testing.assert_allclose(flow_field_from_distribution(np.ones((3, 4)), sym), 0.0, atol=1e-15)
    # dask input gives the same result, lazily
    rng = np.random.default_rng(0)
    q = rng.random((6, 5, 5, 4))
    lazy = flow_field_from_distribution(da.from_array(q, chunks=(2, 5, 5, 4)), vel)
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), flow_field_from_distribution(q, vel))
    with pytest.raises(ValueError, match="velocities"):
        flow_field_from_distribution(q, vel[:3])


def test_mean_flow_numpy_and_dask_agree():
    rng = np.random.default_rng(1)
    flow = rng.normal(size=(9, 7, 5, 2)).astype(np.float32)
    ref = flow.astype(np.float64).mean(axis=(1, 2))
    np.testing.assert_allclose(mean_flow(flow), ref, rtol=1e-12)
    lazy = mean_flow(da.from_array(flow, chunks=(4, 7, 5, 2)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), ref, rtol=1e-12)


def test_stored_mean_flow_matches_the_dask_reduction_to_the_bit(tmp_path):
    """The readout's NumPy reduction of a stored flow gives the bits of the Dask mean it replaced."""
    from psybench.io.store import StreamSpec, write_store_stream
    from psybench.motion.readouts import _stored_mean_flow

    rng = np.random.default_rng(7)
    # 53 dynamic-range orders: any other summation order than NumPy's changes the last bits
    flow = (rng.normal(size=(10, 64, 48, 2)) * np.exp(rng.uniform(-25, 5, (10, 64, 48, 2)))).astype(np.float32)
    path = write_store_stream(tmp_path / "f.zarr", {"flow": StreamSpec(flow.shape, np.float32, ("t", "y", "x", "c"),
                                                                      chunks=(4, 64, 48, 2))}, [{"flow": flow}])
    stored = open_store(path)["flow"]
    dask_mean = mean_flow(stored).compute()
    assert np.array_equal(_stored_mean_flow(open_group(path)["flow"]), dask_mean)
    assert np.array_equal(dask_mean, np.sum(flow.astype(np.float64), axis=(1, 2)) / (64 * 48))
    pairwise = np.add.reduce(np.ascontiguousarray(flow.astype(np.float64).reshape(10, -1, 2).transpose(0, 2, 1)), 2)
    assert not np.array_equal(pairwise / (64 * 48), dask_mean)  # the data tell summation orders apart


def test_half_differential_and_direction_average():
    cw = np.array([[30.0, 10.0, np.nan], [20.0, 0.0, np.nan]])
    ccw = np.array([[-30.0, -10.0, np.nan], [-10.0, np.nan, np.nan]])
    np.testing.assert_allclose(half_differential_error(cw, ccw)[0], [30.0, 10.0, np.nan])
    mean = mean_half_differential_error(cw, ccw)
    np.testing.assert_allclose(mean[:2], [22.5, 10.0])
    assert np.isnan(mean[2])


def test_perceived_direction_is_final_window_mean():
    w = np.zeros((50, 2))
    w[:40] = [1.0, 0.0]          # early: rightward
    w[40:] = [0.0, -1.0]         # last 100 ms: visually up
    assert perceived_direction(w, frame_ms=10.0, window_ms=100.0) == pytest.approx(90.0)


def _response_store(path, *, flow=None, p=None, velocities=None, truth_deg=0.0, display=None, pooled=None):
    display = Display() if display is None else display
    arrays = {}
    if flow is not None:
        arrays["flow"] = ArraySpec(flow.astype(np.float32), ("t", "y", "x", "component"), chunks=(4,) + flow.shape[1:])
    if pooled is not None:
        arrays["mean_flow"] = ArraySpec(pooled, ("t", "component"))
    if p is not None:
        arrays["p"] = ArraySpec(p.astype(np.float32), ("t", "y", "x", "velocity"),
                                attrs={"velocities": np.asarray(velocities).tolist()})
    attrs = {"display": display.to_attrs(),
             "stimulus": {"name": path.stem, "family": "test", "experiment": "test",
                          "truth": {"direction_deg": truth_deg}},
             "model": {"name": "any"}}
    return write_store(path, arrays, attrs)


def test_compute_readout_roundtrip(tmp_path):
    display = Display()
    n = 30
    flow = np.zeros((n, 4, 6, 2))
    flow[1:, ..., 0] = 1.0  # rightward 1 px/frame after the first (pair-model) sample
    src = _response_store(tmp_path / "resp.zarr", flow=flow, truth_deg=0.0, display=display)
    out = compute_readout(src, tmp_path / "read.zarr", lambda_ms=LAM, code_hash="abc")
    store = open_store(out)
    assert store.dims["pursuit"] == ("t", "component")
    assert store.attrs["readout"]["lambda_ms"] == LAM and store.attrs["code_hash"] == "abc"
    w = np.asarray(store["pursuit"])
    t = np.arange(n) * display.frame_ms
    expect_u = np.where(t >= 10.0, 1.0 - np.exp(-(t - 10.0) / LAM), 0.0)
    np.testing.assert_allclose(w[:, 0], expect_u, atol=1e-12)
    err = np.asarray(store["direction_error_deg"])
    assert np.all(np.isnan(err[:2])) and np.allclose(err[2:], 0.0)
    speed = np.asarray(store["speed_deg_s"])
    np.testing.assert_allclose(speed, expect_u * display.frames_per_s / display.px_per_deg, atol=1e-9)
    data = load_readout(out)
    assert data["t_ms"][3] == pytest.approx(30.0)
    assert store.attrs["readout"]["perceived_direction_deg"] == pytest.approx(0.0)


def test_compute_readout_from_distribution_only(tmp_path):
    vel = np.array([[0.0, 0.0], [0.0, -1.0], [1.0, 0.0]])
    p = np.zeros((12, 3, 3, 3))
    p[:, ..., 1] = 1.0  # all mass on "visually up"
    src = _response_store(tmp_path / "r.zarr", p=p, velocities=vel, truth_deg=90.0)
    store = open_store(compute_readout(src, tmp_path / "o.zarr"))
    err = np.asarray(store["direction_error_deg"])
    np.testing.assert_allclose(err[1:], 0.0, atol=1e-9)


def test_readout_of_the_stored_mean_flow_is_the_readout_of_the_flow(tmp_path):
    """A response store with the response stage's mean_flow gives the readout store's arrays
    (and chunk bytes) of the same store without it, whose flow the readout reduces; the
    stored mean is what is read, and a misshapen one is refused naming the store."""
    from psybench.motion.population import domain_mean_flow

    rng = np.random.default_rng(3)
    flow = (rng.normal(size=(11, 24, 20, 2)) * np.exp(rng.uniform(-20, 3, (11, 24, 20, 2)))).astype(np.float32)
    flow[:, 2:9, 3:12] += np.float32(0.7)
    plain = compute_readout(_response_store(tmp_path / "a" / "s.zarr", flow=flow), tmp_path / "ra.zarr")
    pooled = compute_readout(_response_store(tmp_path / "b" / "s.zarr", flow=flow, pooled=domain_mean_flow(flow)),
                             tmp_path / "rb.zarr")
    for name in ("mean_flow", "pursuit", "direction_deg", "direction_error_deg", "speed_deg_s"):
        assert np.array_equal(open_group(plain)[name][...], open_group(pooled)[name][...], equal_nan=True), name
        chunks = sorted(f.relative_to(plain) for f in (plain / name / "c").rglob("*") if f.is_file())
        assert chunks and all((plain / f).read_bytes() == (pooled / f).read_bytes() for f in chunks)
    shifted = domain_mean_flow(flow) + 1.0
    read = compute_readout(_response_store(tmp_path / "c" / "s.zarr", flow=flow, pooled=shifted), tmp_path / "rc.zarr")
    assert np.array_equal(open_group(read)["mean_flow"][...], shifted)
    bad = _response_store(tmp_path / "d" / "s.zarr", flow=flow, pooled=np.zeros((10, 2)))
    with pytest.raises(ValueError, match=r"response store .*d/s.zarr: 'mean_flow' is float64 of shape \(10, 2\)"):
        compute_readout(bad, tmp_path / "rd.zarr")
