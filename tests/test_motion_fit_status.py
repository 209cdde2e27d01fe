"""Fits that say when they say nothing (psybench.motion.fits.status), and SEs against a block bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from psybench.motion.criteria.common import _fit_curve
from psybench.motion.criteria.thresholds import CRITERIA_DEFAULTS
from psybench.motion.fits import fit_exponential
from psybench.motion.fits.status import NO_PUBLISHED_SD, fit_reason, reported_fit

T = np.arange(0.0, 400.0, 10.0)  # ms, a 10 ms frame for 400 ms


def test_a_flat_curve_is_reported_as_degenerate_not_as_a_value():
    # no decay at all: tau and A are not determined (A exp(-t/tau) + B with A = 0 fits any tau)
    y = np.full_like(T, 3.0) + 1e-9 * np.sin(T)
    fit = fit_exponential(T, y)
    reason = fit_reason(fit, T, y)
    assert reason, f"a flat curve gave a fit with tau={fit.tau_ms}, se_tau={fit.se_tau} and no reason"
    row = reported_fit(fit, T, y)
    assert all(math.isnan(row[k]) for k in ("A", "tau_ms", "B", "se_A", "se_tau", "se_B"))
    assert row["fit_reason"] == reason


def test_a_step_is_a_tau_at_its_lower_bound():
    y = np.where(T > 0, 0.0, 40.0)  # everything decays within one sample: tau runs to its lower bound
    fit = fit_exponential(T, y)
    assert "lower bound" in fit_reason(fit, T, y)
    assert math.isnan(reported_fit(fit, T, y)["tau_ms"])


def test_a_clean_decay_keeps_its_values_and_the_fits_row_says_no_published_sd():
    y = 30.0 * np.exp(-T / 80.0) + 1.0 + 0.2 * np.cos(T / 7.0)
    fit = fit_exponential(T, y)
    row = reported_fit(fit, T, y)
    assert row["fit_reason"] == "" and row["tau_ms"] == fit.tau_ms == pytest.approx(80.0, rel=0.05)
    fit_row, _ = _fit_curve("diamonds", "m", "half_differential", "half_differential", T, y,
                            CRITERIA_DEFAULTS["common"], literature=None)
    assert math.isnan(fit_row["gaussian_score"]) and fit_row["gaussian_score_reason"] == NO_PUBLISHED_SD
    assert fit_row["fit_reason"] == "" and fit_row["tau_ms"] == pytest.approx(fit.tau_ms)


def _ar1(rng, n, phi, sd):
    e = np.empty(n)
    e[0] = rng.normal(0.0, sd / math.sqrt(1 - phi**2))
    for i in range(1, n):
        e[i] = phi * e[i - 1] + rng.normal(0.0, sd)
    return e


@pytest.mark.parametrize(("A", "tau", "B", "phi"), [(40.0, 90.0, 2.0, 0.6), (20.0, 150.0, -1.0, 0.8)])
def test_standard_errors_agree_with_a_moving_block_bootstrap(A, tau, B, phi):
    """Two readout-like curves with serially correlated noise: the AR(1) SEs of A and tau
    are within a factor 1.5 of a moving-block bootstrap of the residuals (Kunsch 1989)."""
    rng = np.random.default_rng(7)
    t = np.arange(0.0, 1500.0, 5.0)
    y = A * np.exp(-t / tau) + B + _ar1(rng, t.size, phi, 1.0)
    fit = fit_exponential(t, y)
    assert not fit_reason(fit, t, y)
    curve = fit.A * np.exp(-t / fit.tau_ms) + fit.B
    resid = y - curve
    block = 30  # several correlation lengths (1 / (1 - phi) <= 5 samples)
    starts = np.arange(t.size - block + 1)
    n_blocks = -(-t.size // block)
    boot = []
    for _ in range(200):
        idx = np.concatenate([np.arange(s, s + block) for s in rng.choice(starts, n_blocks)])[: t.size]
        b = fit_exponential(t, curve + resid[idx])
        boot.append((b.A, b.tau_ms))
    sd_A, sd_tau = np.std(np.array(boot), axis=0, ddof=1)
    for se, sd, name in ((fit.se_A, sd_A, "A"), (fit.se_tau, sd_tau, "tau")):
        assert 1 / 1.5 <= se / sd <= 1.5, f"SE of {name} {se:.3g} vs block bootstrap {sd:.3g}"
