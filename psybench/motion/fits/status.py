"""Whether a fit says anything: a fit at a bound or with an unidentifiable parameter is reported as such.

A least-squares fit of RR-7317 eq. 4 whose time constant sits at its bound, or
whose standard errors are infinite or undefined, determines no value of its
parameters: the fits table then holds NaN for ``A``, ``tau_ms``, ``B`` and their
SEs, and ``fit_reason`` says why (:func:`fit_reason`, :func:`reported_fit`). The
criteria keep their own verdict (:mod:`psybench.motion.fits.verdict`: such a fit
has ``converged=False`` and fails). ``ar1_at_cap`` flags the autocorrelation
estimate at :data:`~psybench.motion.fits.uncertainty.PHI_MAX`, where the SEs
hold only at that cap.
"""

from __future__ import annotations

import math
from typing import Any

from psybench.motion.fits.exponential import FitResult, _clean, _tau_bounds
from psybench.motion.fits.uncertainty import PHI_MAX

__all__ = ["NO_PUBLISHED_SD", "fit_reason", "reported_fit", "ar1_at_cap"]

#: A tau within this factor of a bound counts as at it: the fit's grid of starting values begins
#: 1 % inside the bounds, and a refinement that never leaves that first candidate has found
#: no minimum inside the range (a decay completed between two samples, or none at all).
_NEAR = 1.02

#: The reason of a Gaussian score (RR-7317 eq. 1) with no literature SD to score against.
NO_PUBLISHED_SD = "no published SD"


def ar1_at_cap(fit: FitResult) -> bool:
    """Whether the residuals' AR(1) estimate is at its cap :data:`PHI_MAX` (SEs hold only there)."""
    return bool(math.isfinite(fit.ar1_phi) and abs(fit.ar1_phi) >= PHI_MAX - 1e-9)


def fit_reason(fit: FitResult, t, y) -> str:
    """Why ``fit`` of the samples ``(t, y)`` (as given to the fit) determines no value; "" if it does.

    In order: too few samples; ``tau`` at a bound of :func:`fit_exponential`'s range
    (``(min step / 20, 100 x span)``); a parameter whose SE is infinite or undefined
    (unidentifiable); the optimiser's failure.
    """
    if fit.n < 4 or not math.isfinite(fit.tau_ms):
        return "fewer than 4 distinct samples"
    lo, hi = _tau_bounds(_clean(t, y)[0])
    if not lo * _NEAR < fit.tau_ms < hi / _NEAR:
        which = "lower" if fit.tau_ms <= lo * _NEAR else "upper"
        return f"tau at its {which} bound ({fit.tau_ms:.4g} ms)"
    bad = [name for name, se in (("A", fit.se_A), ("tau_ms", fit.se_tau), ("B", fit.se_B)) if not math.isfinite(se)]
    if bad:
        return f"unidentifiable: SE of {', '.join(bad)} not finite"
    if not fit.converged:
        return "optimiser did not converge"
    return ""


def reported_fit(fit: FitResult, t, y) -> dict[str, Any]:
    """The fits-table columns of ``fit``: its values, or NaN and ``fit_reason`` when it determines none."""
    reason = fit_reason(fit, t, y)
    nan = float("nan")
    values = {"A": fit.A, "tau_ms": fit.tau_ms, "B": fit.B, "se_A": fit.se_A, "se_tau": fit.se_tau, "se_B": fit.se_B}
    if reason:
        values = dict.fromkeys(values, nan)
    return {**values, "fit_reason": reason, "ar1_phi": fit.ar1_phi, "ar1_at_cap": ar1_at_cap(fit)}
