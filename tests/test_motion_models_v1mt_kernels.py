"""The compiled loops of tlapale_v1mt and simoncelli_heeger give the NumPy code's bits.

Each oracle below is the NumPy code the loop replaced, kept here verbatim in
its operations; the loops must equal it bit for bit (``np.array_equal``), on random
states with a wide dynamic range and on the odd shapes (borders, one column).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from psybench.motion.models import filters
from psybench.motion.models import motion_energy_kernels as fused
from psybench.motion.models import v1mt_kernels as kernels
from psybench.motion.population import direction_pooling


def _rand(rng, shape, spread=2.0):
    return (rng.random(shape) * np.exp(rng.standard_normal(shape) * spread)).astype(np.float32)


def _shift_bilinear(img, dx, dy, pad):
    """The former ``v1mt._shift_bilinear``: ``J(x) = img(x - d)``, bilinear, ``img`` padded by ``pad``."""
    h, w = img.shape[0] - 2 * pad, img.shape[1] - 2 * pad
    sx, sy = -dx, -dy
    x0, y0 = math.floor(sx), math.floor(sy)
    fx, fy = sx - x0, sy - y0
    ys, xs = pad + y0, pad + x0
    a = img[ys:ys + h, xs:xs + w]
    b = img[ys:ys + h, xs + 1:xs + 1 + w]
    c = img[ys + 1:ys + 1 + h, xs:xs + w]
    d = img[ys + 1:ys + 1 + h, xs + 1:xs + 1 + w]
    return (1 - fy) * ((1 - fx) * a + fx * b) + fy * ((1 - fx) * c + fx * d)


@pytest.mark.parametrize("q", [1, 2, 3])
def test_matching_energy_equals_numpy(q):
    rng = np.random.default_rng(q)
    vel = rng.uniform(-3.0, 3.0, (7, 2)).astype(np.float32)
    vel[0] = 0.0
    h, w, m, dsm, pad = 5, 6, 2, 2, 6
    cur = rng.random((h * q, w * q)).astype(np.float32) - 0.5
    prev = np.pad(rng.random((h * q, w * q)).astype(np.float32) - 0.5, pad, mode="edge")
    d = np.empty((len(vel), h * q, w * q), np.float32)
    for k, (u, v) in enumerate(vel):  # the former likelihood's loop
        diff = cur - _shift_bilinear(prev, m * u / dsm, m * v / dsm, pad)
        d[k] = diff * diff
    if q > 1:
        acc = np.zeros((len(vel), h, w), np.float32)
        for i in range(q):
            for j in range(q):
                acc += d[:, i::q, j::q]
        d = acc / (q * q)
    expected = np.ascontiguousarray(d.transpose(1, 0, 2))
    offsets, weights = kernels.bilinear_weights(m * vel / dsm, pad)
    out = np.empty((h, len(vel), w), np.float32)
    kernels.matching_energy(cur, prev, offsets, weights, q, out)
    assert np.array_equal(out, expected)


def test_likelihood_rescale_equals_numpy():
    rng = np.random.default_rng(4)
    d = _rand(rng, (5, 13, 7))
    mean = d.mean(axis=1, keepdims=True)
    rel = d / (mean + 1e-12)
    rel -= rel.min(axis=1, keepdims=True)
    rel *= np.float32(-4.0)
    got, got_mean = d.copy(), np.empty_like(mean)
    kernels.likelihood_rescale(got, np.float32(1e-12), np.float32(-4.0), got_mean)
    assert np.array_equal(got, rel) and np.array_equal(got_mean, mean)


@pytest.mark.parametrize("square", [True, False])
def test_v1_update_equals_numpy(square):
    rng = np.random.default_rng(5)
    r1, r2, drive = _rand(rng, (4, 13, 9)), _rand(rng, (4, 13, 9)), _rand(rng, (4, 13, 9), 0.5)
    fb, sigma, e1 = 10.0, 0.01, math.exp(-5.0 / 10.0)
    a1 = np.multiply(r2, np.float32(fb))
    a1 += 1.0
    a1 *= drive
    if square:
        a1 *= a1
    t1 = np.divide(a1, a1.mean(axis=1, keepdims=True) + sigma)
    expected = r1.copy()
    expected -= t1
    expected *= e1
    expected += t1
    kernels.v1_update(r1, r2, drive, np.float32(fb), np.float32(sigma), np.float32(e1), square)
    assert np.array_equal(r1, expected)


@pytest.mark.parametrize("shape", [(6, 13, 7), (1, 5, 1)])
def test_mt_update_equals_numpy(shape):
    rng = np.random.default_rng(6)
    r2, pooled = _rand(rng, shape), _rand(rng, shape)
    lum = rng.random((shape[0], shape[2])).astype(np.float32)
    gx = np.exp(-np.diff(lum, axis=1) ** 2 / 0.02).astype(np.float32)
    gy = np.exp(-np.diff(lum, axis=0) ** 2 / 0.02).astype(np.float32)
    sigma, rate, e2 = 1.0, 0.2, math.exp(-0.25)
    out = np.zeros_like(r2)  # the former _V1MT.diffusion
    fx = gx[:, None, :] * (r2[:, :, 1:] - r2[:, :, :-1])
    out[:, :, :-1] += fx
    out[:, :, 1:] -= fx
    fy = gy[:, None, :] * (r2[1:] - r2[:-1])
    out[:-1] += fy
    out[1:] -= fy
    t2 = np.divide(pooled, sigma)
    t2 += rate * out
    expected = r2.copy()
    expected -= t2
    expected *= e2
    expected += t2
    np.maximum(expected, 0.0, out=expected)
    kernels.mt_update(r2, pooled, gx, gy, np.float32(sigma), np.float32(rate), np.float32(e2), True)
    assert np.array_equal(r2, expected)


def test_ring_mix_equals_einsum():
    rng = np.random.default_rng(7)
    ring = direction_pooling(3, 12, 30.0)[1:13, 1:13].astype(np.float32)
    x = _rand(rng, (5, 37, 11))
    out = np.empty_like(x)
    assert kernels.ring_mix(ring, x, out) is out
    assert np.array_equal(out, filters.ring_mix(ring, x))


def test_blur_channels_equals_layout_blur():
    """Channel-first blur (per-channel columns) equals the (h, C, w) stack's one-call blur."""
    rng = np.random.default_rng(8)
    x = _rand(rng, (5, 24, 3, 32))  # (C, h, n, w)
    kernel = filters.gaussian_kernel(1.5)
    stacked = np.ascontiguousarray(x.swapaxes(0, 1))  # (h, C, n, w)
    expected = filters.correlate_y(filters.correlate_x(stacked, kernel), kernel).swapaxes(0, 1)
    got = filters.blur_channels(x.copy(), kernel, np.empty_like(x))
    assert np.array_equal(got, expected)


def test_sh_v1_normalise_pool_equals_numpy():
    """simoncelli_heeger's V1 normalisation + 2 x 2 pooling in one pass: the NumPy passes' bits."""
    rng = np.random.default_rng(9)
    e = _rand(rng, (7, 6, 3, 10))  # (C, h, n, w)
    sigma = 0.37
    den = e.sum(axis=0, keepdims=True)
    den += sigma
    c = np.divide(e, den)
    expected = filters.pool_cells(c, 2)
    got = fused.v1_normalise_pool(e, np.float32(sigma), 2, np.empty((7, 3, 3, 5), np.float32))
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("offset", [0.0, 0.317])
def test_sh_mt_normalise_equals_numpy(offset):
    rng = np.random.default_rng(10)
    lin = (rng.standard_normal((9, 4, 3, 5)) * np.exp(rng.standard_normal((9, 4, 3, 5)))).astype(np.float32)
    sigma = 0.01
    m = lin.copy()
    if offset:
        m += np.float32(offset)
    m = np.maximum(m, 0.0, out=m)
    np.multiply(m, m, out=m)
    den = m.sum(axis=0, keepdims=True)
    den += np.float32(sigma)
    expected = np.ascontiguousarray(np.divide(m, den).transpose(2, 1, 3, 0))
    got = fused.mt_normalise(lin, np.float32(offset), np.float32(sigma), np.empty((3, 4, 5, 9), np.float32))
    assert np.array_equal(got, expected)


def test_planning_imports_no_numba():
    """Resolving the bio models (what planning does for every model) leaves Numba to the jobs that run them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from psybench.registry import resolve_model\n"
        "for algo in ('simoncelli_heeger', 'tlapale_v1mt'):\n"
        "    resolve_model({'name': algo, 'algorithm': algo}, track='motion')\n"
        "print('numba' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]


@pytest.mark.parametrize("shape", [(3, 5, 4, 2), (3, 5, 4, 7)])
def test_upsample_blocks_replicates_each_cell(shape):
    """Each cell over a factor x factor block, cropped (the flow's 8-byte copy and the general path)."""
    x = _rand(np.random.default_rng(11), shape)
    got = filters.upsample_blocks(x, 3, 14, 11)
    expected = np.repeat(np.repeat(x, 3, axis=1), 3, axis=2)[:, :14, :11]
    assert got.dtype == np.float32 and np.array_equal(got, expected)
