import dask.array as da
import numpy as np
import pytest

from psybench.motion.models import filters
from psybench.motion.models.motion_energy import velocity_grid
from psybench.motion.population import direction_pooling, flow_from_distribution

VEL = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])


def test_expectation_over_velocities_and_silence_is_zero():
    p = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    np.testing.assert_allclose(flow_from_distribution(p, VEL), [[0.5, 0.5], [0.0, 0.0], [-1.0, 0.0]])


def test_dtype_eps_and_dask():
    p32 = np.array([[1e-13, 0.0, 0.0], [0.0, 3.0, 0.0]], np.float32)
    out = flow_from_distribution(p32, VEL, eps=1e-12)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.0, 0.0], [0.0, 1.0]])
    p = np.random.default_rng(0).random((4, 5, 3))
    lazy = flow_from_distribution(da.from_array(p, chunks=(2, 5, 3)), VEL)
    assert hasattr(lazy, "dask")
    np.testing.assert_allclose(lazy.compute(), flow_from_distribution(p, VEL))


def test_shape_mismatch_is_named():
    with pytest.raises(ValueError, match="3 velocities"):
        flow_from_distribution(np.ones((2, 4)), VEL)


def test_ring_mix_equals_the_direction_pooling_matrix():
    x = np.random.default_rng(1).random((5, 1 + 3 * 12, 7)).astype(np.float32)
    k = direction_pooling(3, 12, 30.0)
    expected = filters.channel_mix(k, x)
    np.testing.assert_allclose(filters.ring_mix(k[1:13, 1:13], x), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("true_deg", [0.0, 7.5, 15.0, 22.0, 45.0, 200.0])
def test_eq2_decodes_a_tuned_population_between_grid_directions(true_deg):
    """Eq. 2 is a population vector (Georgopoulos et al. 1986): on a population tuned as MT is, a
    Gaussian bump over direction as wide as the 30-deg grid spacing, it reads any direction, not the
    nearest unit. The snapping of the published structure is a population that is one-hot on the grid, not eq. 2."""
    vel = velocity_grid((1.0, 2.0), 12)
    ang = np.degrees(np.arctan2(-vel[1:, 1], vel[1:, 0]))
    diff = (ang - true_deg + 180.0) % 360.0 - 180.0
    p = np.concatenate([[0.5], 0.5 + np.exp(-0.5 * (diff / 30.0) ** 2)])  # spontaneous rate + tuned response
    u, v = flow_from_distribution(p, vel)
    assert abs((np.degrees(np.arctan2(-v, u)) - true_deg + 180.0) % 360.0 - 180.0) < 1e-3
