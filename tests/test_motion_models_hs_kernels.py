"""Horn-Schunck's compiled loops (psybench.motion.models.flow.hs_kernels) against the array code they replace.

The oracle is the NumPy/OpenCV code of main before the loops were compiled (commit a50448d):
``cv2.filter2D`` for the 3 x 3 average and one ufunc per step. Every value must be the same bits
(compared as integers, so a sign of zero counts too), on grids whose widths are and are not
multiples of OpenCV's 8-lane vector loop, in float32 and float64.
"""

import os
import subprocess
import sys

import cv2
import numpy as np
import pytest

from psybench.motion.models.flow import hs_kernels
from psybench.motion.models.flow.hornschunck import HS_AVERAGE_KERNEL
from psybench.motion.models.flow.hs_multigrid import _HSLevel, _prolong, _restrict, _self_weight

SHAPES = [(32, 32), (9, 21), (5, 3), (1, 7), (16, 1)]


def _bits(a):
    return np.asarray(a).view(np.int32 if a.dtype == np.float32 else np.int64)


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((2,) + shape) * rng.uniform(0.01, 10, (2,) + shape)).astype(dtype)
    w[0, 0, 0] = -0.0
    grads = rng.standard_normal((2,) + shape)
    return w, grads[0] ** 2, grads[0] * grads[1], grads[1] ** 2


def _oracle_apply(w, jxx, jxy, jyy, s, kernel):
    """The array code of ``_HSLevel.apply`` (main, a50448d)."""
    smooth = np.empty_like(w)
    for c in range(2):
        cv2.filter2D(w[c], -1, kernel, dst=smooth[c], borderType=cv2.BORDER_REPLICATE)
    np.subtract(w, smooth, out=smooth)
    np.multiply(smooth, s, out=smooth)
    out = np.multiply(np.stack([jxx, jxy]), w[0])
    out += np.multiply(np.stack([jxy, jyy]), w[1])
    out += smooth
    return out


def _oracle_level(jxx, jxy, jyy, s, kernel):
    d = (s * (1.0 - _self_weight(kernel, jxx.shape))).astype(jxx.dtype)
    p, q = jxx + d, jyy + d
    return p * q - jxy * jxy, np.stack([q, p])


def _oracle_block(r, jxy, det, qp):
    out = np.multiply(qp, r)
    out -= np.multiply(jxy, r[::-1])
    out /= det
    return out


def _oracle_v_cycle(jxx, jxy, jyy, s, kernel, b, omega=0.7):
    """The array code of ``_HSLevel.v_cycle`` with one sweep (main, a50448d)."""
    det, qp = _oracle_level(jxx, jxy, jyy, s, kernel)

    def step(x):
        res = b - _oracle_apply(x, jxx, jxy, jyy, s, kernel)
        x += _oracle_block(res, jxy, det, qp) * omega
    x = _oracle_block(b, jxy, det, qp) * omega
    if min(jxx.shape) < 8:
        for _ in range(30):
            step(x)
        return x
    res = b - _oracle_apply(x, jxx, jxy, jyy, s, kernel)
    coarse = [_restrict(a) for a in (jxx, jxy, jyy)]
    x += _prolong(_oracle_v_cycle(*coarse, s, kernel, _restrict(res), omega), b.shape[1:])
    step(x)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES + [(11, 19)])
def test_apply_and_block_solve_are_the_array_codes_bits(dtype, shape):
    kernel = HS_AVERAGE_KERNEL.astype(dtype)
    w, jxx, jxy, jyy = _data(shape, dtype, 1)
    jxx, jxy, jyy = (a.astype(dtype) for a in (jxx, jxy, jyy))
    level = _HSLevel(jxx, jxy, jyy, 0.37, kernel, coarsen=False)
    expected = _oracle_apply(w, jxx, jxy, jyy, 0.37, kernel)
    np.testing.assert_array_equal(_bits(level.apply(w)), _bits(expected))
    det, qp = _oracle_level(jxx, jxy, jyy, 0.37, kernel)
    np.testing.assert_array_equal(_bits(level.block_solve(w)), _bits(_oracle_block(w, jxy, det, qp)))


def test_filter_reproduces_opencvs_fused_vector_columns_and_plain_tail():
    """A float32 row of 21: columns 0-15 by OpenCV's fused multiply-adds, 16-20 not; unfused everywhere differs."""
    kernel = HS_AVERAGE_KERNEL.astype(np.float32)
    w, _, _, _ = _data((40, 21), np.float32, 2)
    zeros = np.zeros((40, 21), np.float32)
    out = np.empty_like(w)
    hs_kernels.apply(w, zeros, zeros, zeros, np.float32(1), hs_kernels.taps(kernel), 0, out)  # as if no lanes fused
    expected = _oracle_apply(w, zeros, zeros, zeros, np.float32(1), kernel)
    assert not np.array_equal(_bits(out), _bits(expected))  # the unfused sums differ from OpenCV's here
    hs_kernels.apply(w, zeros, zeros, zeros, np.float32(1), hs_kernels.taps(kernel), hs_kernels.F32_FMA_LANES, out)
    np.testing.assert_array_equal(_bits(out), _bits(expected))


def test_average_is_compiled_once_per_dtype(tmp_path):
    """The fused and plain spans pass a run-time flag: _filtered has one machine code per dtype, not three
    (a literal True and False each cost another compilation of about 0.6 s in a fresh installation).

    In a fresh process with an empty Numba cache (a warm cache links _filtered into its callers unseen)."""
    code = (
        "import numpy as np\n"
        "from psybench.motion.models.flow import hs_kernels\n"
        "from psybench.motion.models.flow.hornschunck import HS_AVERAGE_KERNEL\n"
        "for dtype in (np.float32, np.float64):\n"
        "    w = np.random.default_rng(0).random((2, 12, 20)).astype(dtype)\n"
        "    j = np.ones((12, 20), dtype)\n"
        "    hs_kernels.apply(w, j, j, j, dtype(0.5), hs_kernels.taps(HS_AVERAGE_KERNEL.astype(dtype)), 8,\n"
        "                     np.empty_like(w))\n"
        "print(sorted(str(sig[0].dtype) for sig in hs_kernels._filtered.signatures))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['float32', 'float64']"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(32, 32), (37, 21), (9, 8)])
def test_v_cycle_is_the_array_codes_bits(dtype, shape):
    kernel = HS_AVERAGE_KERNEL.astype(dtype)
    b, jxx, jxy, jyy = _data(shape, dtype, 3)
    jxx, jxy, jyy = (a.astype(dtype) for a in (jxx, jxy, jyy))
    got = _HSLevel(jxx, jxy, jyy, 0.05, kernel).v_cycle(b)
    np.testing.assert_array_equal(_bits(got), _bits(_oracle_v_cycle(jxx, jxy, jyy, 0.05, kernel, b)))


@pytest.mark.parametrize("shape", SHAPES)
def test_restrict_and_prolong_are_the_array_codes_bits(shape):
    r, _, _, _ = _data(shape, np.float32, 4)
    half = tuple(-(-n // 2) for n in shape)
    weights = hs_kernels.weights(np.float32)
    out = np.empty((2,) + half, np.float32)
    hs_kernels.restrict(r, weights, np.empty((2, shape[0], half[1]), np.float32), out)
    np.testing.assert_array_equal(_bits(out), _bits(_restrict(r)))
    x = r.copy()
    hs_kernels.prolong_add(out, weights, np.empty((2, half[0], shape[1]), np.float32), x)
    np.testing.assert_array_equal(_bits(x), _bits(r + _prolong(out, shape)))


def test_conjugate_gradient_updates_are_the_array_codes_bits():
    rng = np.random.default_rng(5)
    x, res, d, ad, z = rng.standard_normal((5, 2, 7, 9))
    x0, res0, d0 = x.copy(), res.copy(), d.copy()
    res32 = np.empty(x.shape, np.float32)
    norm2 = hs_kernels.cg_update(x, res, d, ad, 0.3, res32)
    np.testing.assert_array_equal(x, x0 + 0.3 * d)
    np.testing.assert_array_equal(res, res0 - 0.3 * ad)
    np.testing.assert_array_equal(res32, res.astype(np.float32))
    assert norm2 == float((res * res).sum())
    hs_kernels.cg_direction(d, z, 1.7)
    np.testing.assert_array_equal(d, d0 * 1.7 + z)
    z32 = z.astype(np.float32)
    hs_kernels.cg_direction(d, z32, 0.4)
    np.testing.assert_array_equal(d, (d0 * 1.7 + z) * 0.4 + z32.astype(np.float64))


@pytest.mark.parametrize("shape", [(2, 256, 256), (2, 255, 257), (2, 3, 5), (2, 1, 3), (2, 100, 37), (9,)])
def test_dot_is_numpys_pairwise_sum_of_the_products(shape):
    # values over 16 decades: any other summation order changes the last digits
    rng = np.random.default_rng(6)
    a = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, shape)
    b = rng.standard_normal(shape)
    assert hs_kernels.dot(a, b) == float(np.multiply(a, b).sum())
    b32 = b.astype(np.float32)
    assert hs_kernels.dot(a, b32) == float(np.multiply(a, b32.astype(np.float64)).sum())


def test_kernel_without_zero_centre_is_refused():
    with pytest.raises(ValueError, match="centre zero"):
        hs_kernels.taps(np.ones((3, 3)))
