"""Fits of readout time courses and the Gaussian literature score (RR-7317 section 4.2)."""

from psybench.fits.exponential import (
    DoubleFitResult,
    FitResult,
    GaussianScore,
    ScaleInvariantFitResult,
    Selection,
    double_exponential,
    exponential,
    fit_double_exponential,
    fit_exponential,
    fit_exponential_scale_invariant,
    gaussian_score,
    select_exponential,
)
from psybench.fits.literature import LiteratureError, literature_params, load_literature, validate_literature

__all__ = [
    "DoubleFitResult",
    "FitResult",
    "GaussianScore",
    "ScaleInvariantFitResult",
    "Selection",
    "double_exponential",
    "exponential",
    "fit_double_exponential",
    "fit_exponential",
    "fit_exponential_scale_invariant",
    "gaussian_score",
    "select_exponential",
    "LiteratureError",
    "literature_params",
    "load_literature",
    "validate_literature",
]
