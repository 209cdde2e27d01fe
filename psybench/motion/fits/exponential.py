"""Exponential fits of direction-error time courses (Tlapale et al. 2010, RR-7317 sec. 4.2).

Motion Psychobench (RR-7317) section 4.2 compares models with people through
the parameters of the curves experimentalists fit to their data:

* :func:`fit_exponential`: ``f(t) = A exp(-t / tau) + B`` (RR-7317 eq. 4; the
  decay of pursuit direction error, Masson & Stone 2002);
* the time-scale-invariant variant of section 4.2.1, for models without a
  strict mapping to real time, is :mod:`psybench.motion.fits.scale_invariant`;
* :func:`fit_double_exponential`: ``A1 exp(-t/tau1) + A2 exp(-t/tau2) + B``, since
  Born et al. (2006) fit pursuit direction error by "at most two exponentials";
  :func:`select_exponential` chooses one or two by BIC;
* the Gaussian score of the fitted parameters against the literature
  (RR-7317 eq. 1) is :func:`psybench.motion.literature.gaussian_score`.

Fitting is deterministic: for every candidate time constant on a fixed
logarithmic grid the amplitudes and offset are solved by linear least squares
(variable projection), the best candidate seeds a bounded nonlinear least-squares
refinement (:func:`scipy.optimize.least_squares`), and standard errors come from
the Jacobian at the solution. By default (``errors="ar1"``) they allow for
serially correlated residuals, ``cov = (J^T J)^-1 J^T Sigma J (J^T J)^-1`` with
an AR(1) ``Sigma`` estimated from the residuals
(:mod:`psybench.motion.fits.uncertainty`); ``errors="iid"`` gives the
independent-residual ``s^2 (J^T J)^-1``, ``s^2 = RSS / (n - k)``, which
understates the uncertainty of a smooth model curve several-fold. NaN samples are dropped. Nothing warns: a curve that
does not determine a parameter gets ``converged=False`` and NaN/inf errors.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from psybench.motion.fits.uncertainty import least_squares_covariance

__all__ = [
    "FitResult",
    "DoubleFitResult",
    "Selection",
    "fit_exponential",
    "fit_double_exponential",
    "select_exponential",
    "exponential",
    "double_exponential",
]

_N_GRID = 60
_N_GRID_DOUBLE = 24
_COND_MAX = 1e12


def exponential(t, A, tau, B):
    """``A exp(-t / tau) + B`` (RR-7317 eq. 4)."""
    return A * np.exp(-np.asarray(t, dtype=np.float64) / tau) + B


def double_exponential(t, A1, tau1, A2, tau2, B):
    """``A1 exp(-t / tau1) + A2 exp(-t / tau2) + B`` (Born et al. 2006)."""
    t = np.asarray(t, dtype=np.float64)
    return A1 * np.exp(-t / tau1) + A2 * np.exp(-t / tau2) + B


@dataclasses.dataclass(frozen=True)
class FitResult:
    """Single-exponential fit ``A exp(-t/tau) + B``; time in the unit of ``t`` (ms).

    ``se_*`` are asymptotic standard errors, by default for serially correlated
    (AR(1)) residuals with coefficient ``ar1_phi`` (``se_method``, see
    :mod:`psybench.motion.fits.uncertainty`), with ``dof`` degrees of freedom for
    Student-t intervals (:func:`psybench.motion.fits.uncertainty.confidence_interval`); ``r2 = 1 - RSS/TSS``; ``rmse =
    sqrt(RSS/n)``; ``aic = n ln(RSS/n) + 2k`` and ``bic = n ln(RSS/n) + k ln n``
    with ``k = 3``. ``converged`` is True when the optimiser succeeded, ``tau``
    lies strictly inside its bounds and the covariance is finite.
    """

    A: float
    tau_ms: float
    B: float
    se_A: float
    se_tau: float
    se_B: float
    r2: float
    rmse: float
    n: int
    converged: bool
    aic: float = float("nan")
    bic: float = float("nan")
    ar1_phi: float = float("nan")
    se_method: str = "ar1"
    dof: float = float("nan")

    def params(self) -> dict[str, float]:
        """Parameters by literature name (``A``, ``tau_ms``, ``B``)."""
        return {"A": self.A, "tau_ms": self.tau_ms, "B": self.B}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class DoubleFitResult:
    """Two-exponential fit, ``tau1_ms < tau2_ms``; fields as :class:`FitResult` (``k = 5``).

    ``se_A_total`` is the standard error of the initial bias ``A1 + A2``
    (including the covariance of the two amplitudes).
    """

    A1: float
    tau1_ms: float
    A2: float
    tau2_ms: float
    B: float
    se_A1: float
    se_tau1: float
    se_A2: float
    se_tau2: float
    se_B: float
    r2: float
    rmse: float
    n: int
    converged: bool
    se_A_total: float = float("nan")
    dof: float = float("nan")
    ar1_phi: float = float("nan")
    se_method: str = "ar1"
    aic: float = float("nan")
    bic: float = float("nan")

    def params(self) -> dict[str, float]:
        return {"A1": self.A1, "tau1_ms": self.tau1_ms, "A2": self.A2, "tau2_ms": self.tau2_ms, "B": self.B}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Selection:
    """Single vs double exponential by BIC: ``selected`` is ``"single"`` or ``"double"``."""

    single: FitResult
    double: DoubleFitResult
    selected: str
    delta_bic: float  # bic_single - bic_double (positive favours two exponentials)
    delta_aic: float


# ------------------------------------------------------------------------ helpers
def _clean(t, y) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if t.shape != y.shape:
        raise ValueError(f"t and y must have the same length; got {t.shape[0]} and {y.shape[0]}")
    ok = np.isfinite(t) & np.isfinite(y)
    return t[ok], y[ok]


def _tau_bounds(t: np.ndarray) -> tuple[float, float]:
    diffs = np.diff(np.unique(t))
    step = float(diffs.min()) if diffs.size else 1.0
    span = float(t.max() - t.min()) if t.size > 1 else 1.0
    return step / 20.0, max(span, step) * 100.0


def _stats(y: np.ndarray, resid: np.ndarray, k: int) -> tuple[float, float, float, float, float]:
    n = y.size
    rss = float(resid @ resid)
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - rss / tss if tss > 0 else float("nan")
    rmse = math.sqrt(rss / n)
    ll = n * math.log(max(rss, 1e-300) / n)
    return rss, r2, rmse, ll + 2 * k, ll + k * math.log(n)


def _stderr(jac: np.ndarray, resid: np.ndarray, y: np.ndarray, t: np.ndarray, errors: str,
            rates=()) -> tuple[np.ndarray, np.ndarray, float]:
    """Standard errors, covariance, AR(1) coefficient and dof; inf when a time constant has no effect.

    ``rates`` are the columns ``tau * df/dtau`` (the curve's sensitivity to a
    relative change of each ``tau``); when one is negligible next to the data
    (its amplitude is ~0) that ``tau`` is not determined by the data at all.
    The covariance is :func:`psybench.motion.fits.uncertainty.least_squares_covariance`
    (``errors="ar1"``: serially correlated residuals; ``"iid"``: independent).
    """
    n, k = jac.shape
    nan = np.full(k, np.nan)
    if n <= k:
        return nan, np.full((k, k), np.nan), float("nan"), float("nan")
    inf = (np.full(k, np.inf), np.full((k, k), np.inf), float("nan"), float("nan"))
    ref = max(1.0, float(np.max(np.abs(y))))
    for col in rates:
        if float(np.sqrt(np.mean(col**2))) < 1e-9 * ref:
            return inf
    jtj = jac.T @ jac
    scale = np.sqrt(np.diag(jtj))
    if not np.all(scale > 0) or not np.all(np.isfinite(scale)):
        return inf
    if np.linalg.cond(jtj / np.outer(scale, scale)) > _COND_MAX:
        return inf
    cov, phi, dof = least_squares_covariance(jac, resid, t, errors=errors)
    return np.sqrt(np.clip(np.diag(cov), 0.0, None)), cov, phi, dof


def _linear(cols: list[np.ndarray], y: np.ndarray) -> tuple[np.ndarray, float]:
    X = np.column_stack(cols)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ coef
    return coef, float(r @ r)


def _forward_jacobian(rows, lower, upper):
    """SciPy's 2-point Jacobian of ``least_squares`` (``jac="2-point"``), its points evaluated at once.

    ``rows(X)`` gives the residuals (k, N) of k parameter vectors X (k, P), each row the
    bits the residual function gives alone. The steps, their turn at the bounds and the
    difference quotients are scipy.optimize._numdiff's (``approx_derivative``), so the
    Jacobian, hence every iterate, is the one SciPy computes one perturbed point per
    call (tests/test_motion_fits.py: the fits' main cost was that loop).
    """
    from scipy.optimize._numdiff import _adjust_scheme_to_bounds, _compute_absolute_step

    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)

    def jac(x):
        f0 = rows(x[None, :])[0]
        h, _ = _adjust_scheme_to_bounds(x, _compute_absolute_step(None, x, f0, "2-point"), 1, "1-sided",
                                        lower, upper)
        points = np.repeat(x[None, :], x.size, axis=0)
        points[np.diag_indices(x.size)] = x + h
        return ((rows(points) - f0) / ((x + h) - x)[:, None]).T

    return jac


def _inside(x: float, lo: float, hi: float) -> bool:
    return lo * (1 + 1e-6) < x < hi * (1 - 1e-6)


def _nan_single(n: int, errors: str) -> FitResult:
    nan = float("nan")
    return FitResult(nan, nan, nan, nan, nan, nan, nan, nan, n, False, se_method=errors)


#: Fits made in this process, by curve: the criteria and the lambda sensitivity fit some curves
#: more than once (216 fits of 128 curves for a model of the default run). A fit is a
#: deterministic function of its samples' bits: a remembered result is what a new fit gives.
_FITS: dict[tuple, Any] = {}
_FITS_MAX = 4096


def _remembered(kind: str, t: np.ndarray, y: np.ndarray, errors: str, fit) -> Any:
    """``fit(t, y, errors)`` once per (``kind``, ``errors``, the bits of ``t`` and ``y``) in this process."""
    key = (kind, errors, t.size, t.tobytes(), y.tobytes())
    if key not in _FITS:
        if len(_FITS) >= _FITS_MAX:
            _FITS.clear()
        _FITS[key] = fit(t, y, errors)
    return _FITS[key]


# --------------------------------------------------------------- single exponential
def fit_exponential(t, y, *, errors: str = "ar1") -> FitResult:
    """Least-squares fit of ``y(t) = A exp(-t / tau) + B`` (RR-7317 eq. 4).

    Parameters
    ----------
    t : array_like, shape (N,)
        Times (ms); the fit is in the unit of ``t``. ``A`` is the value of the
        decaying part at ``t = 0``, so pass times relative to the response onset
        if ``A`` should be the initial bias.
    y : array_like, shape (N,)
        Samples (e.g. direction error in deg). NaN samples are dropped.
    errors : {"ar1", "iid"}
        Residual model of the standard errors (module docstring); the
        estimates themselves do not depend on it.

    Returns
    -------
    FitResult
        ``tau`` is bounded to ``(min step / 20, 100 x span)``; NaN everywhere and
        ``converged=False`` when fewer than 4 finite samples remain.
    """
    t, y = _clean(t, y)
    return _remembered("single", t, y, errors, _fit_exponential)


def _fit_exponential(t: np.ndarray, y: np.ndarray, errors: str) -> FitResult:
    """:func:`fit_exponential` of cleaned samples (finite, float64)."""
    n = t.size
    if n < 4 or np.unique(t).size < 4:
        return _nan_single(n, errors)
    lo, hi = _tau_bounds(t)
    best = None
    for tau in np.geomspace(lo * 1.01, hi * 0.99, _N_GRID):
        coef, rss = _linear([np.exp(-t / tau), np.ones_like(t)], y)
        if best is None or rss < best[0]:
            best = (rss, coef[0], tau, coef[1])
    _, a0, tau0, b0 = best

    def resid(th):
        return th[0] * np.exp(-t / np.exp(th[1])) + th[2] - y

    def rows(ths):  # resid of each row, elementwise the same operations
        taus = np.array([np.exp(v) for v in ths[:, 1]])
        return ths[:, :1] * np.exp(-t / taus[:, None]) + ths[:, 2:3] - y

    from scipy.optimize import least_squares  # here: the criteria import this module, planning and reports too

    bounds = ([-np.inf, math.log(lo), -np.inf], [np.inf, math.log(hi), np.inf])
    sol = least_squares(resid, [a0, math.log(tau0), b0], jac=_forward_jacobian(rows, *bounds), bounds=bounds,
                        method="trf", x_scale="jac")
    A, tau, B = float(sol.x[0]), float(math.exp(sol.x[1])), float(sol.x[2])
    e = np.exp(-t / tau)
    jac = np.column_stack([e, A * t / tau**2 * e, np.ones_like(t)])
    r = resid(sol.x)
    _, r2, rmse, aic, bic = _stats(y, r, 3)
    se, _, phi, dof = _stderr(jac, r, y, t, errors, rates=[jac[:, 1] * tau])
    converged = bool(sol.success and _inside(tau, lo, hi) and np.all(np.isfinite(se)))
    return FitResult(A, tau, B, float(se[0]), float(se[1]), float(se[2]), r2, rmse, n, converged, aic, bic,
                     phi, errors, dof)


# --------------------------------------------------------------- double exponential
def fit_double_exponential(t, y, *, errors: str = "ar1") -> DoubleFitResult:
    """Least-squares fit of ``A1 exp(-t/tau1) + A2 exp(-t/tau2) + B`` with ``tau1 < tau2``.

    Born et al. (2006) found that the time course of the pursuit direction error
    for tilted bars is "fitted very well by at most two exponential decay
    functions" (quoted by RR-7317 section 3.2). The order is enforced by fitting
    ``log tau1`` and ``log(tau2 / tau1) >= 0``.

    Parameters
    ----------
    t, y : array_like, shape (N,)
        As :func:`fit_exponential`; at least 6 finite samples.
    errors : {"ar1", "iid"}
        As :func:`fit_exponential`.

    Returns
    -------
    DoubleFitResult
    """
    t, y = _clean(t, y)
    return _remembered("double", t, y, errors, _fit_double_exponential)


def _fit_double_exponential(t: np.ndarray, y: np.ndarray, errors: str) -> DoubleFitResult:
    """:func:`fit_double_exponential` of cleaned samples (finite, float64)."""
    n = t.size
    nan = float("nan")
    if n < 6 or np.unique(t).size < 6:
        return DoubleFitResult(*([nan] * 12), n, False, se_method=errors)
    lo, hi = _tau_bounds(t)
    grid = np.geomspace(lo * 1.01, hi * 0.99, _N_GRID_DOUBLE)
    exps = [np.exp(-t / tau) for tau in grid]
    one = np.ones_like(t)
    best = None
    for i in range(len(grid)):
        for j in range(i + 1, len(grid)):
            coef, rss = _linear([exps[i], exps[j], one], y)
            if best is None or rss < best[0]:
                best = (rss, coef, grid[i], grid[j])
    _, coef0, t10, t20 = best
    r_hi = math.log(hi / lo)

    def unpack(th):
        tau1 = math.exp(th[1])
        return th[0], tau1, th[2], tau1 * math.exp(th[3]), th[4]

    def resid(th):
        a1, tau1, a2, tau2, b = unpack(th)
        return a1 * np.exp(-t / tau1) + a2 * np.exp(-t / tau2) + b - y

    def rows(ths):  # resid of each row, elementwise the same operations (unpack's math.exp included)
        tau1 = np.array([math.exp(v) for v in ths[:, 1]])
        tau2 = tau1 * np.array([math.exp(v) for v in ths[:, 3]])
        return ths[:, :1] * np.exp(-t / tau1[:, None]) + ths[:, 2:3] * np.exp(-t / tau2[:, None]) + ths[:, 4:5] - y

    x0 = [coef0[0], math.log(t10), coef0[1], math.log(t20 / t10), coef0[2]]
    from scipy.optimize import least_squares  # here: see fit_exponential

    bounds = ([-np.inf, math.log(lo), -np.inf, 0.0, -np.inf], [np.inf, math.log(hi), np.inf, r_hi, np.inf])
    sol = least_squares(resid, x0, jac=_forward_jacobian(rows, *bounds), bounds=bounds, method="trf",
                        x_scale="jac")
    a1, tau1, a2, tau2, b = (float(v) for v in unpack(sol.x))
    e1, e2 = np.exp(-t / tau1), np.exp(-t / tau2)
    jac = np.column_stack([e1, a1 * t / tau1**2 * e1, e2, a2 * t / tau2**2 * e2, one])
    r = resid(sol.x)
    _, r2, rmse, aic, bic = _stats(y, r, 5)
    se, cov, phi, dof = _stderr(jac, r, y, t, errors, rates=[jac[:, 1] * tau1, jac[:, 3] * tau2])
    converged = bool(
        sol.success and _inside(tau1, lo, hi) and _inside(tau2, lo, hi)
        and tau2 > tau1 * (1 + 1e-3) and np.all(np.isfinite(se))
    )
    # SE of the initial bias A1 + A2 (the verdict's A): var A1 + var A2 + 2 cov(A1, A2)
    se_sum = float(np.sqrt(max(cov[0, 0] + cov[2, 2] + 2.0 * cov[0, 2], 0.0))) if np.all(np.isfinite(cov)) \
        else float(se[0])
    return DoubleFitResult(a1, tau1, a2, tau2, b, *(float(s) for s in se), r2, rmse, n, converged, se_sum,
                           dof=dof, ar1_phi=phi, se_method=errors, aic=aic, bic=bic)


def select_exponential(t, y, *, bic_margin: float = 2.0, errors: str = "ar1") -> Selection:
    """Fit one and two exponentials and choose by the Bayesian information criterion.

    Two exponentials are selected iff their fit converged and
    ``BIC_single - BIC_double > bic_margin``; the default margin 2 is the
    lower edge of "positive" evidence (Kass & Raftery 1995), so the extra two
    parameters must earn their place.
    """
    single = fit_exponential(t, y, errors=errors)
    double = fit_double_exponential(t, y, errors=errors)
    d_bic = single.bic - double.bic
    d_aic = single.aic - double.aic
    chosen = "double" if (double.converged and np.isfinite(d_bic) and d_bic > bic_margin) else "single"
    return Selection(single, double, chosen, float(d_bic), float(d_aic))
