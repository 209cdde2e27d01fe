"""Tests of psybench.motion.fits and psybench.motion.literature.

Exponential fits against synthetic decays, the Gaussian score, the literature loader.
"""

import math

import numpy as np
import pytest

from psybench.motion.fits import (
    fit_double_exponential,
    fit_exponential,
    fit_exponential_scale_invariant,
    select_exponential,
)
from psybench.motion.literature import LiteratureError, gaussian_score, load_literature

T = np.arange(0.0, 500.0, 10.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_single_exponential_recovers_parameters_within_standard_errors(seed):
    rng = np.random.default_rng(seed)
    A, tau, B = 30.0, 80.0, 2.0
    y = A * np.exp(-T / tau) + B + rng.normal(0.0, 1.0, T.size)
    fit = fit_exponential(T, y)
    assert fit.converged and fit.n == T.size
    for est, se, true in ((fit.A, fit.se_A, A), (fit.tau_ms, fit.se_tau, tau), (fit.B, fit.se_B, B)):
        assert 0 < se < 0.2 * abs(true) + 1.0
        assert abs(est - true) < 3.5 * se
    assert fit.r2 > 0.95 and fit.rmse == pytest.approx(1.0, rel=0.3)


def test_standard_errors_have_nominal_coverage():
    """Over 40 noise draws, +-2 SE covers the true tau in roughly 95% of cases."""
    hits = 0
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        y = 20 * np.exp(-T / 60.0) + rng.normal(0.0, 2.0, T.size)
        f = fit_exponential(T, y)
        hits += abs(f.tau_ms - 60.0) <= 2 * f.se_tau
    assert 32 <= hits <= 40


def test_nan_samples_are_dropped():
    y = 10 * np.exp(-T / 50.0) + 1.0
    y[::7] = np.nan
    fit = fit_exponential(T, y)
    assert fit.n == np.isfinite(y).sum()
    assert fit.A == pytest.approx(10.0, rel=1e-6) and fit.tau_ms == pytest.approx(50.0, rel=1e-6)


def test_constant_curve_does_not_determine_tau():
    fit = fit_exponential(T, np.full(T.size, 44.0))
    assert not fit.converged
    assert fit.B == pytest.approx(44.0) and abs(fit.A) < 1e-6
    assert not np.isfinite(fit.se_tau)
    assert not fit_exponential(T[:3], np.ones(3)).converged  # too few samples


def test_double_exponential_chosen_when_it_should_be():
    rng = np.random.default_rng(5)
    y = 20 * np.exp(-T / 15.0) + 20 * np.exp(-T / 150.0) + 1.0 + rng.normal(0, 0.5, T.size)
    sel = select_exponential(T, y)
    assert sel.selected == "double" and sel.delta_bic > 10
    d = sel.double
    assert d.tau1_ms < d.tau2_ms
    assert abs(d.tau1_ms - 15.0) < 3 * d.se_tau1 and abs(d.tau2_ms - 150.0) < 3 * d.se_tau2
    assert abs(d.A1 - 20.0) < 3 * d.se_A1 and abs(d.B - 1.0) < 3 * d.se_B
    # a single exponential plus noise keeps one exponential
    rng = np.random.default_rng(6)
    y1 = 30 * np.exp(-T / 80.0) + 2.0 + rng.normal(0, 1.0, T.size)
    assert select_exponential(T, y1).selected == "single"


def test_double_exponential_exact_data():
    y = 5 * np.exp(-T / 20.0) - 8 * np.exp(-T / 200.0) + 3.0
    d = fit_double_exponential(T, y)
    assert d.converged
    np.testing.assert_allclose([d.A1, d.tau1_ms, d.A2, d.tau2_ms, d.B], [5, 20, -8, 200, 3], rtol=1e-4, atol=1e-4)


def test_scale_invariant_variant_recovers_and_is_invariant():
    rng = np.random.default_rng(7)
    t_model = np.arange(2, 60, 1.0)                    # model time: iterations 2..59
    d_true = 7.0                                       # tau - t0, iterations
    y = 25 * np.exp(-(t_model - 2.0) / d_true) + 1.5 + rng.normal(0, 0.3, t_model.size)
    f = fit_exponential_scale_invariant(t_model, y)
    assert f.converged and f.t0 == 2.0
    assert abs(f.A - 25) < 3 * f.se_A and abs(f.B - 1.5) < 3 * f.se_B
    assert abs((f.tau - f.t0) - d_true) < 3 * f.se_tau
    assert f.t_tilde(f.tau) == pytest.approx(1.0)
    # an affine change of the time axis (e.g. iterations -> ms) leaves A and B unchanged
    g = fit_exponential_scale_invariant(12.5 * t_model + 40.0, y)
    assert g.A == pytest.approx(f.A, rel=1e-5) and g.B == pytest.approx(f.B, rel=1e-5)
    assert (g.tau - g.t0) == pytest.approx(12.5 * (f.tau - f.t0), rel=1e-5)
    assert set(f.params()) == {"A", "B"}


def test_gaussian_score_hand_computed():
    params = {"A": 12.0, "tau_ms": 90.0, "B": 1.0}
    lit = {
        "A": {"value": 10.0, "sigma": 2.0},        # exp(-4/8)
        "tau_ms": (100.0, 20.0),                   # exp(-100/800)
        "B": {"value": 0.0, "sigma": None},        # no SD: skipped
        "C": {"value": 1.0, "sigma": 1.0},         # model has no C: skipped
    }
    gs = gaussian_score(params, lit)
    assert gs.n == 2 and gs.used == ("A", "tau_ms")
    assert gs.score == pytest.approx(math.exp(-0.5) + math.exp(-0.125), rel=1e-12)
    none = gaussian_score(params, {"B": {"value": 0.0, "sigma": None}})
    assert none.n == 0 and math.isnan(none.score)


def test_default_literature_file_loads_and_has_citations():
    lit = load_literature("config/literature.yaml")
    entries = [e for c in lit["parameters"].values() for p in c.values() for e in p.values()]
    entries += [e for f in lit["facts"].values() for e in f.values()]
    assert entries and all(e["citation"].strip() and e["measured"].strip() for e in entries)
    # every sigma present has a stated source
    assert all(e["sigma"] is None or e.get("sigma_source") for e in entries)


def _write(tmp_path, text):
    p = tmp_path / "lit.yaml"
    p.write_text(text)
    return p


def test_literature_loader_rejects_entry_without_citation(tmp_path):
    p = _write(tmp_path, "parameters:\n  diamonds:\n    half_differential:\n      tau_ms: {value: 100, measured: x}\n")
    with pytest.raises(LiteratureError, match=r"parameters\.diamonds\.half_differential\.tau_ms.*citation"):
        load_literature(p)


def test_literature_loader_rejects_sigma_without_source_and_unknown_fields(tmp_path):
    p = _write(tmp_path, "facts:\n  bars:\n    peak: {value: 30, sigma: 5, citation: a, measured: b}\n")
    with pytest.raises(LiteratureError, match=r"facts\.bars\.peak.*sigma_source"):
        load_literature(p)
    p = _write(tmp_path, "facts:\n  bars:\n    peak: {value: 30, citation: a, measured: b, sd: 3}\n")
    with pytest.raises(LiteratureError, match=r"facts\.bars\.peak.*unknown field"):
        load_literature(p)
    p = _write(tmp_path, "facts:\n  bars:\n    peak: {value: thirty, citation: a, measured: b}\n")
    with pytest.raises(LiteratureError, match=r"facts\.bars\.peak\.value"):
        load_literature(p)
    p = _write(tmp_path, "paramters: {}\n")
    with pytest.raises(LiteratureError, match="paramters"):
        load_literature(p)
