"""A model parameter's bounds are declared where its algorithm is registered, and config validation reads them.

Renaming a parameter is one edit (the signature and the ``bounds`` of its
``@register`` line); a bound naming no parameter fails at import.
"""

from __future__ import annotations

import numpy as np
import pytest

from psybench import registry
from psybench.config import ConfigError, validate_config
from psybench.registry import register, resolve_model


def _motion_config(params):
    return {"tracks": ["motion"], "motion": {"models": [{"name": "b", "algorithm": "bounded_toy", "params": params}]}}


def test_a_bound_declared_at_registration_is_enforced_by_validation(monkeypatch):
    registry.list_algorithms()  # every built-in registered first, then a copy of the registry for the toy
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))  # the toy is gone after the test

    @register("bounded_toy", track="motion", kind="pair", bounds={"steps": (1, 50), "scale": (None, 2.5)})
    def bounded_toy(frame0, frame1, *, steps=10, scale=1.0):
        return np.zeros(frame0.shape + (2,), np.float32)

    assert registry._ALGORITHMS["bounded_toy"].bounds == {"steps": (1, 50), "scale": (None, 2.5)}
    validate_config(_motion_config({"steps": 50, "scale": 2.5}))  # the bounds themselves pass
    with pytest.raises(ConfigError, match=r"motion\.models\[0\]\.params\.steps: 51 exceeds 50"):
        validate_config(_motion_config({"steps": 51}))
    with pytest.raises(ConfigError, match=r"motion\.models\[0\]\.params\.steps: 0 is below 1"):
        validate_config(_motion_config({"steps": 0}))
    with pytest.raises(ConfigError, match=r"motion\.models\[0\]\.params\.scale: 2\.6 exceeds 2\.5"):
        validate_config(_motion_config({"scale": 2.6}))
    with pytest.raises(ConfigError, match=r"params\.scale: -1\.0 is negative"):  # the sign rule still holds
        validate_config(_motion_config({"scale": -1.0}))


def test_a_bound_naming_no_parameter_fails_at_registration():
    with pytest.raises(ValueError, match=r"algorithm 'misnamed_toy': bounds name \['n_iters'\], not parameters"):
        @register("misnamed_toy", track="motion", kind="pair", bounds={"n_iters": (0, 10)})
        def misnamed_toy(frame0, frame1, *, n_iter=10):
            return np.zeros(frame0.shape + (2,), np.float32)
    assert "misnamed_toy" not in registry._ALGORITHMS


def test_builtin_bounds_live_with_their_algorithms():
    """The bounds that config validation applies come from the registrations (Horn & Schunck's n_iter)."""
    hs = resolve_model({"name": "hs", "algorithm": "horn_schunck"}, track="motion").algorithm
    assert hs.bounds["n_iter"] == (0, 100_000)
    cfg = {"tracks": ["motion"], "motion": {"models": [{"name": "hs", "algorithm": "horn_schunck",
                                                       "params": {"n_iter": 1_000_000_000}}]}}
    with pytest.raises(ConfigError, match=r"params\.n_iter: 1000000000 exceeds 100000"):
        validate_config(cfg)
