"""The multigrid preconditioner of Horn-Schunck's solver (:mod:`psybench.motion.models.flow.hornschunck`).

One grid level of the Horn & Schunck (1981, sec. 11) equations, its block-Jacobi
smoother and V-cycle (Braess 1986; Tatebe 1993), and the bilinear prolongation with
its transpose, the restriction, between levels.
"""

from __future__ import annotations

import cv2
import numpy as np

_SELF_WEIGHTS: dict[tuple, np.ndarray] = {}


def _self_weight(kernel: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Diagonal of the replicated-border 3 x 3 average ``kernel`` on ``shape``: its centre inside, more on borders.

    It depends on the kernel and the grid only, not on the frames: computed once per
    (kernel, shape) and kept (read-only).
    """
    key = (kernel.dtype.str, kernel.tobytes(), tuple(shape))
    diag = _SELF_WEIGHTS.get(key)
    if diag is None:
        h, w = shape
        rows, cols = np.arange(h)[:, None], np.arange(w)[None, :]
        diag = np.zeros(shape)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                same = (np.clip(rows + dy, 0, h - 1) == rows) & (np.clip(cols + dx, 0, w - 1) == cols)
                diag += kernel[dy + 1, dx + 1] * same
        diag.flags.writeable = False
        diag = _SELF_WEIGHTS.setdefault(key, diag)
    return diag


def _on(axis: int, part: slice) -> tuple:
    """Index of ``part`` along ``axis`` (-1: columns, -2: rows) of an array (..., H, W)."""
    return (Ellipsis, part) if axis == -1 else (Ellipsis, part, slice(None))


_ALL_BUT_FIRST, _ALL_BUT_LAST, _FIRST, _LAST = slice(1, None), slice(None, -1), slice(0, 1), slice(-1, None)


def _prolong1(x: np.ndarray, n: int, axis: int = -1) -> np.ndarray:
    """Linear interpolation along ``axis`` from ``ceil(n / 2)`` cells to ``n`` (cell centres, edges clamped).

    Fine cell 2j is ``0.75 x[j] + 0.25 x[j - 1]`` and 2j + 1 is ``0.75 x[j] + 0.25 x[j + 1]``
    (indices clamped to the edges), written straight into the output's even and odd cells.
    """
    m = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = 2 * m
    out = np.empty(shape, x.dtype)
    centre, quarter = 0.75 * x, 0.25 * x
    even, odd = out[_on(axis, slice(0, None, 2))], out[_on(axis, slice(1, None, 2))]
    first, last, but_first, but_last = (_on(axis, part) for part in (_FIRST, _LAST, _ALL_BUT_FIRST, _ALL_BUT_LAST))
    np.add(centre[but_first], quarter[but_last], out=even[but_first])
    np.add(centre[first], quarter[first], out=even[first])
    np.add(centre[but_last], quarter[but_first], out=odd[but_last])
    np.add(centre[last], quarter[last], out=odd[last])
    return out[_on(axis, slice(0, n))]


def _restrict1(r: np.ndarray, axis: int = -1) -> np.ndarray:
    """The adjoint (transpose) of :func:`_prolong1` along ``axis``: ``n`` fine values to ``ceil(n / 2)`` cells."""
    n = r.shape[axis]
    if n % 2:
        pad = list(r.shape)
        pad[axis] = 1
        r = np.concatenate([r, np.zeros(pad, r.dtype)], axis=axis)
    even, odd = r[_on(axis, slice(0, None, 2))], r[_on(axis, slice(1, None, 2))]
    out = np.add(even, odd)
    out *= 0.75
    even, odd = 0.25 * even, 0.25 * odd
    first, last, but_first, but_last = (_on(axis, part) for part in (_FIRST, _LAST, _ALL_BUT_FIRST, _ALL_BUT_LAST))
    out[but_last] += even[but_first]
    out[but_first] += odd[but_last]
    out[first] += even[first]
    out[last] += odd[last]
    return out


def _restrict(r: np.ndarray) -> np.ndarray:
    """``P^T r`` over the last two axes, ``P`` the bilinear prolongation :func:`_prolong` (columns, then rows)."""
    return _restrict1(_restrict1(r, -1), -2)


def _prolong(x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Bilinear interpolation of the last two axes to ``shape`` (cell centres; 2x finer; columns, then rows)."""
    return _prolong1(_prolong1(x, shape[1], -1), shape[0], -2)


class _HSLevel:
    """``A w = J w + s (w - K * w)`` on one grid (K a 3 x 3 average, replicated borders) and its block diagonal.

    The two flow components are handled together as one (2, H, W) array, with the
    coefficients stacked to match (``j_u[c] w[0] + j_v[c] w[1]`` is row c of ``J w``) and
    every step written into buffers the level owns: element by element these are the
    operations of the component-by-component formulas, in the same order, so the
    values are the same bits, with a fraction of the allocations and calls (most
    V-cycle work is on grids of a few cells, where the calls were the cost).
    """

    def __init__(self, jxx, jxy, jyy, s: float, kernel: np.ndarray, coarsen: bool = True):
        self.jxy, self.s, self.kernel = jxy, s, kernel
        d = (s * (1.0 - _self_weight(kernel, jxx.shape))).astype(jxx.dtype)
        p, q = jxx + d, jyy + d
        self.det = p * q - jxy * jxy
        self.j_u, self.j_v, self.qp = np.stack([jxx, jxy]), np.stack([jxy, jyy]), np.stack([q, p])
        self._smooth, self._tmp, self._res, self._step, self._x = (
            np.empty((2,) + jxx.shape, jxx.dtype) for _ in range(5))
        self.coarse = None
        if coarsen and min(jxx.shape) >= 8:
            # the energy on cells twice as large: the data terms add up (lumped P^T J P), while the
            # smoothness term keeps its weight (a 2-D Dirichlet energy does not change with the grid's scale)
            self.coarse = _HSLevel(*(_restrict(a) for a in (jxx, jxy, jyy)), s, kernel)

    def apply(self, w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``A w`` for ``w`` (2, H, W) C-contiguous, into ``out`` (new if None)."""
        out = np.empty_like(w) if out is None else out
        smooth, tmp = self._smooth, self._tmp
        for c in range(2):
            cv2.filter2D(w[c], -1, self.kernel, dst=smooth[c], borderType=cv2.BORDER_REPLICATE)
        np.subtract(w, smooth, out=smooth)
        np.multiply(smooth, self.s, out=smooth)
        np.multiply(self.j_u, w[0], out=out)
        np.multiply(self.j_v, w[1], out=tmp)
        out += tmp
        out += smooth
        return out

    def block_solve(self, r: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The per-pixel 2 x 2 diagonal blocks' inverse applied to ``r`` (block Jacobi), into ``out``."""
        out = np.empty_like(r) if out is None else out
        np.multiply(self.qp, r, out=out)  # (q r0, p r1)
        np.multiply(self.jxy, r[::-1], out=self._tmp)  # (jxy r1, jxy r0)
        out -= self._tmp
        out /= self.det
        return out

    def _smoothing_step(self, x: np.ndarray, b: np.ndarray, omega: float) -> None:
        """``x += omega * block_solve(b - A x)`` in place."""
        res, step = self._res, self._step
        np.subtract(b, self.apply(x, out=res), out=res)
        self.block_solve(res, out=step)
        step *= omega
        x += step

    def v_cycle(self, b: np.ndarray, sweeps: int = 1, omega: float = 0.7) -> np.ndarray:
        """Symmetric multigrid V-cycle from 0 (damped block-Jacobi smoothing): an SPD approximation of ``A^-1 b``.

        Returns the level's own buffer: read it before the next V-cycle on this level.
        """
        x = self.block_solve(b, out=self._x)
        x *= omega
        for _ in range(sweeps - 1):
            self._smoothing_step(x, b, omega)
        if self.coarse is None:
            for _ in range(30):  # the coarsest grid (< 8 cells a side): smoothing is a solve
                self._smoothing_step(x, b, omega)
            return x
        res = self._res
        np.subtract(b, self.apply(x, out=res), out=res)
        x += _prolong(self.coarse.v_cycle(_restrict(res), sweeps, omega), b.shape[1:])
        for _ in range(sweeps):
            self._smoothing_step(x, b, omega)
        return x
