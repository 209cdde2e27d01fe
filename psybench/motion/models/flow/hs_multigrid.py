"""The multigrid preconditioner of Horn-Schunck's solver (:mod:`psybench.motion.models.flow.hornschunck`).

One grid level of the Horn & Schunck (1981, sec. 11) equations, its block-Jacobi
smoother and V-cycle (Braess 1986; Tatebe 1993), and the bilinear prolongation with
its transpose, the restriction, between levels.
"""

from __future__ import annotations

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

    The two flow components are handled together as one (2, H, W) array, with every
    step computed by the compiled loops of :mod:`psybench.motion.models.flow.hs_kernels`
    into buffers the level owns: element by element they are the operations of the
    component-by-component array formulas (``j_u[c] w[0] + j_v[c] w[1]`` is row c of
    ``J w``, with ``j_u = (jxx, jxy)``, ``j_v = (jxy, jyy)``), in the same order and in
    the grid's dtype (the float ``s`` and ``omega`` are cast to it first, as NumPy 2
    casts a Python float for a float32 array), so the values are the same bits, with
    one pass over memory per operation instead of one per array step and one call per
    operation (most V-cycle work is on grids of a few cells, where the calls were the cost).
    """

    def __init__(self, jxx, jxy, jyy, s: float, kernel: np.ndarray, coarsen: bool = True):
        from psybench.motion.models.flow import hs_kernels  # compiled (cached) on first use, not at planning

        self._k = hs_kernels
        dtype = jxx.dtype
        if np.asarray(kernel).dtype != dtype:
            raise ValueError(f"Horn-Schunck level: kernel dtype {np.asarray(kernel).dtype} differs from the "
                             f"grid's {dtype}")
        self.jxx, self.jxy, self.jyy = jxx, jxy, jyy
        d = (s * (1.0 - _self_weight(kernel, jxx.shape))).astype(dtype)
        self.q, self.p = jyy + d, jxx + d
        self.det = self.p * self.q - jxy * jxy
        self.s, self.taps = dtype.type(s), hs_kernels.taps(kernel)
        self.lanes = hs_kernels.F32_FMA_LANES if dtype == np.float32 else hs_kernels.F64_FMA_LANES
        self.weights = hs_kernels.weights(dtype)
        h, w = jxx.shape
        self._res, self._x = np.empty((2, h, w), dtype), np.empty((2, h, w), dtype)
        self.coarse = None
        if coarsen and min(jxx.shape) >= 8:
            # the energy on cells twice as large: the data terms add up (lumped P^T J P), while the
            # smoothness term keeps its weight (a 2-D Dirichlet energy does not change with the grid's scale)
            self.coarse = _HSLevel(*(_restrict(a) for a in (jxx, jxy, jyy)), s, kernel)
            ch, cw = self.coarse.jxx.shape
            self._coarse_b, self._restricted = np.empty((2, ch, cw), dtype), np.empty((2, h, cw), dtype)
            self._prolonged = np.empty((2, ch, w), dtype)

    def _operator(self) -> tuple:
        return self.jxx, self.jxy, self.jyy, self.s, self.taps, self.lanes

    def apply(self, w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``A w`` for ``w`` (2, H, W) C-contiguous, into ``out`` (new if None)."""
        out = np.empty_like(w) if out is None else out
        self._k.apply(w, *self._operator(), out)
        return out

    def block_solve(self, r: np.ndarray, out: np.ndarray | None = None, omega: float = 1.0) -> np.ndarray:
        """``omega`` times the per-pixel 2 x 2 blocks' inverse (block Jacobi) applied to ``r``, into ``out``."""
        out = np.empty_like(r) if out is None else out
        self._k.block_step(r, self.jxy, self.q, self.p, self.det, self.jxx.dtype.type(omega), out)
        return out

    def _smooth(self, x: np.ndarray, b: np.ndarray, omega: float, n: int) -> None:
        """``n`` times ``x += omega * block_solve(b - A x)`` in place."""
        if n > 0:
            self._k.smooth(x, b, self.jxx, self.jxy, self.jyy, self.q, self.p, self.det, self.s, self.taps,
                           self.lanes, self.jxx.dtype.type(omega), n, self._res)

    def v_cycle(self, b: np.ndarray, sweeps: int = 1, omega: float = 0.7) -> np.ndarray:
        """Symmetric multigrid V-cycle from 0 (damped block-Jacobi smoothing): an SPD approximation of ``A^-1 b``.

        Returns the level's own buffer: read it before the next V-cycle on this level.
        """
        x = self.block_solve(b, out=self._x, omega=omega)
        if self.coarse is None:  # the coarsest grid (< 8 cells a side): smoothing is a solve
            self._smooth(x, b, omega, sweeps - 1 + 30)
            return x
        self._smooth(x, b, omega, sweeps - 1)
        self._k.residual(x, b, *self._operator(), self._res)
        self._k.restrict(self._res, self.weights, self._restricted, self._coarse_b)
        self._k.prolong_add(self.coarse.v_cycle(self._coarse_b, sweeps, omega), self.weights, self._prolonged, x)
        self._smooth(x, b, omega, sweeps)
        return x
