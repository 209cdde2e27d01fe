"""Velocity populations: the one implementation of RR-7317 eq. 2, and of the domain mean.

Both the models that output a distributed representation ``p(t, x, v)``
(:mod:`psybench.motion.models.motion_energy`, :mod:`psybench.motion.models.v1mt`) and the readout
stage (:mod:`psybench.motion.readouts`) turn it into a flow field here, so the
formula exists once. The domain mean of a flow (the input ``vbar`` of RR-7317 eq. 3)
is likewise computed here, by the response stage as it writes a flow (the response
store's ``mean_flow``) and by the readouts for a store without one: the same bits.
Both stages include this module in their code hash.
"""

from __future__ import annotations

import numpy as np

__all__ = ["direction_pooling", "domain_mean_flow", "flow_from_distribution"]


def flow_from_distribution(p, velocities, *, eps: float = 0.0):
    """Flow field from a distributed velocity representation (RR-7317 eq. 2).

    ``v(t, x) = sum_v p(t, x, v) v / sum_v p(t, x, v)``, the normalised
    expectation of the velocity under ``p``.

    Parameters
    ----------
    p : array_like or dask.array.Array, shape (..., V)
        Non-negative activities over the velocity population (last axis).
    velocities : array_like, shape (V, 2)
        The velocity ``(u, v)`` each unit stands for (px/frame).
    eps : float
        The flow is 0 where ``sum_v p <= eps`` (no activity means no motion
        signal, not an undefined one); 0 by default.

    Returns
    -------
    array, shape (..., 2)
        Float32 for float32 input (the models' hot path), float64 otherwise; a
        Dask input gives a Dask output.
    """
    velocities = np.asarray(velocities)
    if velocities.ndim != 2 or velocities.shape[1] != 2:
        raise ValueError(f"velocities must have shape (V, 2); got {velocities.shape}")
    if p.shape[-1] != velocities.shape[0]:
        raise ValueError(
            f"p has {p.shape[-1]} velocity channels on its last axis but {velocities.shape[0]} velocities were given"
        )
    if not hasattr(p, "dask"):
        p = np.asarray(p)
        if p.dtype != np.float32:
            p = p.astype(np.float64)
    velocities = velocities.astype(p.dtype if p.dtype == np.float32 else np.float64)
    num = p @ velocities  # (..., 2); dask dispatches matmul chunk-wise
    den = p.sum(axis=-1)
    nonzero = den > eps
    safe = np.where(nonzero, den, 1.0)
    return np.where(nonzero[..., None], num / safe[..., None], 0.0).astype(num.dtype, copy=False)


def domain_mean_flow(flow) -> np.ndarray:
    """Spatial mean of each frame's flow, summed pixel after pixel in float64.

    The arithmetic of ``flow.astype(float64).mean(axis=(1, 2))`` (NumPy, or Dask chunk
    by chunk), to the bit: NumPy sums a (t, H, W, 2) array over ``(1, 2)`` one pixel
    after the other in C order, one running float64 total per frame and component,
    then divides by the pixel count. Here the frames are copied once to float64 with
    the pixels first, (P, t * 2), and reduced over that first axis: NumPy adds whole
    rows in pixel order, so every total gets the same additions in the same order,
    vectorised over the frames and components (tests/test_motion_readouts.py holds it
    equal to the Dask mean, on data where other summation orders differ).

    Parameters
    ----------
    flow : ndarray, shape (t, H, W, 2)
        Any float dtype (the stored flow is float32).

    Returns
    -------
    ndarray, shape (t, 2), float64
        Per frame, the mean of ``u`` and of ``v`` over the H x W pixels.
    """
    flow = np.asarray(flow)
    if flow.ndim != 4 or flow.shape[-1] != 2:
        raise ValueError(f"flow must have shape (T, H, W, 2); got {flow.shape}")
    frames = flow.reshape(len(flow), flow.shape[1] * flow.shape[2], 2)
    pixels = np.empty((frames.shape[1], len(flow), 2), dtype=np.float64)
    pixels[...] = frames.transpose(1, 0, 2)  # (P, t, 2): a pixel's frames and components side by side
    total = np.add.reduce(pixels.reshape(len(pixels), 2 * len(flow)), axis=0)  # row after row: pixel order
    return total.reshape(len(flow), 2) / np.float64(len(pixels))


def direction_pooling(n_speeds: int, n_directions: int, sigma_deg: float) -> np.ndarray:
    """MT's pooling of V1 over neighbouring directions of the same speed, shape (V, V).

    Row ``i`` holds the weights unit ``i`` gives the V1 units of its speed ring: a
    circular Gaussian of the direction difference with standard deviation
    ``sigma_deg``, normalised to sum 1; the zero velocity (index 0) keeps its own
    input. Bayerl & Neumann (2004, eq. 2) integrate V1 over velocity space as well
    as over space; with ``sigma_deg`` equal to the grid's direction spacing the sum
    of the rings' tuning curves is isotropic (ripple ``~exp(-2 pi^2)``), so a motion
    between two grid directions activates both in proportion and eq. 2 decodes it
    continuously instead of snapping to the nearest grid direction.
    """
    nv = 1 + n_speeds * n_directions
    if sigma_deg <= 0:
        return np.eye(nv, dtype=np.float32)
    k = np.zeros((nv, nv), np.float32)
    k[0, 0] = 1.0
    d = np.arange(n_directions)
    diff = np.minimum((d[:, None] - d[None, :]) % n_directions, (d[None, :] - d[:, None]) % n_directions)
    ring = np.exp(-0.5 * (diff * 360.0 / n_directions / sigma_deg) ** 2)
    ring /= ring.sum(axis=1, keepdims=True)
    for s in range(n_speeds):
        a = 1 + s * n_directions
        k[a:a + n_directions, a:a + n_directions] = ring
    return k
