"""Fits of direction-error time courses (Tlapale et al. 2010, RR-7317 sec. 4.2).

One module per job:

* :mod:`~psybench.motion.fits.exponential`: one and two exponentials and their
  selection by BIC (RR-7317 eq. 4; Born et al. 2006);
* :mod:`~psybench.motion.fits.scale_invariant`: the time-scale-invariant
  variant (RR-7317 sec. 4.2.1);
* :mod:`~psybench.motion.fits.uncertainty`: standard errors for serially
  correlated (AR(1)) residuals;
* :mod:`~psybench.motion.fits.verdict`: the one fit a criterion's verdict uses,
  and its columns in the fits table.

The Gaussian score against the literature (RR-7317 eq. 1) is
:func:`psybench.motion.literature.gaussian_score`.
"""

from psybench.motion.fits.exponential import (
    DoubleFitResult,
    FitResult,
    Selection,
    double_exponential,
    exponential,
    fit_double_exponential,
    fit_exponential,
    select_exponential,
)
from psybench.motion.fits.scale_invariant import ScaleInvariantFitResult, fit_exponential_scale_invariant
from psybench.motion.fits.uncertainty import (
    ar1_correlation,
    confidence_interval,
    estimate_ar1,
    least_squares_covariance,
)
from psybench.motion.fits.verdict import VERDICT_FIT_COLUMNS, VerdictFit, verdict_fit

__all__ = [
    "FitResult",
    "DoubleFitResult",
    "ScaleInvariantFitResult",
    "Selection",
    "fit_exponential",
    "fit_double_exponential",
    "fit_exponential_scale_invariant",
    "select_exponential",
    "exponential",
    "double_exponential",
    "ar1_correlation",
    "confidence_interval",
    "estimate_ar1",
    "least_squares_covariance",
    "VERDICT_FIT_COLUMNS",
    "VerdictFit",
    "verdict_fit",
]
