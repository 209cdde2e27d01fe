"""Velocity populations: the one implementation of RR-7317 eq. 2.

Both the models that output a distributed representation ``p(t, x, v)``
(:mod:`psybench.motion.models.motion_energy`, :mod:`psybench.motion.models.v1mt`) and the readout
stage (:mod:`psybench.motion.readouts`) turn it into a flow field here, so the
formula exists once. Both stages include this module in their code hash.
"""

from __future__ import annotations

import numpy as np

__all__ = ["direction_pooling", "flow_from_distribution"]


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
