"""Recurrent V1-MT neural-field model in the style of Tlapale, Masson & Kornprobst (2010).

Two populations over position ``x`` (an internal grid, ``downsample`` display
pixels per cell) and a velocity grid ``v`` (:func:`~psybench.motion.models.motion_energy.velocity_grid`)
evolve in continuous time (ms). The display's frame time is integrated with
exponential-Euler sub-steps of at most ``max_step_ms``; the state is carried
from one block of frames to the next, so the model streams with constant memory.

Input (V1 local motion evidence)
    A correlation (matching) likelihood, as in Bayerl & Neumann (2004):
    ``D(x, v) = G_match * (I_t(x) - I_{t-m}(x - m v))^2`` on a ``match_downsample``
    grid (``m = lag_ms`` in frames, ``I`` in contrast units), pooled to the model grid,
    ``S(x, v) = c(x) exp(-beta D / mean_v D) / max_v(...)`` with
    ``c = mean_v D / (mean_v D + c50^2)``: a ridge along the constraint line on an
    edge (aperture problem), a peak at 2D features, zero on a uniform field.
V1 (Tlapale et al. 2010 eq. for p1; Bayerl & Neumann 2004 eqs. 1-3)
    ``tau_1 dr1/dt = -r1 + a1 / (sigma_1 + mean_v a1)`` with modulatory feedback
    ``a1 = S (1 + C r2)``: feedback only amplifies existing input, and the divisive
    (shunting) normalisation over the velocity space is the velocity-space inhibition.
MT (Tlapale et al. 2010 eq. for p2)
    ``tau_2 dr2/dt = -r2 + (G_mt * K r1) / sigma_2 + D sum_y w(x, y) (r2(y) - r2(x))``
    with larger spatial pooling ``G_mt``, pooling ``K`` over neighbouring directions
    (see Units), and lateral diffusion gated by luminance similarity
    ``w(x, y) = G(x - y) g(|I(x) - I(y)|)``, ``g(d) = exp(-d^2 / (2 sigma_I^2))`` (Tlapale's gated diffusion).
    Centre-surround divisive normalisation of MT's output:
    ``m = r2 / (1 + (s / A_50)^n)``, where the surround pool ``s`` is the stimulated
    area (deg^2) seen through a wide peak-1 Gaussian window ``G_surround`` and lags
    the centre, ``tau_s ds/dt = -s + cell_area * sum_y G_surround(x - y) mean_v (G_mt * r1)(y)``.
    The surround acts on what MT sends on (to the readout), not on the feedback to
    V1, so that suppression of large stimuli does not undo the disambiguation.
Readout
    ``p = m + r0`` (``r0`` a spontaneous rate, equal at every velocity) and the flow
    from RR-7317 eq. 2, ``v = sum_v p v / sum_v p``. The spontaneous rate makes the
    flow's magnitude follow the MT response's strength (it is zero where MT is silent,
    and shrinks where the surround suppresses MT), while its direction is that of
    the MT population alone; the pursuit readout's domain mean then saturates and
    declines with aperture size (Barthelemy et al. 2006).

Units: every time constant is in ms, every spatial size in degrees of visual
angle and every speed of the velocity grid in deg/s, converted with the display
(px/deg, frames/s), so the same physical stimulus gives the same response at
any frame rate (up to the sampling of the lag and of the drive). MT pools V1
over neighbouring directions (Bayerl & Neumann 2004's velocity-space
integration; :func:`direction_pooling`, by default as wide as the grid spacing):
without it the feedback loop with the exponent-2 competition is winner-take-all
on the grid, and a motion between grid directions snaps to a grid unit.

References
----------
.. [1] Tlapale, E., Masson, G. S. & Kornprobst, P. (2010). Modelling the dynamics
   of motion integration with a new luminance-gated diffusion mechanism.
   Vision Research 50(17), 1676-1692.
.. [2] Bayerl, P. & Neumann, H. (2004). Disambiguating visual motion through
   contextual feedback modulation. Neural Computation 16(10), 2041-2066.
.. [3] Kornprobst, P., Tlapale, E. et al. (2010). Motion Psychobench, INRIA RR-7317.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from psybench.motion.display import Display
from psybench.motion.models import filters
from psybench.motion.models.filters import downsample_frames, upsample_blocks
from psybench.motion.models.motion_energy import speeds_px_per_frame, velocity_grid
from psybench.motion.population import direction_pooling
from psybench.registry import register

__all__ = ["tlapale_v1mt"]


class _V1MT:
    """State and constants of one run (internal)."""

    def __init__(self, display: Display, p: dict, velocities: np.ndarray, shape: tuple[int, int]):
        # the compiled loops (Numba) imported by a run, not by planning, which imports every model module
        from psybench.motion.models import v1mt_kernels

        self.kernels = v1mt_kernels
        self.p = p
        self.vel = velocities.astype(np.float32)
        self.dsm, self.ds = int(p["match_downsample"]), int(p["downsample"])
        self.pool = self.ds // self.dsm
        self.frame_ms = display.frame_ms
        self.lag = max(1, int(round(p["lag_ms"] / display.frame_ms)))
        deg_model = display.px_per_deg / self.ds  # model cells per degree
        self.match_sigma = p["match_sigma_deg"] * display.px_per_deg / self.dsm
        self.mt_sigma = p["mt_pool_deg"] * deg_model
        self.surround_sigma = p["surround_deg"] * deg_model
        self.surround_on = p["surround_deg"] > 0 and np.isfinite(p["surround_area_deg2"])
        self.cell_deg2 = float(deg_model) ** -2  # area of one model cell in deg^2
        self.n_sub = max(1, int(math.ceil(self.frame_ms / p["max_step_ms"])))
        dt = self.frame_ms / self.n_sub
        self.dt = dt
        self.e1 = math.exp(-dt / p["tau_v1_ms"])
        self.e2 = math.exp(-dt / p["tau_mt_ms"])
        self.es = math.exp(-dt / p["tau_surround_ms"])
        # diffusion: rate per ms, applied inside the MT relaxation (explicit part)
        self.diff = p["diffusion_per_ms"] * p["tau_mt_ms"]
        nv = len(self.vel)
        n_dir = int(p["n_velocity_directions"])
        pool_v = direction_pooling((nv - 1) // n_dir, n_dir, p["direction_pooling_deg"])
        self.pool_ring = None if np.array_equal(pool_v, np.eye(nv)) else pool_v[1:1 + n_dir, 1:1 + n_dir].copy()
        h, w = shape
        # state in the (h, V, w) layout of psybench.motion.models.filters (one OpenCV call per blur axis)
        self.r1 = np.zeros((h, nv, w), np.float32)
        self.r2 = np.zeros((h, nv, w), np.float32)
        self.a1 = np.empty((h, nv, w), np.float32)
        self.mixed = np.empty((h, nv, w), np.float32)  # r1 pooled over directions
        self.match_kernel = filters.gaussian_kernel(self.match_sigma / self.pool) if self.match_sigma > 0 else None
        self.mt_kernel = filters.gaussian_kernel(self.mt_sigma) if self.mt_sigma > 0 else None
        if self.surround_on:  # the pool is as wide as the display: exact as (h, h) and (w, w) matrix products
            norm = np.float32(self.cell_deg2 * 2 * np.pi * self.surround_sigma**2)
            self.surround_y = filters.gaussian_matrix(h, self.surround_sigma) * norm
            self.surround_x = filters.gaussian_matrix(w, self.surround_sigma).T
        self.s = np.zeros((h, w), np.float32)
        self.hist: list[np.ndarray] = []  # last `lag` frames on the matching grid
        max_disp = float(np.abs(self.vel).max()) * self.lag / self.dsm
        self.pad = int(math.ceil(max_disp)) + 2

    # -- input ----------------------------------------------------------------------
    def likelihood(self, cur: np.ndarray) -> np.ndarray:
        """Local velocity evidence ``S`` (h, V, w) in [0, 1] from the current matching-grid frame."""
        nv = len(self.vel)
        h, w = cur.shape[0] // self.pool, cur.shape[1] // self.pool
        if not self.hist:
            return np.zeros((h, nv, w), np.float32)
        m = len(self.hist)  # frames back (<= lag): m v is the expected displacement
        prev = np.pad(self.hist[0], self.pad, mode="edge")
        offsets, weights = self.kernels.bilinear_weights(m * self.vel / self.dsm, self.pad)
        d = np.empty((h, nv, w), np.float32)  # squared differences, box-pooled to the model grid
        self.kernels.matching_energy(cur, prev, offsets, weights, self.pool, d)
        if self.match_kernel is not None:
            d = filters.correlate_y(filters.correlate_x(d, self.match_kernel), self.match_kernel)
        mean = np.empty((h, 1, w), np.float32)
        self.kernels.likelihood_rescale(d, np.float32(1e-12), np.float32(-self.p["beta"]), mean)  # D/mean - min
        like = np.exp(d, out=d)  # max over v is exactly 1
        like *= mean / (mean + self.p["c50"] ** 2)  # input contrast gain
        return like

    def push(self, cur: np.ndarray) -> None:
        self.hist.append(cur)
        if len(self.hist) > self.lag:
            self.hist.pop(0)

    # -- dynamics -------------------------------------------------------------------
    def gates(self, lum: np.ndarray) -> tuple[np.ndarray, ...]:
        """Luminance-similarity weights ``g(|I(x) - I(y)|)`` to the 4 neighbours (Tlapale's gating)."""
        s2 = 2.0 * self.p["lum_sigma"] ** 2
        gx = np.exp(-np.diff(lum, axis=1) ** 2 / s2).astype(np.float32)  # (h, w-1) between x and x+1
        gy = np.exp(-np.diff(lum, axis=0) ** 2 / s2).astype(np.float32)  # (h-1, w)
        return gx, gy

    def step_frame(self, drive: np.ndarray, lum: np.ndarray) -> None:
        """Integrate one frame of the dynamics driven by ``drive`` (h, V, w) (exponential Euler, in place)."""
        p = self.p
        gx, gy = self.gates(lum)
        q = p["v1_exponent"]
        r1, r2 = self.r1, self.r2
        f32 = np.float32
        for _ in range(self.n_sub):
            if q in (1, 2):  # a1 = S (1 + C r2), normalised over v, and r1's relaxation in one pass
                self.kernels.v1_update(r1, r2, drive, f32(p["feedback_gain"]), f32(p["sigma_v1"]), f32(self.e1),
                                       q == 2)
            else:
                a1 = np.multiply(r2, f32(p["feedback_gain"]), out=self.a1)
                a1 += 1.0
                a1 *= drive
                np.power(a1, q, out=a1)
                t1 = np.divide(a1, a1.mean(axis=1, keepdims=True) + p["sigma_v1"], out=a1)
                r1 -= t1  # r1 = t1 + (r1 - t1) e1
                r1 *= self.e1
                r1 += t1
            across = r1 if self.pool_ring is None else self.kernels.ring_mix(self.pool_ring, r1, self.mixed)
            pooled = across if self.mt_kernel is None else filters.correlate_y(
                filters.correlate_x(across, self.mt_kernel), self.mt_kernel)
            if self.surround_on:
                # stimulated area (deg^2) seen through the surround's peak-1 Gaussian window
                ts = self.surround_y @ pooled.mean(axis=1) @ self.surround_x
                self.s = ts + (self.s - ts) * self.es
            # r2 = max(t2 + (r2 - t2) e2, 0), t2 = pooled / sigma_2 + D (gated diffusion of r2)
            self.kernels.mt_update(r2, pooled, gx, gy, f32(p["sigma_mt"]), f32(self.diff), f32(self.e2),
                                   self.diff > 0)

    def readout(self, with_p: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
        """``p = m + r0`` (None unless ``with_p``) and its eq. 2 flow on the model grid, (h, w, V) and (h, w, 2).

        ``m`` is the surround-normalised MT output.
        The flow is ``sum_v m v / (sum_v m + V r0)``, equal to eq. 2 of ``p``
        because the velocity grid is symmetric (``sum_v v = 0``) but without its
        rounding residue where MT is silent (there the flow is exactly 0).
        """
        r2 = self.r2
        if self.surround_on:  # centre-surround divisive normalisation of MT's output
            gain = 1.0 + (self.s / self.p["surround_area_deg2"]) ** self.p["surround_exponent"]
            r2 = r2 / gain[:, None, :]
        r2 = r2.transpose(0, 2, 1)
        r0 = np.float32(self.p["spontaneous"])
        den = r2.sum(axis=-1, keepdims=True) + r0 * r2.shape[-1]
        num = r2 @ self.vel
        flow = np.where(den > 1e-12, num / np.maximum(den, 1e-12), 0.0).astype(np.float32)
        return (r2 + r0 if with_p else None), flow


_SPEEDS_DEG_S = (3.75, 7.5, 11.25, 18.75, 37.5)


def _v1mt_velocities(*, display: Display, speeds_deg_s=_SPEEDS_DEG_S, n_velocity_directions=12,
                     **_ignored) -> np.ndarray:
    """The velocity grid (V, 2) in px/frame of ``display`` (see :func:`velocity_grid`)."""
    return velocity_grid(speeds_px_per_frame(display, speeds_deg_s, "tlapale_v1mt"), n_velocity_directions)


@register(
    "tlapale_v1mt",
    track="motion",
    kind="stream",
    reference="Tlapale, Masson & Kornprobst 2010, Vision Res 50:1676; Bayerl & Neumann 2004, Neural Comput 16:2041",
    bounds={"downsample": (0, 64), "match_downsample": (0, 64), "n_velocity_directions": (0, 360)},
)
def tlapale_v1mt(
    chunks,
    *,
    display: Display,
    downsample: int = 4,
    match_downsample: int = 2,
    speeds_deg_s: tuple = _SPEEDS_DEG_S,
    n_velocity_directions: int = 12,
    direction_pooling_deg: float = 30.0,
    lag_ms: float = 40.0,
    match_sigma_deg: float = 0.125,
    beta: float = 4.0,
    c50: float = 0.05,
    tau_v1_ms: float = 10.0,
    tau_mt_ms: float = 20.0,
    tau_surround_ms: float = 20.0,
    max_step_ms: float = 5.0,
    feedback_gain: float = 10.0,
    v1_exponent: float = 2.0,
    sigma_v1: float = 0.01,
    mt_pool_deg: float = 1.0,
    sigma_mt: float = 1.0,
    surround_deg: float = 16.0,
    surround_area_deg2: float = 50.0,
    surround_exponent: float = 2.0,
    diffusion_per_ms: float = 0.01,
    lum_sigma: float = 0.1,
    spontaneous: float = 0.5,
    return_p: bool = True,
) -> Iterator[dict[str, np.ndarray]]:
    """Recurrent V1-MT model with feedback, luminance-gated diffusion and surround normalisation.

    Parameters
    ----------
    chunks, display
        The stream kind's data (:mod:`psybench.motion.models`): frame blocks and the
        run's display (px/deg, ms per frame, background).
    downsample : int
        Display pixels per model cell (V1 and MT grid).
    match_downsample : int
        Display pixels per cell of the matching (input) grid; divides ``downsample``.
    speeds_deg_s, n_velocity_directions
        Velocity grid: zero plus ``speeds_deg_s`` (deg/s, converted to px/frame with
        ``display``) x ``n_velocity_directions``.
    direction_pooling_deg : float
        Standard deviation (deg) of MT's pooling of V1 over neighbouring directions
        (:func:`direction_pooling`); 30 = the spacing of 12 grid directions (no
        snapping to the grid); 0 pools no direction but its own (the published structure).
    lag_ms : float
        Temporal baseline ``m`` of the correlation input (ms).
    match_sigma_deg : float
        Blur of the squared matching differences (deg).
    beta : float
        Sharpness of the likelihood ``exp(-beta D / mean_v D)``.
    c50 : float
        Contrast semi-saturation of the input (contrast units, ``(I - L0) / L0``).
    tau_v1_ms, tau_mt_ms, tau_surround_ms : float
        Time constants of V1, MT and the MT surround pool (ms).
    max_step_ms : float
        Largest integration sub-step (ms).
    feedback_gain : float
        ``C`` in the modulatory feedback ``a1 = S (1 + C r2)`` (Bayerl & Neumann).
    v1_exponent : float
        ``q``: V1 normalises ``a1^q / (sigma_1 + mean_v a1^q)`` (competition in
        velocity space; ``q = 1`` is plain divisive normalisation).
    sigma_v1 : float
        Semi-saturation of V1's normalisation over velocities.
    mt_pool_deg : float
        Sigma of MT's spatial pooling of V1 (deg).
    sigma_mt : float
        Semi-saturation of MT's normalisation (``sigma_2``).
    surround_deg : float
        Sigma of MT's surround pool (deg); the pool ``s`` is the stimulated area
        (deg^2, weighted by a peak-1 Gaussian window) low-pass filtered with
        ``tau_surround_ms``.
    surround_area_deg2 : float
        ``A_50``: MT divides by ``sigma_2 (1 + (s / A_50)^n)``; ``inf`` switches the
        surround off.
    surround_exponent : float
        ``n``; ``n > 1`` makes suppression outgrow the summed area, so the
        population's summed flow declines for large apertures.
    diffusion_per_ms : float
        Rate ``D`` of MT's luminance-gated lateral diffusion (per ms, per neighbour).
    lum_sigma : float
        ``sigma_I`` of the luminance gate ``g(d) = exp(-d^2 / (2 sigma_I^2))``
        (contrast units).
    spontaneous : float
        ``r0``, spontaneous MT rate added at every velocity in ``p``.
    return_p : bool
        Yield the population ``"p"``. False skips building and replicating it
        (about a sixth of the model's time at 256 x 256) and leaves ``"flow"``
        unchanged: for callers that use only the readout.

    Yields
    ------
    dict
        The stream kind's ``"flow"`` and, if ``return_p``, ``"p"``
        (:mod:`psybench.motion.models`): here ``m + r0`` over the velocity grid.
    """
    params = dict(locals())
    del params["chunks"], params["display"]
    for key in ("downsample", "match_downsample", "n_velocity_directions"):
        if int(params[key]) != params[key] or params[key] < 1:
            raise ValueError(f"tlapale_v1mt: {key} must be a positive integer, got {params[key]!r}")
    if downsample % match_downsample:
        raise ValueError(f"tlapale_v1mt: match_downsample ({match_downsample}) must divide downsample ({downsample})")
    for key in ("lag_ms", "tau_v1_ms", "tau_mt_ms", "tau_surround_ms", "max_step_ms", "sigma_v1", "sigma_mt",
                "lum_sigma", "c50", "beta"):
        if not params[key] > 0:
            raise ValueError(f"tlapale_v1mt: {key} must be > 0, got {params[key]!r}")
    if not params["surround_area_deg2"] > 0:
        raise ValueError(
            f"tlapale_v1mt: surround_area_deg2 must be > 0 (inf = no surround), got {surround_area_deg2!r}"
        )
    for key in ("feedback_gain", "surround_exponent", "diffusion_per_ms", "spontaneous", "mt_pool_deg",
                "surround_deg", "match_sigma_deg"):
        if params[key] < 0:
            raise ValueError(f"tlapale_v1mt: {key} must be >= 0, got {params[key]!r}")
    if not direction_pooling_deg >= 0:
        raise ValueError(f"tlapale_v1mt: direction_pooling_deg must be >= 0, got {direction_pooling_deg!r}")
    vel = _v1mt_velocities(display=display, speeds_deg_s=speeds_deg_s, n_velocity_directions=n_velocity_directions)
    state = None
    for block in chunks:
        block = np.asarray(block, dtype=np.float32)
        if block.ndim != 3:
            raise ValueError(f"tlapale_v1mt: frame blocks must be (t, H, W), got shape {block.shape}")
        n, height, width = block.shape
        if n == 0:
            continue
        contrast = (block - display.background) / display.background
        ph, pw = (-height) % downsample, (-width) % downsample
        if ph or pw:  # pad (edge) to whole model cells; outputs are cropped back to (H, W)
            contrast = np.pad(contrast, ((0, 0), (0, ph), (0, pw)), mode="edge")
        match = downsample_frames(contrast, match_downsample)
        pool = downsample // match_downsample
        h, w = match.shape[1] // pool, match.shape[2] // pool
        if state is None:
            state = _V1MT(display, params, vel, (h, w))
        p_out = np.empty((n, h, w, len(vel)), np.float32) if return_p else None
        flow = np.empty((n, h, w, 2), np.float32)
        for i in range(n):
            cur = match[i]
            drive = state.likelihood(cur)
            lum = cur.reshape(h, pool, w, pool).mean(axis=(1, 3)) if pool > 1 else cur
            state.step_frame(drive, lum)
            state.push(cur)
            pop, flow[i] = state.readout(return_p)
            if return_p:
                p_out[i] = pop
        for a in range(0, n, 4):  # full-resolution outputs a few frames at a time (bounded memory)
            b = min(n, a + 4)
            out = {"flow": upsample_blocks(flow[a:b], downsample, height, width)}
            if return_p:
                out["p"] = upsample_blocks(p_out[a:b], downsample, height, width)
            yield out


tlapale_v1mt.velocities = _v1mt_velocities
