"""Separable filtering of stacks of images, the bio-inspired models' inner loop.

The models filter many images of one size at once (V1 directions x frames,
velocity channels). They keep these stacks in an ``(h, C, w)`` layout (rows,
channels, columns), in which one OpenCV call filters every image along ``x``
(the array seen as a ``(h C, w)`` image: each row is one image row) and one call
along ``y`` (seen as ``(h, C w)``: each column is one image column), with
replicated borders (``scipy.ndimage``'s ``mode="nearest"``). OpenCV's
``sepFilter2D`` is multithreaded (``cv2.setNumThreads``) and about six times
faster than ``scipy.ndimage.correlate1d`` along a non-contiguous axis; the sums
are the same up to float32 rounding (tested against ``scipy.ndimage``).
"""

from __future__ import annotations

import numpy as np

from psybench._opencv import cv2

__all__ = [
    "gaussian_kernel", "correlate_x", "correlate_y", "blur_channels", "gaussian_matrix", "channel_mix", "ring_mix",
    "downsample_frames", "pool_cells", "upsample_blocks",
]

_ONE = np.ones((1, 1), np.float32)


def gaussian_kernel(sigma: float, truncate: float = 3.0) -> np.ndarray:
    """The sampled, unit-sum Gaussian of ``scipy.ndimage.gaussian_filter1d`` (radius ``int(truncate sigma + 0.5)``).

    Returns
    -------
    ndarray, shape (2 r + 1,), float32
    """
    radius = int(truncate * float(sigma) + 0.5)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    k = np.exp(-0.5 * x * x / float(sigma) ** 2)
    return (k / k.sum()).astype(np.float32)


def _as_column(kernel: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(kernel, dtype=np.float32).reshape(-1, 1)


def correlate_x(x: np.ndarray, kernel: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Correlate every image of a C-contiguous float32 stack ``(..., w)`` with ``kernel`` along its last axis.

    Borders replicate (``mode="nearest"``). Returns a new array of the same shape, or
    ``out`` (C-contiguous, same shape, not ``x``) filled: a reused buffer spares the
    page faults of a fresh large array.
    """
    flat = x.reshape(-1, x.shape[-1])
    dst = None if out is None else out.reshape(flat.shape)
    res = cv2.sepFilter2D(flat, -1, _as_column(kernel), _ONE, dst=dst, borderType=cv2.BORDER_REPLICATE)
    return res.reshape(x.shape) if out is None else out


def correlate_y(x: np.ndarray, kernel: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Correlate a C-contiguous float32 stack ``(h, ...)`` with ``kernel`` along its first axis (rows).

    Borders replicate (``mode="nearest"``). Returns a new array of the same shape, or
    ``out`` (C-contiguous, same shape, not ``x``) filled.
    """
    flat = x.reshape(x.shape[0], -1)
    dst = None if out is None else out.reshape(flat.shape)
    res = cv2.sepFilter2D(flat, -1, _ONE, _as_column(kernel), dst=dst, borderType=cv2.BORDER_REPLICATE)
    return res.reshape(x.shape) if out is None else out


def blur_channels(x: np.ndarray, kernel: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Blur every image of a channel-first float32 stack ``(C, h, ...,  w)`` along ``x`` and ``y``, in place.

    The same sums as :func:`correlate_y` of :func:`correlate_x` on the ``(h, C, ..., w)``
    stack (each row, and each column, is filtered alone), without moving the channels:
    along ``x`` into ``work`` (a C-contiguous buffer of ``x``'s shape), then along ``y``
    channel by channel back into ``x``. Returns ``x``.
    """
    correlate_x(x, kernel, out=work)
    for c in range(x.shape[0]):
        correlate_y(work[c], kernel, out=x[c])
    return x


def channel_mix(matrix: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``matrix @ x`` over the channel axis of an ``(h, C, ...)`` stack: ``(M, C)`` -> ``(h, M, ...)``.

    One GEMM on the stack transposed to ``(C, h ...)``: numpy's broadcast matmul of a
    2-D matrix over ``h`` batches took many times the CPU time (benchmarks/README.md).
    """
    flat = np.ascontiguousarray(x.swapaxes(0, 1)).reshape(x.shape[1], -1)
    out = (matrix @ flat).reshape((matrix.shape[0], x.shape[0]) + x.shape[2:])
    return np.ascontiguousarray(out.swapaxes(0, 1))


def ring_mix(ring: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Mix the directions of every speed ring of a polar population ``(h, 1 + S D, w)`` with ``ring`` ``(D, D)``.

    Channel 0 (the zero velocity) is copied; channels ``1 + s D + j`` are ring ``s``,
    direction ``j``. Equals :func:`channel_mix` with the block-diagonal ``(V, V)``
    matrix of :func:`psybench.motion.population.direction_pooling` (tested) at about a
    fifth of its multiply-adds: one ``(D, D)`` product over every ring, row and column,
    by ``np.einsum``'s own loop, not BLAS, which was much slower for a ``(12, 12)`` by
    ``(12, N)`` product (benchmarks/README.md).
    """
    h, nv, w = x.shape
    nd = ring.shape[0]
    rings = x[:, 1:].reshape(h, (nv - 1) // nd, nd, w)
    flat = np.ascontiguousarray(rings.transpose(2, 0, 1, 3)).reshape(nd, -1)  # (D, h S w)
    mixed = np.einsum("ij,jn->in", ring, flat).reshape(nd, h, (nv - 1) // nd, w)
    out = np.empty_like(x)
    out[:, 0] = x[:, 0]
    out[:, 1:] = mixed.transpose(1, 2, 0, 3).reshape(h, nv - 1, w)
    return out


def gaussian_matrix(n: int, sigma: float, truncate: float = 3.0) -> np.ndarray:
    """``G`` with ``G @ x`` = ``scipy.ndimage.gaussian_filter1d(x, sigma, mode="constant", truncate=truncate)``.

    For kernels as wide as the image (a surround pool), a dense ``(n, n)`` matrix
    product is cheaper than the convolution and exact (zero outside the image).

    Returns
    -------
    ndarray, shape (n, n), float32
    """
    k = gaussian_kernel(sigma, truncate).astype(np.float64)
    radius = len(k) // 2
    offset = np.arange(n)[None, :] - np.arange(n)[:, None]  # j - i
    inside = np.abs(offset) <= radius
    return np.where(inside, k[np.clip(offset + radius, 0, len(k) - 1)], 0.0).astype(np.float32)


def downsample_frames(frames: np.ndarray, factor: int) -> np.ndarray:
    """Gaussian anti-alias blur (sigma = factor / 2, truncated at 3 sigma) and decimation of ``(t, H, W)`` frames.

    The grid is padded (edge values) to a multiple of ``factor``; pixel
    ``factor // 2`` of each block is kept.

    Returns
    -------
    ndarray, shape (t, ceil(H / factor), ceil(W / factor)), float32
    """
    if factor == 1:
        return frames.astype(np.float32, copy=False)
    t, h, w = frames.shape
    ph, pw = (-h) % factor, (-w) % factor
    if ph or pw:
        frames = np.pad(frames, ((0, 0), (0, ph), (0, pw)), mode="edge")
    kernel = gaussian_kernel(factor / 2.0)
    off = factor // 2
    stack = np.ascontiguousarray(np.moveaxis(frames, 1, 0), dtype=np.float32)  # (H, t, W)
    rows = correlate_y(stack, kernel)[off::factor]
    blurred = correlate_x(np.ascontiguousarray(rows), kernel)[..., off::factor]
    return np.ascontiguousarray(np.moveaxis(blurred, 0, 1))


def pool_cells(c: np.ndarray, q: int) -> np.ndarray:
    """Mean over ``q x q`` cells of a (C, h, n, w) stack (edge-padded to whole cells)."""
    ph, pw = (-c.shape[1]) % q, (-c.shape[3]) % q
    if ph or pw:
        c = np.pad(c, ((0, 0), (0, ph), (0, 0), (0, pw)), mode="edge")
    acc = c[:, 0::q, :, 0::q].copy()
    for i in range(q):
        for j in range(q):
            if i or j:
                acc += c[:, i::q, :, j::q]
    acc *= np.float32(1.0 / (q * q))
    return acc


def upsample_blocks(x: np.ndarray, factor: int, height: int, width: int) -> np.ndarray:
    """Replicate each internal grid cell over a ``factor x factor`` block; crop to (H, W).

    ``x`` has shape ``(t, h, w, ...)``. Block replication (not interpolation) keeps
    ``flow == eq. 2 of p`` pixel by pixel and compresses well in the response store.
    """
    if factor == 1:
        return x[:, :height, :width]
    t, h, w = x.shape[:3]
    out = np.empty((t, h, factor, w, factor) + x.shape[3:], dtype=x.dtype)
    if x.shape[3:] == (2,) and x.dtype == np.float32 and x.flags.c_contiguous:  # a flow: (u, v) as one 8-byte item
        out.view(np.int64)[..., 0] = x.view(np.int64)[:, :, None, :, None, 0]  # the same bytes, half the time
    else:
        out[...] = x[:, :, None, :, None]  # one broadcast copy (faster than two np.repeat)
    out = out.reshape((t, h * factor, w * factor) + x.shape[3:])
    if out.shape[1] != height or out.shape[2] != width:
        out = np.ascontiguousarray(out[:, :height, :width])
    return out
