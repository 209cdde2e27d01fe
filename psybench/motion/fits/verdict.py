"""The one fit a criterion's verdict uses, and its columns in the fits table.

The decay criteria (diamonds, tilted and dashed bars; Tlapale et al. 2010,
RR-7317 sec. 4.2) fit one or two exponentials and keep the one the Bayesian
information criterion selects (Born et al. 2006: pursuit direction error is
fitted "by at most two exponentials";
:func:`psybench.motion.fits.select_exponential`). With two exponentials the
quantities the rule reads are the initial bias ``A = A1 + A2``, the asymptote
``B`` and the slower time constant ``tau = tau2`` (the one that sets when the
error is gone). :func:`verdict_fit` states that choice once, so the criteria and
the fits table cannot disagree about which curve was judged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from psybench.motion.fits.exponential import Selection

__all__ = ["VERDICT_FIT_COLUMNS", "VerdictFit", "verdict_fit"]

#: Columns added to the motion fits table (after the existing ones, never renamed).
VERDICT_FIT_COLUMNS = [
    "verdict_fit", "verdict_A", "verdict_tau_ms", "verdict_B", "verdict_se_A", "verdict_se_tau", "verdict_se_B",
    "verdict_r2", "verdict_converged", "verdict_ar1_phi", "verdict_dof",
]


@dataclasses.dataclass(frozen=True)
class VerdictFit:
    """``A``, ``tau_ms``, ``B`` of the selected fit, with their standard errors.

    ``fit`` is ``"single"`` or ``"double"``; standard errors allow for AR(1)
    residuals (``ar1_phi``, ``dof``; :mod:`psybench.motion.fits.uncertainty`).
    For ``"double"``, ``se_A`` is that of ``A1 + A2`` and ``se_tau`` that of ``tau2``.
    """

    fit: str
    A: float
    B: float
    tau_ms: float
    se_A: float
    se_B: float
    se_tau: float
    converged: bool
    r2: float
    dof: float
    ar1_phi: float

    def params(self) -> dict[str, float]:
        """Parameters by literature name (``A``, ``tau_ms``, ``B``), as ``FitResult.params()``."""
        return {"A": self.A, "tau_ms": self.tau_ms, "B": self.B}

    def columns(self) -> dict[str, Any]:
        """The :data:`VERDICT_FIT_COLUMNS` of one fits-table row."""
        return {f"verdict_{k}" if k != "fit" else "verdict_fit": v for k, v in dataclasses.asdict(self).items()}


def verdict_fit(selection: Selection) -> VerdictFit:
    """The fit a decay verdict reads: the single exponential, or the double one when selected.

    Parameters
    ----------
    selection : Selection
        From :func:`psybench.motion.fits.select_exponential`.

    Returns
    -------
    VerdictFit
    """
    if selection.selected == "double":
        d = selection.double
        return VerdictFit("double", A=d.A1 + d.A2, B=d.B, tau_ms=d.tau2_ms, se_A=d.se_A_total, se_B=d.se_B,
                          se_tau=d.se_tau2, converged=bool(d.converged), r2=d.r2, dof=d.dof, ar1_phi=d.ar1_phi)
    s = selection.single
    return VerdictFit("single", A=s.A, B=s.B, tau_ms=s.tau_ms, se_A=s.se_A, se_B=s.se_B, se_tau=s.se_tau,
                      converged=bool(s.converged), r2=s.r2, dof=s.dof, ar1_phi=s.ar1_phi)
