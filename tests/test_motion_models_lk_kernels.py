"""Lucas-Kanade's compiled loops (psybench.motion.models.flow.lk_kernels) against the array code they replace.

Oracles: ``scipy.ndimage.map_coordinates`` (the warp), ``cv2.sepFilter2D`` (the window), ``np.gradient``
and NumPy products (the products), :func:`lucaskanade._lk_solve` (the per-pixel solve): every value the
same bits.
"""

import numpy as np
import pytest
from scipy import ndimage as ndi

from psybench.motion.models.flow import lk_kernels
from psybench.motion.models.flow.common import _SPLINE_PAD, _spline_coefficients
from psybench.motion.models.flow.lucaskanade import _gaussian_kernel, _gaussian_window, _lk_solve


@pytest.mark.parametrize("shape", [(40, 56), (7, 3), (2, 2)])
def test_warp_is_map_coordinates_bits(shape):
    """Flows from sub-pixel to far outside the image (the 12-px padding, then the clamp beyond it)."""
    rng = np.random.default_rng(3)
    image = ndi.gaussian_filter(rng.random(shape), 1.5)
    coefficients = _spline_coefficients(image)
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float64)
    out = np.empty(shape)
    for scale in (0.3, 4.0, 15.0, 60.0):
        motion = rng.normal(0.0, scale, shape + (2,))
        motion[0, 0] = (-0.0, 2.0)  # a signed zero and an integer shift
        expected = ndi.map_coordinates(image, [rows + motion[..., 1], cols + motion[..., 0]], order=3, mode="nearest")
        lk_kernels.warp(coefficients, motion, float(_SPLINE_PAD), out)
        np.testing.assert_array_equal(out.view(np.int64), expected.view(np.int64))


@pytest.mark.parametrize("shape", [(9, 13), (2, 5)])
def test_products_are_the_array_codes_bits(shape):
    rng = np.random.default_rng(4)
    i0, i1w = rng.random(shape), rng.random(shape)
    gy0, gx0 = np.gradient(i0)
    out = np.empty((5,) + shape)
    assert lk_kernels.products(i1w, i0, gx0, gy0, out)
    gy1, gx1 = np.gradient(i1w)
    gx, gy, it = 0.5 * (gx0 + gx1), 0.5 * (gy0 + gy1), i1w - i0
    expected = np.stack([gx * gx, gx * gy, gy * gy, gx * it, gy * it])
    np.testing.assert_array_equal(out.view(np.int64), expected.view(np.int64))
    assert not lk_kernels.products(i0, i0, gx0, gy0, out)  # no temporal change: nothing to solve


def test_solve_add_is_lk_solve_bits():
    """Full solves, normal flows (rank one, tiny second eigenvalue) and untextured pixels, mixed."""
    rng = np.random.default_rng(5)
    n = 4000
    g = rng.normal(size=(2, n)) * rng.choice([1e-5, 1e-2, 1.0], n)
    rank_one = rng.random(n) < 0.3
    a11 = g[0] ** 2 + np.where(rank_one, 0.0, rng.random(n) * 1e-3)
    a22 = g[1] ** 2 + np.where(rank_one, 0.0, rng.random(n) * 1e-3)
    a12 = g[0] * g[1]
    sums = np.stack([a11, a12, a22, rng.normal(size=n), rng.normal(size=n)]).reshape(5, 40, 100)
    flow = rng.normal(size=(40, 100, 2))
    du, dv = _lk_solve(*sums, min_eigenvalue=1e-6, min_eigen_ratio=0.01)
    half_trace, disc = 0.5 * (sums[0] + sums[2]), np.hypot(0.5 * (sums[0] - sums[2]), sums[1])
    full = half_trace - disc >= np.maximum(0.01 * (half_trace + disc), 1e-6)
    normal = (half_trace + disc >= 1e-6) & ~full
    assert full.any() and normal.any() and (~full & ~normal).any()  # all three cases occur
    expected = flow.copy()
    expected[..., 0] += du
    expected[..., 1] += dv
    lk_kernels.solve_add(sums, 1e-6, 0.01, flow)
    np.testing.assert_array_equal(flow.view(np.int64), expected.view(np.int64))


@pytest.mark.parametrize("sigma", [1.0, 2.0, 3.5])
def test_window_is_opencvs_sep_filter_bits(sigma):
    """Widths around OpenCV's 4-lane row loop (fused multiply-adds there, not in its tail), 1-wide maps too."""
    rng = np.random.default_rng(6)
    kernel = _gaussian_kernel(sigma)
    for shape in [(30, 12), (33, 75), (7, 22), (1, 9), (9, 1)]:
        stack = rng.standard_normal((2,) + shape) * rng.choice([1e-3, 1.0, 1e3], (2,) + shape)
        out = np.empty_like(stack)
        lk_kernels.window(stack, kernel, out)
        expected = _gaussian_window(stack, sigma=sigma)
        np.testing.assert_array_equal(out.view(np.int64), expected.view(np.int64))


def test_loops_run_without_a_writable_cache_directory():
    """Numba refuses cache=True without a writable cache directory; the loops then compile per process."""
    import subprocess
    import sys

    code = (
        "import numba.core.caching as c\n"
        "c.CacheImpl._locator_classes = []  # as if no __pycache__, NUMBA_CACHE_DIR or ~/.cache were writable\n"
        "import numpy as np\n"
        "from psybench.motion.models.flow import lk_kernels\n"
        "z = np.zeros((3, 3))\n"
        "print(type(lk_kernels.products._cache).__name__, lk_kernels.products(z + 1, z, z, z, np.empty((5, 3, 3))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["NullCache", "True"]
