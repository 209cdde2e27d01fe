"""The bio models' velocity grids are physical (deg/s): converted with the display the run uses.

Known answers: a deg/s grid is ``speed * px_per_deg / frames_per_s`` px/frame, so
halving the frame rate doubles every px/frame velocity; the response store of a
run records the grid of *its* display; a user model whose ``velocities`` takes no
display still runs.
"""

import numpy as np
import pytest

from psybench.io.store import open_store
from psybench.motion.display import Display
from psybench.motion.models.motion_energy import simoncelli_heeger
from psybench.motion.models.v1mt import tlapale_v1mt
from psybench.motion.population import direction_pooling
from psybench.motion.responses import run_motion_model
from psybench.motion.stimuli import write_stimulus
from psybench.registry import resolve_model


@pytest.mark.parametrize("func", [simoncelli_heeger, tlapale_v1mt], ids=lambda f: f.__name__)
def test_grid_is_in_deg_per_s(func):
    fast, slow = func.velocities(display=Display(frames_per_s=100)), func.velocities(display=Display(frames_per_s=50))
    np.testing.assert_allclose(slow, 2 * fast)
    speeds = np.unique(np.round(np.hypot(*func.velocities(display=Display(px_per_deg=10, frames_per_s=40)).T), 9))
    default = func.__kwdefaults__["speeds_deg_s"]
    np.testing.assert_allclose(speeds[1:], np.asarray(default) * 10 / 40)


@pytest.mark.parametrize("func", [simoncelli_heeger, tlapale_v1mt], ids=lambda f: f.__name__)
def test_grid_needs_the_runs_display_not_an_assumed_one(func):
    # px/frame depends on the run's px/deg and frame rate: no silent Display() default
    with pytest.raises(TypeError, match="display"):
        func.velocities()
    with pytest.raises(TypeError, match=func.__name__):
        func.velocities(display=None)


def test_response_store_records_the_grid_of_its_display(tmp_path):
    display = Display(width_px=32, height_px=32, frames_per_s=50, supersample=1)
    spec = {"family": "bar", "params": {"length_deg": 1.0, "duration_ms": 60.0, "speed_deg_s": 5.0}}
    path = write_stimulus("bar", spec, display, tmp_path / "bar.zarr")
    model = resolve_model({"name": "v1mt", "algorithm": "tlapale_v1mt", "params": {"n_velocity_directions": 4}})
    store = open_store(run_motion_model(model, path, tmp_path / "v1mt.zarr"))
    expected = tlapale_v1mt.velocities(display=display, n_velocity_directions=4)
    np.testing.assert_allclose(store.array_attrs["p"]["velocities"], expected)


def _user_model(chunks, *, display):
    for chunk in chunks:
        p = np.zeros(chunk.shape + (2,), np.float32)
        p[..., 1] = 1.0
        yield {"flow": np.ones(chunk.shape + (2,), np.float32), "p": p}


_user_model.velocities = lambda: [[0.0, 0.0], [1.0, 1.0]]  # a grid that needs no display


def test_user_velocities_without_display_still_work(tmp_path):
    display = Display(width_px=16, height_px=16, frames_per_s=50, supersample=1)
    spec = {"family": "bar", "params": {"length_deg": 0.5, "duration_ms": 60.0, "speed_deg_s": 5.0}}
    path = write_stimulus("bar", spec, display, tmp_path / "bar.zarr")
    entry = resolve_model({"name": "user", "callable": f"{__name__}:_user_model", "kind": "stream"}, track="motion")
    store = open_store(run_motion_model(entry, path, tmp_path / "user.zarr"))
    assert store.array_attrs["p"]["velocities"] == [[0.0, 0.0], [1.0, 1.0]]


def test_direction_pooling_rings_sum_to_an_isotropic_tuning():
    """With sigma = the grid spacing the ring's tuning curves sum to a constant over directions."""
    k = direction_pooling(2, 12, 30.0)
    assert k.shape == (25, 25) and k[0, 0] == 1.0 and np.all(k[0, 1:] == 0)
    np.testing.assert_allclose(k.sum(axis=1), 1.0, rtol=1e-6)
    ring = k[1:13, 1:13]
    # sum of tuning curves at directions between grid points: the Gaussian comb, evaluated continuously
    phi = np.linspace(0, 360, 721)
    d = (phi[:, None] - 30.0 * np.arange(12)[None, :] + 180) % 360 - 180
    total = np.exp(-0.5 * (d / 30.0) ** 2).sum(axis=1)
    assert total.std() / total.mean() < 1e-6
    np.testing.assert_allclose(ring, ring.T)  # symmetric in direction
    np.testing.assert_array_equal(direction_pooling(2, 12, 0.0), np.eye(25, dtype=np.float32))
