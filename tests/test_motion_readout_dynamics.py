"""Tests of psybench.motion.readout_dynamics: the model's own dynamics vs the pursuit readout's."""

import numpy as np
import pytest

from psybench.motion.fits import verdict_fit
from psybench.motion.readout_dynamics import (
    SENSITIVITY_COLUMNS,
    direct_readout,
    fit_mean_flow_direction,
    lambda_sensitivity,
    repursue,
)
from psybench.motion.readouts import direction_error, pursuit
from psybench.motion.scores import score_model

FPS = 500.0
FRAME_MS = 1000.0 / FPS
T = np.arange(200) * FRAME_MS  # 400 ms
TAU_MODEL = 10.0               # the model's own time constant (ms)


def _mean_flow(truth_deg, error_deg, speed=0.4):
    """Domain-mean flow (px/frame, image v downward) pointing ``error_deg`` CCW of ``truth_deg``."""
    a = np.radians(truth_deg + error_deg)
    return np.column_stack([speed * np.cos(a), -speed * np.sin(a)])


def test_direct_fit_recovers_the_models_own_time_constant():
    """Known answer: e(t) = 40 exp(-t / 10 ms) + 1 in the mean flow is fitted at 10 ms.

    The pursuit readout (RR-7317 eq. 3, lambda 50 ms) of the same flow is fitted at
    several times that: the readout's constant, not the model's.
    """
    err = 40.0 * np.exp(-T / TAU_MODEL) + 1.0
    vbar = _mean_flow(30.0, err)
    sel = fit_mean_flow_direction(vbar, T, 30.0)
    v = verdict_fit(sel)
    assert v.tau_ms == pytest.approx(TAU_MODEL, rel=0.02)
    assert v.A == pytest.approx(40.0, rel=0.02) and v.B == pytest.approx(1.0, abs=0.05)
    w = pursuit(vbar, frame_ms=FRAME_MS, lambda_ms=50.0)
    e_w = direction_error(w, 30.0)
    from psybench.motion.fits import select_exponential

    ok = np.isfinite(e_w)
    tau_pursuit = verdict_fit(select_exponential(T[ok] - T[ok][0], e_w[ok])).tau_ms
    assert tau_pursuit > 3 * TAU_MODEL
    with pytest.raises(ValueError, match="shape"):
        fit_mean_flow_direction(vbar[:-1], T, 30.0)


def _diamond_readouts():
    out = {}
    for d in (20.0, 110.0):
        for hand, s in (("cw", 1.0), ("ccw", -1.0)):
            vbar = _mean_flow(d, s * (40.0 * np.exp(-T / TAU_MODEL) + 0.5))
            name = f"diamond_{hand}_{d:.0f}"
            out[name] = {
                "t_ms": T, "frame_ms": FRAME_MS, "mean_flow": vbar,
                "display": {"px_per_deg": 8.0, "frames_per_s": FPS},
                "readout": {"lambda_ms": 50.0, "min_speed_fraction": 0.01},
                "stimulus": {"name": name, "family": "diamond", "experiment": "diamonds", "handedness": hand,
                             "truth": {"direction_deg": d}, "vector_average_direction_deg": d + s * 44.0},
            }
    return out


def test_repursue_matches_the_stored_readout_chain_and_direct_has_no_filter():
    data = _diamond_readouts()["diamond_cw_20"]
    r50 = repursue(data, 50.0)
    w = pursuit(data["mean_flow"], frame_ms=FRAME_MS, lambda_ms=50.0)
    np.testing.assert_allclose(r50["pursuit"], w)
    np.testing.assert_allclose(r50["direction_error_deg"][1:], direction_error(w, 20.0)[1:])
    # speed in deg/s: 0.4 px/frame * 500 frames/s / 8 px/deg = 25 deg/s once w has converged
    assert r50["speed_deg_s"][-1] == pytest.approx(25.0, rel=1e-3)
    d = direct_readout(data)
    assert d["readout"]["lambda_ms"] == 0.0 and repursue(data, 0)["readout"]["lambda_ms"] == 0.0
    np.testing.assert_allclose(d["direction_error_deg"], 40.0 * np.exp(-T / TAU_MODEL) + 0.5, atol=1e-9)
    with pytest.raises(ValueError, match="mean_flow"):
        direct_readout({k: v for k, v in data.items() if k != "mean_flow"})


def test_a_readout_without_its_display_is_refused():
    # speed in deg/s needs the run's px/deg and frame rate, never an assumed default
    data = {k: v for k, v in _diamond_readouts()["diamond_cw_20"].items() if k != "display"}
    with pytest.raises(ValueError, match="diamond_cw_20.*display"):
        repursue(data, 50.0)


def test_lambda_sensitivity_shows_a_verdict_made_by_the_readout():
    """A model that corrects itself in 10 ms passes the 20-500 ms tau rule only through lambda.

    Unfiltered, the fitted tau is the model's ~10 ms (below the 20 ms bound of the
    diamonds rule, Wallace et al. 2005): fail; through the pursuit filter it is
    lengthened past 20 ms: pass. The report flags the verdicts that differ from
    the run's own lambda (50 ms).
    """
    table, fits = lambda_sensitivity("m", _diamond_readouts(), score_model)
    assert list(table.columns) == SENSITIVITY_COLUMNS
    assert sorted(table["lambda_ms"]) == [0.0, 25.0, 50.0, 100.0]
    by = table.set_index("lambda_ms")
    assert by.loc[0.0, "readout"] == "mean_flow" and by.loc[50.0, "readout"] == "pursuit"
    assert by.loc[0.0, "tau_ms"] == pytest.approx(TAU_MODEL, rel=0.05) and not by.loc[0.0, "passed"]
    assert by.loc[50.0, "passed"] and by.loc[50.0, "tau_ms"] > 20.0
    assert by.loc[0.0, "verdict_differs"] and not by.loc[50.0, "verdict_differs"]
    assert by["tau_ms"].is_monotonic_increasing  # the readout's constant leaks into the fit
    # the fits at every lambda, with the verdict's fit columns
    # (one diamond fit per motion direction: the two pairs of _diamond_readouts move along 20 and 110 deg)
    assert list(fits.columns[:2]) == ["readout", "lambda_ms"] and len(fits) == 4 * 2
    for lam, group in fits.groupby("lambda_ms"):
        assert np.isclose(group["verdict_tau_ms"], by.loc[lam, "tau_ms"]).any(), lam


def test_summary_and_stores_wrapper_write_the_report(tmp_path):
    from psybench.io.store import ArraySpec, write_store
    from psybench.io.tables import read_table
    from psybench.motion.readout_dynamics import SUMMARY_COLUMNS, sensitivity_summary
    from psybench.motion.scores import lambda_sensitivity_stores, score_model_stores

    paths = []
    for name, r in _diamond_readouts().items():
        arrays = {k: ArraySpec(np.zeros((T.size, 2)) if k == "pursuit" else r["mean_flow"], ("t", "component"))
                  for k in ("mean_flow", "pursuit")}
        arrays.update({k: ArraySpec(np.zeros(T.size), ("t",))
                       for k in ("direction_deg", "direction_error_deg", "speed_deg_s")})
        paths.append(write_store(tmp_path / f"{name}.zarr", arrays, {
            "display": r["display"], "stimulus": r["stimulus"], "readout": r["readout"], "model": {"name": "m"}}))
    v_csv, f_csv = lambda_sensitivity_stores(paths, tmp_path / "v.csv", tmp_path / "f.csv",
                                             literature_path="config/literature.yaml")
    # the workflow's one job: scores and sensitivity from one load, the run's lambda scored once (same bytes)
    s_csv, s_fits = score_model_stores(paths, tmp_path / "s.csv", tmp_path / "sf.csv",
                                       literature_path="config/literature.yaml",
                                       sensitivity_out=(tmp_path / "v2.csv", tmp_path / "f2.csv"))
    assert (tmp_path / "v2.csv").read_bytes() == v_csv.read_bytes()
    assert (tmp_path / "f2.csv").read_bytes() == f_csv.read_bytes()
    alone = score_model_stores(paths, tmp_path / "s1.csv", tmp_path / "sf1.csv",
                               literature_path="config/literature.yaml")
    assert [p.read_bytes() for p in alone] == [s_csv.read_bytes(), s_fits.read_bytes()]
    verdicts, fits = read_table(v_csv), read_table(f_csv)
    assert sorted(verdicts["lambda_ms"]) == [0.0, 25.0, 50.0, 100.0] and set(verdicts["model"]) == {"m"}
    assert len(fits) == 4 * 2 and "verdict_tau_ms" in fits.columns  # one diamond fit per direction
    summary = sensitivity_summary(verdicts)
    assert list(summary.columns) == SUMMARY_COLUMNS and len(summary) == 1
    row = summary.iloc[0]
    assert row["passed_reference"] and not row["passed_direct"] and not row["lambda_robust"]
    assert row["tau_direct_ms"] == pytest.approx(TAU_MODEL, rel=0.05) and row["lambdas_ms"] == "0 25 50 100"
