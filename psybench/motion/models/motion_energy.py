"""Motion-energy model of V1 and MT in the style of Simoncelli & Heeger (1998).

The model is a feed-forward cascade, streamed over blocks of frames:

1. *Pre-processing.* Luminance ``I`` becomes contrast ``(I - L0) / L0`` (``L0`` the
   display background), is blurred and decimated by ``downsample`` (the model runs
   on that coarser grid; SH98 run the same cascade on a pyramid level).
2. *V1 linear stage* (SH98 eq. 1): third-order derivative-of-Gaussian filters in
   space-time. The ten separable basis filters ``G_abc = d^a/dx^a d^b/dy^b d^c/dt^c G``
   (``a + b + c = 3``) are steered to ``n_directions`` unit vectors ``n`` spread
   over a hemisphere of the (scaled) space-time frequency domain:
   ``L_n = sum_abc 3!/(a! b! c!) n_x^a n_y^b n_t^c G_abc * I``.
   Time is filtered with a ``2 R + 1`` tap window that ends at the current frame,
   so the model is causal with a delay of ``R`` frames.
3. *V1 energy and normalisation* (SH98 eqs. 2-3): ``E_n = G_blur * L_n^2`` and
   ``C_n = E_n / (sum_m E_m + sigma_v1^2)``; ``sigma_v1^2`` is the summed energy
   of a reference grating of contrast ``v1_c50`` (SH98 ``v1C50``), so responses
   are bounded by 1 and zero input gives exactly zero.
4. *MT linear stage* (SH98 eq. 5): for each preferred velocity ``v`` the V1
   units whose direction ``n`` lies in the spectral plane of ``v``
   (``omega_t + v . omega_xy = 0``, normal ``m ~ (v_x, v_y, 1)`` in scaled units)
   are excitatory, the others inhibitory:
   ``w_n(v) = g_n(v) - mean_m g_m(v)``, ``g_n(v) = (1 - (n . m)^2)^3`` (the
   sixth-power angular tuning of a third-order filter), followed by spatial
   pooling ``G_mt``.
5. *MT non-linearity and normalisation* (SH98 eqs. 6-7): half-squaring
   ``M_v = (L_v + mt_offset)_+^2`` and ``P_v = M_v / (sum_u M_u + sigma_mt^2)``.
   ``p(t, x, v) = P_v``; the flow is RR-7317 eq. 2,
   ``v(t, x) = sum_v p v / sum_v p`` (zero where ``sum_v p`` vanishes).

Departures from SH98, all deliberate and documented in ``docs/models.md``: a
single spatial scale on a coarser grid instead of a pyramid; weights from an
analytic in-plane tuning rather than the reference code's least-squares fit;
``mt_offset`` defaults to 0 (SH98 0.317) so that a uniform field gives exactly
zero MT response; the velocity population is a polar grid matched to the
benchmark's speeds (see :func:`velocity_grid`), given in deg/s and converted to
px/frame with the run's display, like every size (deg) and time (ms), so that
the same physical stimulus gives the same response at any frame rate.

References
----------
.. [1] Simoncelli, E. P. & Heeger, D. J. (1998). A model of neuronal responses
   in visual area MT. Vision Research 38(5), 743-761.
.. [2] Kornprobst, P., Tlapale, E. et al. (2010). Motion Psychobench, INRIA
   RR-7317, eq. 2.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from math import factorial

import numpy as np

from psybench.motion.display import Display
from psybench.motion.models import filters
from psybench.motion.models.filters import downsample_frames, pool_cells, upsample_blocks
from psybench.motion.population import flow_from_distribution
from psybench.registry import register

__all__ = [
    "simoncelli_heeger",
    "velocity_grid",
    "flow_from_distribution",
    "steering_directions",
]


# --------------------------------------------------------------------------- helpers
def velocity_grid(speeds=(0.4, 0.8, 1.6, 3.2), n_directions: int = 8, *, include_zero: bool = True) -> np.ndarray:
    """Polar velocity grid in px/frame: zero plus ``speeds`` x ``n_directions``.

    Parameters
    ----------
    speeds : sequence of float
        Speeds (px/frame, full-resolution pixels).
    n_directions : int
        Equally spaced directions, the first rightward (direction 0 deg).
    include_zero : bool
        Prepend the zero velocity.

    Returns
    -------
    ndarray, shape (V, 2)
        Velocities ``(u, v)``, u rightward and v downward (image coordinates);
        direction ``k`` is ``360 k / n_directions`` degrees counter-clockwise with
        the visual y axis up, i.e. ``(s cos a, -s sin a)``.
    """
    speeds = np.asarray(speeds, dtype=float).ravel()
    if speeds.size == 0 or np.any(speeds <= 0):
        raise ValueError(f"speeds must be positive px/frame values, got {speeds.tolist()}")
    if int(n_directions) != n_directions or n_directions < 2:
        raise ValueError(f"n_directions must be an integer >= 2, got {n_directions!r}")
    ang = 2 * np.pi * np.arange(int(n_directions)) / int(n_directions)
    vel = [np.stack([s * np.cos(ang), -s * np.sin(ang)], axis=1) for s in speeds]
    out = np.concatenate(([np.zeros((1, 2))] if include_zero else []) + vel, axis=0)
    return out.astype(np.float64)


def _flow(p: np.ndarray, velocities: np.ndarray) -> np.ndarray:
    """RR-7317 eq. 2 on the model's float32 population (0 where ``sum_v p <= 1e-12``)."""
    return flow_from_distribution(np.asarray(p, dtype=np.float32), velocities, eps=1e-12)


def steering_directions(n: int) -> np.ndarray:
    """``n`` unit vectors ``(x, y, t)`` spread over the hemisphere ``t >= 0``.

    A Fibonacci lattice on the hemisphere: SH98 use 28 directions "evenly
    distributed"; opposite directions give the same energy, hence a hemisphere.

    Returns
    -------
    ndarray, shape (n, 3)
    """
    if int(n) != n or n < 10:
        raise ValueError(f"n_directions must be an integer >= 10 (ten steerable bases), got {n!r}")
    i = np.arange(int(n)) + 0.5
    z = 1.0 - i / n  # t component in (0, 1)
    r = np.sqrt(1.0 - z * z)
    phi = i * np.pi * (3.0 - np.sqrt(5.0))
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _hermite_kernels(sigma: float, radius: int) -> list[np.ndarray]:
    """Derivatives of order 0..3 of a unit-area Gaussian, in units of ``sigma`` (scaled coordinates)."""
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    s = x / sigma
    g = np.exp(-0.5 * s * s)
    g /= g.sum()
    # d^k/ds^k exp(-s^2/2) = (-1)^k He_k(s) exp(-s^2/2); He_1 = s, He_2 = s^2 - 1, He_3 = s^3 - 3 s
    ks = [g, -s * g, (s * s - 1) * g, -(s**3 - 3 * s) * g]
    # remove the DC of odd/even derivative kernels so that uniform input gives exactly zero
    for k in (1, 2, 3):
        ks[k] = ks[k] - ks[k].mean() if k % 2 == 0 else ks[k]
    return [k.astype(np.float32) for k in ks]


_YIELD_FRAMES = 4  # frames per yielded full-resolution block

_BASIS = [(a, b, 3 - a - b) for a in range(4) for b in range(4 - a)]  # (order x, order y, order t)


def _steering_matrix(dirs: np.ndarray) -> np.ndarray:
    """Shape (10, n): ``L_n = sum_k S[k, n] G_k`` for third-order directional derivatives."""
    s = np.empty((len(_BASIS), len(dirs)))
    for k, (a, b, c) in enumerate(_BASIS):
        coef = factorial(3) / (factorial(a) * factorial(b) * factorial(c))
        s[k] = coef * dirs[:, 0] ** a * dirs[:, 1] ** b * dirs[:, 2] ** c
    return s.astype(np.float32)


def _mt_weights(dirs: np.ndarray, vel_scaled: np.ndarray, power: float) -> np.ndarray:
    """Shape (n, V): zero-sum MT weights over V1 directions (SH98 eq. 5 in spirit)."""
    m = np.concatenate([vel_scaled, np.ones((len(vel_scaled), 1))], axis=1)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    cos_el2 = 1.0 - (dirs @ m.T) ** 2  # cos^2 of the elevation of n from the plane
    g = np.clip(cos_el2, 0.0, 1.0) ** power
    w = g - g.mean(axis=0, keepdims=True)
    w /= np.abs(w).sum(axis=0, keepdims=True)
    return w.astype(np.float32)


# --------------------------------------------------------------------------- the model
class _MotionEnergy:
    """Pre-computed filters of one parameter setting (internal)."""

    def __init__(self, *, display: Display, downsample: int, sigma_deg: float, sigma_t_ms: float,
                 n_directions: int, blur_deg: float, mt_pool_deg: float, mt_downsample: int,
                 v1_c50: float, mt_c50: float, mt_offset: float, weight_power: float, velocities_px: np.ndarray):
        self.ds = int(downsample)
        self.sigma_s = sigma_deg * display.px_per_deg / self.ds  # internal px
        self.sigma_t = sigma_t_ms / display.frame_ms  # frames
        self.radius_s = max(2, int(np.ceil(2.7 * self.sigma_s)))
        self.radius_t = max(2, int(np.ceil(2.7 * self.sigma_t)))
        self.ks = _hermite_kernels(self.sigma_s, self.radius_s)
        kt = _hermite_kernels(self.sigma_t, self.radius_t)
        # causal window: output at frame t uses frames t-2R..t, kernel centred at t-R.
        # win[..., i] holds frame t - 2R + i; convolution weights are the kernel reversed
        self.kt = np.ascontiguousarray(np.stack(kt, axis=1)[::-1])  # (2R+1, 4)
        self.dirs = steering_directions(n_directions)
        self.steer_t = np.ascontiguousarray(_steering_matrix(self.dirs).T)  # (n_dir, 10)
        self.blur = blur_deg * display.px_per_deg / self.ds
        self.mt_pool = mt_pool_deg * display.px_per_deg / (self.ds * int(mt_downsample))
        self.blur_kernel = filters.gaussian_kernel(self.blur) if self.blur > 0 else None
        self.mt_kernel = filters.gaussian_kernel(self.mt_pool) if self.mt_pool > 0 else None
        # velocity (internal px/frame) in scaled units x/sigma_s, t/sigma_t
        vel_scaled = np.asarray(velocities_px, float) / self.ds * self.sigma_t / self.sigma_s
        self.w_mt_t = np.ascontiguousarray(_mt_weights(self.dirs, vel_scaled, weight_power).T)  # (V, n_dir)
        self.mt_offset = float(mt_offset)
        self.velocities = np.asarray(velocities_px, np.float32)
        self._work: dict[str, np.ndarray] = {}
        from psybench.motion.models import motion_energy_kernels  # Numba: imported by a run, not by planning

        self.fused = motion_energy_kernels
        self.sigma_v1_sq = float(v1_c50) ** 2 * self._reference_energy()
        self.sigma_mt_sq = float(mt_c50) ** 2

    # -- V1 (channel-first stacks (C, h, n, w), blurred by psybench.motion.models.filters.blur_channels) --
    def _buffer(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 work array of ``shape``, reused from block to block (no page faults of a fresh array)."""
        size = math.prod(shape)
        buf = self._work.get(name)
        if buf is None or buf.size < size:
            buf = self._work[name] = np.empty(size, np.float32)
        return buf[:size].reshape(shape)

    def _v1_linear(self, hist: np.ndarray) -> np.ndarray:
        """``hist`` (n + 2R, h, w) contrast frames -> steered responses ``L_n``, shape (n_dir, h, n, w) (reused)."""
        win = np.lib.stride_tricks.sliding_window_view(hist, self.kt.shape[0], axis=0)  # (n, h, w, 2R+1)
        tc = np.ascontiguousarray((win @ self.kt).transpose(3, 1, 0, 2))  # (4, h, n, w): temporal orders 0..3
        basis = self._buffer("basis", (len(_BASIS),) + tc.shape[1:])  # (10, h, n, w)
        ks = self.ks
        for c in range(4):
            for a in range(4 - c):
                b = 3 - c - a
                xa = filters.correlate_x(tc[c], ks[a][::-1])
                filters.correlate_y(xa, ks[b][::-1], out=basis[_BASIS.index((a, b, c))])
        flat = basis.reshape(len(_BASIS), -1)
        lin = np.matmul(self.steer_t, flat, out=self._buffer("lin", (len(self.steer_t), flat.shape[1])))  # one GEMM
        return lin.reshape((-1,) + basis.shape[1:])

    def _energy(self, lin: np.ndarray) -> np.ndarray:
        """``E_n = G_blur * L_n^2`` in place of ``lin`` (n_dir, h, n, w)."""
        np.multiply(lin, lin, out=lin)
        if self.blur > 0:
            filters.blur_channels(lin, self.blur_kernel, self._buffer("blur", lin.shape))
        return lin

    def _reference_energy(self) -> float:
        """Summed V1 energy at the centre of a static contrast-1 grating at the filters' peak frequency."""
        f = np.sqrt(3.0) / (2 * np.pi * self.sigma_s)  # cycles/px: peak of s^3 exp(-s^2/2) in frequency
        n = 4 * self.radius_s + 8
        x = np.arange(n, dtype=np.float32)
        img = np.cos(2 * np.pi * f * x)[None, None, :].repeat(n, axis=1)
        hist = np.repeat(img, 2 * self.radius_t + 1, axis=0).astype(np.float32)
        e = self._energy(self._v1_linear(hist))
        return float(e[:, n // 2, 0, n // 2].sum())

    def v1(self, hist: np.ndarray) -> np.ndarray:
        """Normalised V1 responses ``C_n`` (SH98 eq. 3), shape (n_dir, h, n, w), in [0, 1] (a reused array)."""
        e = self._energy(self._v1_linear(hist))
        den = e.sum(axis=0, keepdims=True)
        den += self.sigma_v1_sq
        return np.divide(e, den, out=e)

    def v1_pooled(self, hist: np.ndarray, q: int) -> np.ndarray:
        """:func:`~psybench.motion.models.filters.pool_cells` of :meth:`v1` in one pass (h, w multiples of ``q``)."""
        e = self._energy(self._v1_linear(hist))
        out = self._buffer("pooled", (e.shape[0], e.shape[1] // q, e.shape[2], e.shape[3] // q))
        return self.fused.v1_normalise_pool(e, np.float32(self.sigma_v1_sq), q, out)

    def mt(self, c: np.ndarray) -> np.ndarray:
        """Normalised MT responses ``P_v`` (SH98 eqs. 5-7), (n, h, w, V) in [0, 1], from ``C_n`` (n_dir, h, n, w)."""
        flat = c.reshape(c.shape[0], -1)
        lin = np.matmul(self.w_mt_t, flat, out=self._buffer("mt", (len(self.w_mt_t), flat.shape[1])))
        lin = lin.reshape((-1,) + c.shape[1:])
        if self.mt_pool > 0:
            filters.blur_channels(lin, self.mt_kernel, self._buffer("blur", lin.shape))
        out = np.empty((lin.shape[2], lin.shape[1], lin.shape[3], lin.shape[0]), np.float32)
        return self.fused.mt_normalise(lin, np.float32(self.mt_offset), np.float32(self.sigma_mt_sq), out)


def speeds_px_per_frame(display: Display, speeds_deg_s, model: str) -> np.ndarray:
    """A population's preferred speeds (deg/s) in px/frame of the run's ``display``."""
    if not isinstance(display, Display):  # px/frame depends on the run's px/deg and frames/s: never assumed
        raise TypeError(f"{model}: the velocity grid needs the run's Display, got {display!r}")
    speeds = np.asarray(speeds_deg_s, dtype=float).ravel()
    if speeds.size == 0 or not np.all(np.isfinite(speeds)) or np.any(speeds <= 0):
        raise ValueError(f"{model}: speeds_deg_s must be positive deg/s values, got {speeds.tolist()}")
    return speeds * display.px_per_deg / display.frames_per_s


def _me_velocities(*, display: Display, speeds_deg_s=(5.0, 10.0, 20.0, 40.0),
                   n_velocity_directions=12, **_ignored) -> np.ndarray:
    """The population's velocities (V, 2) in px/frame of ``display`` (see :func:`velocity_grid`)."""
    return velocity_grid(speeds_px_per_frame(display, speeds_deg_s, "simoncelli_heeger"), n_velocity_directions)


@register(
    "simoncelli_heeger",
    track="motion",
    kind="stream",
    reference="Simoncelli & Heeger 1998, Vision Res 38:743",
    bounds={"downsample": (0, 64), "mt_downsample": (0, 64), "n_directions": (0, 360),
            "n_velocity_directions": (0, 360)},
)
def simoncelli_heeger(
    chunks,
    *,
    display: Display,
    downsample: int = 2,
    sigma_deg: float = 0.375,
    sigma_t_ms: float = 15.0,
    n_directions: int = 40,
    blur_deg: float = 0.125,
    mt_pool_deg: float = 0.375,
    mt_downsample: int = 2,
    v1_c50: float = 0.1,
    mt_c50: float = 0.1,
    mt_offset: float = 0.0,
    weight_power: float = 3.0,
    speeds_deg_s: tuple = (5.0, 10.0, 20.0, 40.0),
    n_velocity_directions: int = 12,
    return_v1: bool = False,
    return_p: bool = True,
) -> Iterator[dict[str, np.ndarray]]:
    """Motion-energy V1 -> MT model (Simoncelli & Heeger 1998), streamed.

    Parameters
    ----------
    chunks : iterable of ndarray, shape (t, H, W)
        Consecutive frame blocks, float32 luminance in [0, 1].
    display : Display
        Display mapping (px/deg, frame duration, background luminance).
    downsample : int
        Internal grid = frames decimated by this factor; outputs are replicated
        back over ``downsample x downsample`` blocks.
    sigma_deg : float
        Spatial sigma of the derivative-of-Gaussian filters (deg). 0.375 deg =
        3 px at 8 px/deg: filter peak period ~11 px (0.7 cycles/deg).
    sigma_t_ms : float
        Temporal sigma (ms); the window has ``2 R + 1`` taps, ``R = ceil(2.7 sigma)``
        frames, and delays the response by ``R`` frames.
    n_directions : int
        V1 directions on the space-time hemisphere (SH98: 28).
    blur_deg : float
        Spatial blur of the squared responses (SH98 "blur").
    mt_pool_deg : float
        Spatial pooling sigma of MT's linear stage.
    mt_downsample : int
        MT runs on the V1 grid decimated by this factor (2x2 mean of ``C_n``), so the
        output grid is ``downsample * mt_downsample`` display pixels per cell.
    v1_c50, mt_c50 : float
        Semi-saturation constants (SH98 ``v1C50``, ``mtC50``): ``sigma_v1^2`` is
        ``v1_c50^2`` times the energy of a contrast-1 optimal grating.
    mt_offset : float
        Added before half-squaring (SH98: 0.317); 0 keeps zero input at zero.
    weight_power : float
        Exponent of the in-plane tuning ``g = cos^2(elevation)^power`` of MT weights.
    speeds_deg_s : sequence of float
        MT preferred speeds (deg/s) of the population, with
        ``n_velocity_directions`` directions each, plus the zero velocity;
        converted to px/frame with ``display`` (``function.velocities(display=...)``
        gives the grid the ``p`` output refers to).
    n_velocity_directions : int
        Directions per speed.
    return_v1 : bool
        Also yield ``"v1"`` (t, h, w, n_directions) on the internal grid (tests and
        diagnostics; the runner rejects unknown outputs, keep it False there).
    return_p : bool
        Yield the population ``"p"``. False skips its replication to the display
        grid (about a third of the model's time at 256 x 256) and leaves ``"flow"``
        unchanged: for callers that use only the readout.

    Yields
    ------
    dict
        ``"flow"``: ndarray, shape (t, H, W, 2), float32 px/frame (RR-7317 eq. 2);
        ``"p"`` (if ``return_p``): ndarray, shape (t, H, W, V), float32, normalised MT
        responses over :func:`velocity_grid` of the speeds in px/frame and
        ``n_velocity_directions``.
    """
    for key, val in (("downsample", downsample), ("n_directions", n_directions), ("mt_downsample", mt_downsample)):
        if int(val) != val or val < 1:
            raise ValueError(f"simoncelli_heeger: {key} must be a positive integer, got {val!r}")
    for key, val in (("sigma_deg", sigma_deg), ("sigma_t_ms", sigma_t_ms), ("v1_c50", v1_c50), ("mt_c50", mt_c50)):
        if not val > 0:
            raise ValueError(f"simoncelli_heeger: {key} must be > 0, got {val!r}")
    vel = _me_velocities(display=display, speeds_deg_s=speeds_deg_s, n_velocity_directions=n_velocity_directions)
    model = _MotionEnergy(
        display=display, downsample=downsample, sigma_deg=sigma_deg, sigma_t_ms=sigma_t_ms,
        n_directions=n_directions, blur_deg=blur_deg, mt_pool_deg=mt_pool_deg, mt_downsample=mt_downsample,
        v1_c50=v1_c50,
        mt_c50=mt_c50, mt_offset=mt_offset, weight_power=weight_power, velocities_px=vel,
    )
    ds, taps = int(downsample), model.kt.shape[0]
    hist = None  # last (taps - 1) contrast frames on the internal grid
    for block in chunks:
        block = np.asarray(block, dtype=np.float32)
        if block.ndim != 3:
            raise ValueError(f"simoncelli_heeger: frame blocks must be (t, H, W), got shape {block.shape}")
        if block.shape[0] == 0:
            continue
        n, height, width = block.shape
        small = downsample_frames((block - display.background) / display.background, ds)
        if hist is None:  # before the first frame the scene is the first frame, static
            hist = np.repeat(small[:1], taps - 1, axis=0)
        ext = np.concatenate([hist, small], axis=0)
        hist = ext[-(taps - 1):].copy()
        q = int(mt_downsample)
        if return_v1 or q == 1 or small.shape[1] % q or small.shape[2] % q:
            c = model.v1(ext)  # (n_dir, h, n, w)
            p = model.mt(pool_cells(c, q) if q > 1 else c)  # (n, h', w', V)
        else:  # V1 normalised and pooled in one pass
            p = model.mt(model.v1_pooled(ext, q))
        flow = _flow(p, vel)
        ds_out = ds * int(mt_downsample)
        # full-resolution outputs are yielded a few frames at a time to bound memory
        for a in range(0, n, _YIELD_FRAMES):
            b = min(n, a + _YIELD_FRAMES)
            out = {"flow": upsample_blocks(flow[a:b], ds_out, height, width)}
            if return_p:
                out["p"] = upsample_blocks(p[a:b], ds_out, height, width)
            if return_v1:
                out["v1"] = np.ascontiguousarray(c[:, :, a:b].transpose(2, 1, 3, 0))
            yield out


simoncelli_heeger.velocities = _me_velocities
