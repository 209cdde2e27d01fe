import dask.array as da
import numpy as np
import pytest

from psybench.motion.population import flow_from_distribution

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
