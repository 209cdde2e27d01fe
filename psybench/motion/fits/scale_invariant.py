"""Time-scale-invariant exponential fit (Tlapale et al. 2010, RR-7317 sec. 4.2.1).

For models with no strict mapping between their own time (iterations, frames)
and real time; see :func:`fit_exponential_scale_invariant`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from psybench.motion.fits.exponential import _clean, fit_exponential

__all__ = ["ScaleInvariantFitResult", "fit_exponential_scale_invariant"]


@dataclasses.dataclass(frozen=True)
class ScaleInvariantFitResult:
    """Time-scale-invariant fit ``A exp(-(t - t0) / (tau - t0)) + B`` (RR-7317 sec. 4.2.1).

    ``t0`` and ``tau`` are in the unit of the model's own time axis; ``t0`` is
    the fixed gauge (see :func:`fit_exponential_scale_invariant`), so it has no
    standard error and ``se_tau`` is that of ``tau - t0``. Only ``A`` and ``B``
    are comparable with literature values measured in real time.
    """

    A: float
    tau: float
    t0: float
    B: float
    se_A: float
    se_B: float
    se_tau: float
    r2: float
    rmse: float
    n: int
    converged: bool

    def params(self) -> dict[str, float]:
        """Only the time-scale-free parameters (``A``, ``B``)."""
        return {"A": self.A, "B": self.B}

    def t_tilde(self, t):
        """Normalised time ``(t - t0) / (tau - t0)``: 0 at onset, 1 at the 1/e point."""
        return (np.asarray(t, dtype=np.float64) - self.t0) / (self.tau - self.t0)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def fit_exponential_scale_invariant(t, y, *, t0: float | None = None, errors: str = "ar1") -> ScaleInvariantFitResult:
    """Time-scale-invariant exponential fit (RR-7317 section 4.2.1).

    The paper replaces ``t`` by ``t~ = t / (tau - t0)`` with two fitted
    parameters ``tau`` and ``t0``, for models with no strict mapping between
    their time (iterations, frames) and real time. We write it with the time
    measured from ``t0``::

        f(t) = A exp(-t~) + B,   t~ = (t - t0) / (tau - t0),

    so ``t0`` is the response onset (``t~ = 0``) and ``tau`` the time of the 1/e
    point (``t~ = 1``), both in the model's own time unit.

    Identifiability: ``tau`` and ``t0`` enter only through the scale
    ``d = tau - t0`` and through the shift ``t0``, and for an exponential a
    shift is indistinguishable from a change of amplitude
    (``A exp(-(t - t0 - c)/d) = A e^{c/d} exp(-(t - t0)/d)``): the two extra
    parameters are one too many. We therefore fix the gauge ``t0`` (by default
    the first finite sample, the onset of the response, which is observable) and
    fit ``A``, ``d > 0`` and ``B``. ``A`` (amplitude at onset) and ``B``
    (asymptote) are then invariant under any affine change of the time axis
    ``t -> a t + b`` (``a > 0``), which is what makes them comparable with
    literature values; ``tau`` is reported in model time units and must not be
    scored against a time constant in ms.

    Parameters
    ----------
    t : array_like, shape (N,)
        Model time in any unit.
    y : array_like, shape (N,)
    t0 : float, optional
        Gauge (onset); default: the first finite sample time.

    Returns
    -------
    ScaleInvariantFitResult
    """
    tc, yc = _clean(t, y)
    if t0 is None:
        t0 = float(tc.min()) if tc.size else float("nan")
    fit = fit_exponential(tc - t0, yc, errors=errors)
    return ScaleInvariantFitResult(
        A=fit.A, tau=t0 + fit.tau_ms, t0=float(t0), B=fit.B, se_A=fit.se_A, se_tau=fit.se_tau,
        se_B=fit.se_B, r2=fit.r2, rmse=fit.rmse, n=fit.n, converged=fit.converged,
    )
