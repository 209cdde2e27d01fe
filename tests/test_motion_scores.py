"""Tests of the motion criteria: human-like synthetic readouts pass, static-model-like ones fail.

No rule may depend on the model's name: every verdict is checked under two names.
"""

import json

import numpy as np
import pandas as pd
import pytest

from psybench.io.store import ArraySpec, write_store
from psybench.io.tables import read_table
from psybench.motion.display import Display
from psybench.motion.readouts import compute_readout, load_readout
from psybench.motion.scores import CRITERIA_DEFAULTS, merge_criteria, score_model, score_model_stores

FRAME_MS = 10.0
T = np.arange(50) * FRAME_MS  # 500 ms
ONSET = 2                     # first defined sample (pair model: flow[0] = 0, w[1] = 0)


def _readout(stim, err, speed=None):
    """Readout dict from a direction-error course (deg) and a speed course (deg/s)."""
    err = np.asarray(err, dtype=float).copy()
    err[:ONSET] = np.nan
    speed = np.full(T.size, 10.0) if speed is None else np.asarray(speed, dtype=float)
    speed = speed.copy()
    speed[:ONSET] = 0.0
    truth = stim["truth"]["direction_deg"]
    direction = np.where(np.isfinite(err), ((truth + err + 180) % 360) - 180, np.nan)
    return {"t_ms": T, "direction_deg": direction, "direction_error_deg": err, "speed_deg_s": speed, "stimulus": stim}


def _stim(name, family, experiment, truth, **facts):
    return {"name": name, "family": family, "experiment": experiment, "truth": {"direction_deg": truth}, **facts}


def diamonds(kind):
    out = {}
    for d in (0, 90, 180, 270):
        for hand, s in (("cw", 1.0), ("ccw", -1.0)):
            stim = _stim(f"diamond_{hand}_dir{d:03d}", "diamond", "diamonds", float(d),
                         handedness=hand, vector_average_direction_deg=float(d) + s * 44.0)
            tt = T - T[ONSET]
            err = s * (30.0 * np.exp(-tt / 80.0) + 0.5) if kind == "human" else np.full(T.size, s * 44.0)
            out[stim["name"]] = _readout(stim, err)
    return out


def bars(kind):
    out = {}
    tt = T - T[ONSET]
    for L in (2, 4, 8, 16):
        stim = _stim(f"bar_len{L:02d}", "bar", "dashed_bars", 0.0, params={"length_deg": L}, normal_direction_deg=45.0)
        peak = 8.0 + 2.0 * L
        err = peak * np.exp(-tt / 60.0) if kind == "human" else np.full(T.size, 45.0 * L / (L + 2.0))
        out[stim["name"]] = _readout(stim, err)
    for n in (1, 2, 4, 8):
        stim = _stim(f"dashed_n{n:02d}", "dashed_bar", "dashed_bars", 0.0, params={"n_tiles": n},
                     normal_direction_deg=45.0)
        peak = 40.0 / np.sqrt(n)
        err = peak * np.exp(-tt / 60.0) if kind == "human" else np.full(T.size, 45.0 * (1 - 0.05 * n))
        out[stim["name"]] = _readout(stim, err)
    return out


def barberpoles(kind):
    out = {}
    # human: ocular following ends between the grating-plus-terminators and the terminators-alone
    # vector sums (Masson et al. 2000): 9.5-18.4 deg toward the long axis at AR 2, 14.0-26.6 at AR 3
    for ar, dev in ((1, 0.0), (2, 14.0), (3, 20.0)):
        stim = _stim(f"barberpole_ar{ar}", "barberpole", "barberpole", 0.0, params={"aspect_ratio": ar},
                     grating_normal_deg=0.0, long_axis_deg=45.0 - 180.0)  # an axis: either sense
        final = dev if kind == "human" else 0.0
        err = np.where(T < 150, 0.0, final)  # 1D first, then the 2D component
        out[stim["name"]] = _readout(stim, err)
    return out


def gratings(kind):
    out = {}
    tt = np.clip(T - T[ONSET], 0, None)
    for D in (1, 2, 4, 8, 16, 28):
        stim = _stim(f"grating_d{D:02d}", "grating", "grating_size", 0.0, params={"diameter_deg": D})
        # human: grows, peaks near 8 deg, then declines slightly (surround suppression);
        # static: proportional to the area the aperture covers in the frame.
        gain = D / (D + 2.0) * np.exp(-D / 60.0) if kind == "human" else min(1.0, (D / 32.0) ** 2)
        out[stim["name"]] = _readout(stim, np.zeros(T.size), speed=20.0 * gain * (1 - np.exp(-tt / 50.0)))
    return out


ALL = {"diamonds": diamonds, "dashed_bars": bars, "barberpole": barberpoles, "grating_size": gratings}


@pytest.mark.parametrize("experiment", sorted(ALL))
def test_human_like_passes_and_static_like_fails(experiment):
    verdicts = {}
    for kind in ("human", "static"):
        for model in ("alpha", "tlapale"):
            scores, fits = score_model(model, ALL[experiment](kind))
            assert list(scores["experiment"]) == [experiment]
            row = scores.iloc[0]
            verdicts[(kind, model)] = (bool(row["passed"]), float(row["error"]))
            assert row["model"] == model
    # same rule for every model name
    assert verdicts[("human", "alpha")] == verdicts[("human", "tlapale")]
    assert verdicts[("static", "alpha")] == verdicts[("static", "tlapale")]
    h_pass, h_err = verdicts[("human", "alpha")]
    s_pass, s_err = verdicts[("static", "alpha")]
    assert h_pass, f"human-like readouts should pass {experiment}"
    assert not s_pass, f"static-model-like readouts should fail {experiment}"
    assert h_err < s_err


def test_diamond_details_and_fit_recover_the_decay():
    scores, fits = score_model("m", diamonds("human"))
    d = scores.iloc[0]["details"]
    assert d["A"] == pytest.approx(30.0, rel=1e-3) and d["tau_ms"] == pytest.approx(80.0, rel=1e-3)
    assert d["B"] == pytest.approx(0.5, abs=1e-3) and d["n_directions"] == 4
    row = fits.iloc[0]
    assert row["curve"] == "half_differential" and row["t_onset_ms"] == pytest.approx(20.0)
    assert np.isnan(row["gaussian_score"]) and row["n_lit_params"] == 0
    json.dumps(d)  # details are JSON-serialisable
    # static: the error never leaves the vector average, the score says why
    s = score_model("m", diamonds("static"))[0].iloc[0]["details"]
    assert not s["checks"]["converges"] and not s["checks"]["initial_bias"]


def test_gaussian_score_uses_literature_with_sigma():
    lit = {"parameters": {"diamonds": {"half_differential": {
        "tau_ms": {"value": 80.0, "sigma": 20.0, "kind": "value"},
        "A": {"value": 30.0, "sigma": None, "kind": "value"}}}}}
    fits = score_model("m", diamonds("human"), literature=lit)[1]
    assert fits.iloc[0]["n_lit_params"] == 1
    assert fits.iloc[0]["gaussian_score"] == pytest.approx(1.0, abs=1e-3)


def test_criteria_overrides_are_validated_and_applied():
    with pytest.raises(ValueError, match=r"criteria\.diamonds\.a_mn"):
        merge_criteria({"diamonds": {"a_mn": 3}})
    with pytest.raises(ValueError, match=r"criteria\.nope"):
        merge_criteria({"nope": {}})
    assert merge_criteria({"diamonds": {"b_max_deg": 1}})["diamonds"]["b_max_deg"] == 1.0
    assert CRITERIA_DEFAULTS["diamonds"]["b_max_deg"] == 5.0  # defaults untouched
    # a stricter threshold turns the human-like pass into a fail: the rule really uses it
    strict = score_model("m", diamonds("human"), criteria={"diamonds": {"b_max_deg": 0.1}})[0]
    assert not strict.iloc[0]["passed"]


def test_scores_read_stimulus_parameters_from_attributes_not_names():
    """Stimulus names are labels: renaming every stimulus leaves every score unchanged."""
    for experiment, make in ALL.items():
        data = make("human")
        renamed = {}
        for i, r in enumerate(data.values()):
            r = dict(r, stimulus=dict(r["stimulus"], name=f"s{i}"))
            renamed[f"s{i}"] = r
        a, fa = score_model("m", data)
        b, fb = score_model("m", renamed)
        assert a.drop(columns="details").equals(b.drop(columns="details")), experiment
        assert fa.drop(columns="curve").equals(fb.drop(columns="curve")), experiment
    # a parameter missing from the attributes is an error naming the stimulus, not a guess from its name
    data = bars("human")
    del data["bar_len04"]["stimulus"]["params"]
    with pytest.raises(ValueError, match=r"bar_len04.*bar length"):
        score_model("m", data)


def test_missing_facts_are_reported_with_the_stimulus_name():
    data = diamonds("human")
    name = "diamond_cw_dir090"
    del data[name]["stimulus"]["vector_average_direction_deg"]
    with pytest.raises(ValueError, match=name):
        score_model("m", data)


def _stores_for(tmp_path, readouts, display):
    """Response stores whose uniform flow reproduces each readout's direction course."""
    paths = []
    for name, r in readouts.items():
        direction = np.radians(np.nan_to_num(r["direction_deg"], nan=0.0))
        speed_px = r["speed_deg_s"] * display.px_per_deg / display.frames_per_s
        # feed vbar so that w follows: invert the exponential integrator is overkill; use vbar = target
        flow = np.zeros((T.size, 2, 2, 2))
        flow[:, :, :, 0] = (speed_px * np.cos(direction))[:, None, None]
        flow[:, :, :, 1] = (-speed_px * np.sin(direction))[:, None, None]
        src = tmp_path / "responses" / f"{name}.zarr"
        write_store(src, {"flow": ArraySpec(flow.astype(np.float32), ("t", "y", "x", "component"))},
                    {"display": display.to_attrs(), "stimulus": r["stimulus"], "model": {"name": "mymodel"}})
        paths.append(compute_readout(src, tmp_path / "readouts" / f"{name}.zarr", lambda_ms=20.0))
    return paths


def test_score_model_stores_writes_tables(tmp_path):
    display = Display(frames_per_s=100.0)
    paths = _stores_for(tmp_path, barberpoles("human"), display)
    scores_csv, fits_csv = score_model_stores(paths, tmp_path / "s.csv", tmp_path / "f.csv",
                                              criteria={}, literature_path="config/literature.yaml")
    s = pd.read_csv(scores_csv)
    assert list(s.columns[:5]) == ["experiment", "model", "passed", "error", "details"]
    assert list(s.columns[5:]) == ["n_directions", "passed_dir000", "error_dir000"]
    assert s.loc[0, "model"] == "mymodel" and s.loc[0, "experiment"] == "barberpole"
    assert bool(s.loc[0, "passed"])
    assert json.loads(s.loc[0, "details"])["checks"]["within_ocular_following_range"]
    assert read_table(fits_csv).empty
    # the workflow's job also writes the lambda sensitivity; the run's own lambda (20 ms) is scored once
    from psybench.motion.readout_dynamics import lambda_sensitivity
    from psybench.motion.scores import lambda_sensitivity_stores

    calls = []
    readouts = {p.name.removesuffix(".zarr"): load_readout(p) for p in paths}
    counted = lambda_sensitivity("mymodel", readouts, lambda *a, **k: calls.append(1) or score_model(*a, **k),
                                 reference_scores=score_model("mymodel", readouts), literature=None)
    assert len(calls) == 4  # lambda 0, 25, 50, 100; 20 is the stores' own
    assert counted.verdicts.equals(lambda_sensitivity("mymodel", readouts, score_model, literature=None).verdicts)
    both = score_model_stores(paths, tmp_path / "s2.csv", tmp_path / "f2.csv", criteria={},
                              literature_path="config/literature.yaml",
                              sensitivity_out=(tmp_path / "v2.csv", tmp_path / "lf2.csv"))
    alone = lambda_sensitivity_stores(paths, tmp_path / "v.csv", tmp_path / "lf.csv", criteria={},
                                      literature_path="config/literature.yaml")
    assert [p.read_bytes() for p in both] == [scores_csv.read_bytes(), fits_csv.read_bytes()]
    assert [(tmp_path / n).read_bytes() for n in ("v2.csv", "lf2.csv")] == [p.read_bytes() for p in alone]


def test_barberpole_fraction_threshold_is_a_real_knob():
    """A percept inside the ocular-following range passes at the default 0, fails at a fraction 0.5."""
    data = barberpoles("static")
    for name, ar in (("barberpole_ar2", 2), ("barberpole_ar3", 3)):
        stim = data[name]["stimulus"]
        data[name] = _readout(stim, np.where(T < 150, 0.0, 10.0 + 3 * ar))
    assert score_model("m", data)[0].iloc[0]["passed"]
    strict = {"barberpole": {"min_fraction_toward_long_axis": 0.5}}
    assert not score_model("m", data, criteria=strict)[0].iloc[0]["passed"]


def test_generalisation_runs_equal_each_run_scored_alone(tmp_path):
    """run_readouts then run_scores (one job per model for every run) write the stores and tables
    that compute_readouts and score_model_stores write for each run alone."""
    from psybench.motion.generalisation_runs import run_readouts, run_scores
    from psybench.motion.readouts import compute_readouts

    display = Display()
    responses = {}
    for run, gain in (("contrast_a", 1.0), ("contrast_b", 0.25)):
        for name, readout in diamonds("human").items():
            truth = readout["stimulus"]["truth"]["direction_deg"]
            err = np.radians(np.nan_to_num(readout["direction_error_deg"]) + truth)
            flow = np.zeros((T.size, 4, 5, 2))
            flow[1:, ..., 0], flow[1:, ..., 1] = gain * np.cos(err[1:, None, None]), -gain * np.sin(err[1:, None, None])
            arrays = {"flow": ArraySpec(flow.astype(np.float32), ("t", "y", "x", "component"))}
            attrs = {"display": display.to_attrs(), "stimulus": readout["stimulus"], "model": {"name": "m"}}
            store = tmp_path / run / "responses" / f"{name}.zarr"
            responses.setdefault(run, []).append(write_store(store, arrays, attrs))
    kw = {"criteria": None, "literature_path": "config/literature.yaml"}
    outs = {}
    for way in ("alone", "runs"):
        dirs = {run: tmp_path / way / run / "readouts" for run in responses}
        tables = [{run: tmp_path / way / run / f"{kind}.csv" for run in responses} for kind in ("scores", "fits")]
        if way == "alone":
            for run, paths in responses.items():
                stores = compute_readouts(paths, [dirs[run] / p.name for p in paths], lambda_ms=50.0, code_hash="c")
                score_model_stores(stores, tables[0][run], tables[1][run], **kw)
        else:
            run_readouts(responses, dirs, lambda_ms=50.0, code_hash="c")
            run_scores(dirs, *tables, **kw)
        outs[way] = {f.relative_to(tmp_path / way): f.read_bytes() for f in (tmp_path / way).rglob("*")
                     if f.is_file() and "stat" not in f.name}
    assert len(outs["alone"]) > 2 * 8 * 5 and outs["alone"] == outs["runs"]
    assert read_table(tmp_path / "runs" / "contrast_b" / "scores.csv")["experiment"].tolist() == ["diamonds"]
    assert (read_table(tmp_path / "runs" / "contrast_a" / "fits.csv").to_numpy().tolist()
            != read_table(tmp_path / "runs" / "contrast_b" / "fits.csv").to_numpy().tolist())  # the gain is seen


def test_readouts_from_a_stored_mean_flow_equal_those_from_the_flow(tmp_path):
    """The readouts stage reads the domain mean the response stage stored (mean_flow), or
    pools the flow itself: the same readout stores and tables either way."""
    from psybench.motion.population import domain_mean_flow
    from psybench.motion.readouts import compute_readouts

    display = Display()
    responses = {"plain": [], "pooled": []}
    for name, readout in diamonds("human").items():
        truth = readout["stimulus"]["truth"]["direction_deg"]
        err = np.radians(np.nan_to_num(readout["direction_error_deg"]) + truth)
        flow = np.zeros((T.size, 4, 5, 2), np.float32)
        flow[1:, ..., 0], flow[1:, ..., 1] = np.cos(err[1:, None, None]), -np.sin(err[1:, None, None])
        attrs = {"display": display.to_attrs(), "stimulus": readout["stimulus"], "model": {"name": "m"}}
        for kind, arrays in (("plain", {}), ("pooled", {"mean_flow": ArraySpec(domain_mean_flow(flow), ("t", "c"))})):
            arrays["flow"] = ArraySpec(flow, ("t", "y", "x", "component"))
            responses[kind].append(write_store(tmp_path / "responses" / kind / f"{name}.zarr", arrays, attrs))
    kw = {"criteria": None, "literature_path": "config/literature.yaml"}
    outs = {}
    for kind in ("plain", "pooled"):
        root = tmp_path / kind
        stores = [root / "readouts" / p.name for p in responses[kind]]
        tables = (root / "scores.csv", root / "fits.csv")
        sensitivity = (root / "verdicts.csv", root / "lambda_fits.csv")
        compute_readouts(responses[kind], stores, lambda_ms=50.0, code_hash="c")
        score_model_stores(stores, *tables, sensitivity_out=sensitivity, **kw)
        outs[kind] = {f.relative_to(root): f.read_bytes() for f in root.rglob("*")
                      if f.is_file() and "stat" not in f.name}
    assert len(outs["plain"]) > 8 * 5 and outs["plain"] == outs["pooled"]
    assert read_table(tmp_path / "pooled" / "scores.csv")["experiment"].tolist() == ["diamonds"]
