"""Tests of the Simoncelli & Heeger (1998) style motion-energy model.

Known answers: a drifting grating's velocity (analytic), zero input -> zero
response, normalised responses bounded by construction, and a unit's tuning
curve peaking at its preferred velocity (SH98 figs. 6-7).
"""

import numpy as np
import pytest
from motion_model_runs import translating_texture

from psybench.motion.display import Display, direction_deg, wrap_deg
from psybench.motion.models.motion_energy import (
    flow_from_distribution,
    simoncelli_heeger,
    steering_directions,
)
from psybench.registry import get_algorithm, resolve_model

DISPLAY = Display(width_px=48, height_px=48)
VEL = simoncelli_heeger.velocities(display=DISPLAY)  # the default population (px/frame)


def grating(n_t, size, period, speed, direction, contrast=1.0, bg=0.5):
    """Full-field sinusoid drifting at ``speed`` px/frame toward ``direction`` (deg, visual y up)."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float64)
    th = np.radians(direction)
    proj = x * np.cos(th) - y * np.sin(th)
    t = np.arange(n_t)[:, None, None]
    return (bg * (1 + contrast * np.cos(2 * np.pi * (proj[None] - speed * t) / period))).astype(np.float32)


def run(frames, chunk=8, **kw):
    outs = list(simoncelli_heeger((frames[i:i + chunk] for i in range(0, len(frames), chunk)), display=DISPLAY, **kw))
    return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}


def centre_p(frames, **kw):
    p = run(frames, **kw)["p"]
    return p[-1, 12:36, 12:36].reshape(-1, p.shape[-1]).mean(axis=0)


def test_registered_as_motion_stream_with_velocities():
    algo = get_algorithm("simoncelli_heeger")
    assert (algo.track, algo.kind) == ("motion", "stream")
    spec = resolve_model({"name": "me", "algorithm": "simoncelli_heeger", "params": {"speeds_deg_s": [12.5, 25.0]}})
    vel = algo.function.velocities(**spec.params, display=DISPLAY)
    assert vel.shape == (1 + 2 * 12, 2)
    np.testing.assert_allclose(vel[0], 0.0)
    np.testing.assert_allclose(np.hypot(*vel[1:].T), np.repeat([1.0, 2.0], 12))
    # direction k is 30 k degrees with the visual y axis up
    np.testing.assert_allclose(direction_deg(vel[1:13, 0], vel[1:13, 1]) % 360, np.arange(12) * 30.0, atol=1e-9)


def test_outputs_shapes_dtype_one_sample_per_frame():
    frames = grating(13, 48, 16, 0.8, 0)
    out = run(frames, chunk=5)
    assert out["flow"].shape == (13, 48, 48, 2) and out["flow"].dtype == np.float32
    assert out["p"].shape == (13, 48, 48, len(VEL)) and out["p"].dtype == np.float32


def test_odd_frame_size_is_cropped_back():
    frames = grating(6, 48, 16, 0.8, 0)[:, :45, :47]
    flow = np.concatenate([o["flow"] for o in simoncelli_heeger(iter([frames]), display=DISPLAY)])
    assert flow.shape == (6, 45, 47, 2)


@pytest.mark.parametrize("level", [0.5, 0.8])
def test_zero_input_gives_zero_response(level):
    frames = np.full((12, 48, 48), level, np.float32)
    out = run(frames, return_v1=True)
    assert np.abs(out["v1"]).max() < 1e-6
    assert np.abs(out["p"]).max() < 1e-6
    assert np.all(out["flow"] == 0.0)


def test_normalised_responses_are_bounded():
    rng = np.random.default_rng(0)
    noise = rng.random((12, 48, 48), dtype=np.float32)
    for frames in (noise, grating(12, 48, 12, 1.6, 30), 0.5 * grating(12, 48, 20, 0.4, 200)):
        out = run(frames, return_v1=True)
        assert out["v1"].min() >= 0 and out["v1"].sum(axis=-1).max() <= 1.0 + 1e-5
        assert out["p"].min() >= 0 and out["p"].sum(axis=-1).max() <= 1.0 + 1e-5
        assert np.all(np.isfinite(out["flow"]))


@pytest.mark.parametrize("unit_speed", [0.4, 0.8, 1.6, 3.2])
def test_speed_tuning_peaks_at_preferred_speed(unit_speed):
    """The unit preferring (unit_speed, 0 deg) responds most to a grating drifting at that speed."""
    k = int(np.argmin(np.hypot(VEL[:, 0] - unit_speed, VEL[:, 1])))
    speeds = [0.2, 0.4, 0.8, 1.6, 2.4, 3.2]
    resp = [centre_p(grating(20, 48, 20, s, 0))[k] for s in speeds]
    assert speeds[int(np.argmax(resp))] == unit_speed


@pytest.mark.parametrize("unit_direction", [0, 150, 270])
def test_direction_tuning_centred_on_preferred_direction(unit_direction):
    """Vector mean of the direction tuning curve (gratings at the preferred speed) points at the preferred direction."""
    th = np.radians(unit_direction)
    k = int(np.argmin(np.hypot(VEL[:, 0] - 0.8 * np.cos(th), VEL[:, 1] + 0.8 * np.sin(th))))
    assert abs(direction_deg(*VEL[k]) - direction_deg(0.8 * np.cos(th), -0.8 * np.sin(th))) < 1e-6
    dirs = np.arange(0, 360, 30)
    resp = np.array([centre_p(grating(20, 48, 20, 0.8, d))[k] for d in dirs])
    mean_dir = np.degrees(np.arctan2((resp * np.sin(np.radians(dirs))).sum(), (resp * np.cos(np.radians(dirs))).sum()))
    assert abs((mean_dir - unit_direction + 180) % 360 - 180) < 10
    # opposite motion barely drives the unit
    assert resp[list(dirs).index((unit_direction + 180) % 360)] < 0.1 * resp.max()


@pytest.mark.parametrize("direction", [0, 20, 60, 200, 300])
def test_grating_flow_points_along_grating_normal(direction):
    flow = run(grating(20, 48, 16, 0.8, direction))["flow"][-1, 12:36, 12:36].reshape(-1, 2).mean(axis=0)
    err = (direction_deg(flow[0], flow[1]) - direction + 180) % 360 - 180
    # 40 V1 directions and 12 MT directions: anisotropy of the sampling stays < 4 deg
    assert abs(err) < 5
    assert 0.3 < np.hypot(*flow) < 1.0  # speed of the right order (broad tuning underestimates)


def test_streaming_is_chunk_invariant_and_causal():
    rng = np.random.default_rng(1)
    frames = grating(16, 48, 16, 0.8, 45) + 0.05 * rng.standard_normal((16, 48, 48)).astype(np.float32)
    a, b = run(frames, chunk=16), run(frames, chunk=3)
    np.testing.assert_allclose(a["p"], b["p"], atol=1e-6)
    changed = frames.copy()
    changed[10:] = 0.5
    c = run(changed, chunk=4)
    # causal to float32 rounding: the OpenCV and BLAS kernels filter a block's frames together,
    # and their rounding depends on a frame's place in the block (measured: <= 1.8e-7 px/frame)
    np.testing.assert_allclose(c["flow"][:10], b["flow"][:10], rtol=0, atol=1e-6)
    assert np.abs(c["flow"][10:] - b["flow"][10:]).max() > 1e-2  # the change itself is seen


def test_flow_from_distribution_is_eq2():
    vel = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    p = np.array([[1.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(flow_from_distribution(p, vel), [[0.25, 1.0], [0.0, 0.0]])


def test_steering_directions_cover_hemisphere():
    d = steering_directions(28)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0)
    assert np.all(d[:, 2] > 0)


@pytest.mark.parametrize("bad", [{"downsample": 0}, {"sigma_deg": 0.0}, {"v1_c50": -1.0}, {"speeds_deg_s": [0.0]}])
def test_bad_parameters_name_the_key(bad):
    key = next(iter(bad))
    with pytest.raises(ValueError, match=key):
        next(simoncelli_heeger(iter([grating(4, 48, 16, 0.8, 0)]), display=DISPLAY, **bad))


def test_texture_direction_does_not_snap_to_the_velocity_grid():
    """A rigid 10-deg/s texture moving at 0, 5, ..., 45 deg (the MT grid has a unit every 30 deg).

    Same bound as tlapale_v1mt's (tests/test_motion_models_v1mt.py): 5 deg, a sixth of the
    grid spacing; a snapping population errs by up to 15 deg. SH98's MT is feedforward
    (no loop to sharpen the population) and eq. 2 is a population vector: measured <= 1.4 deg.
    """
    display = Display(width_px=64, height_px=64)
    errors = []
    for direction in range(0, 50, 5):
        frames = translating_texture(display, direction, 10.0, 30)
        outs = simoncelli_heeger((frames[i:i + 16] for i in range(0, 30, 16)), display=display, return_p=False)
        flow = np.concatenate([o["flow"] for o in outs])[-10:].reshape(-1, 2).mean(axis=0)
        errors.append(wrap_deg(direction_deg(flow[0], flow[1]) - direction))
    assert np.abs(errors).max() < 5.0, np.round(errors, 1)


def test_fused_v1_pooling_equals_the_numpy_path():
    """The one-pass V1 normalisation + MT pooling gives the bits of v1() then pool_cells()."""
    frames = grating(9, 48, 16, 0.8, 30)
    fused_run, numpy_run = run(frames, chunk=5), run(frames, chunk=5, return_v1=True)
    assert np.array_equal(fused_run["flow"], numpy_run["flow"])
    assert np.array_equal(fused_run["p"], numpy_run["p"])
