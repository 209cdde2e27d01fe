"""The Snakemake workflow end to end, on a small config, through `python -m snakemake`.

The workflow and a copy of the psybench package are copied into a temporary
directory (the copy is first on PYTHONPATH), so tests can edit library code and
config without touching the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.workflow

SMALL_CONFIG = {
    "display": {"px_per_deg": 4, "frames_per_s": 50, "width_px": 96, "height_px": 96, "supersample": 2},
    "tracks": ["motion"],
    "motion": {
        "duration_ms": 240,
        # every experiment at 0 and an off-cardinal direction (a CW/CCW diamond pair at each)
        "directions_deg": [0, 30],
        # two cheap held-out re-runs of the diamonds: a lower contrast, a finer display scale
        "generalisation": {"contrast": {"levels": [0.3], "experiments": ["diamonds"]},
                           "speed_deg_s": {"levels": []}, "frames_per_s": {"levels": []},
                           "px_per_deg": {"levels": [6], "experiments": ["diamonds"]}},
        "diamonds": {"speed_deg_s": 8, "size_deg": 8, "line_width_deg": 0.5},
        "bars": {"speed_deg_s": 8, "width_deg": 0.5, "tilt_deg": 45, "lengths_deg": [4, 8]},
        "dashed_bars": {"length_deg": 8, "n_tiles": [1, 2], "gap_fraction": 0.3},
        "barberpole": {"aspect_ratios": [1, 2], "short_side_deg": 6, "sf_cpd": 0.5, "speed_deg_s": 4},
        "gratings": {"diameters_deg": [2, 6, 12], "sf_cpd": 0.5, "speed_deg_s": 8},
        "models": [
            {"name": "hs", "algorithm": "horn_schunck"},
            {"name": "fb", "algorithm": "farneback"},
        ],
    },
    "literature": "config/literature.yaml",
}

@pytest.fixture(scope="module")
def workflow(harness, tmp_path_factory) -> Path:
    """The motion track on SMALL_CONFIG, run to `all`, with the harness's user models."""
    work = harness.copy(tmp_path_factory.mktemp("wf"), SMALL_CONFIG)
    harness.run(work, "--cores", "2", "all")
    return work


def test_full_run_outputs(workflow):
    t1 = pd.read_csv(workflow / "results/aggregate/motion_table1.csv")
    assert list(t1.columns[:4]) == ["experiment", "model", "passed", "error"]
    assert set(t1["experiment"]) == {"barberpole", "diamonds", "dashed_bars", "grating_size"}
    assert set(t1["model"]) == {"hs", "fb"}
    pareto = pd.read_csv(workflow / "results/motion/motion_pareto.csv")
    assert {"model", "pareto_optimal", "front", "average_rank"} <= set(pareto.columns)
    assert (pareto["front"] >= 1).all() and pareto["pareto_optimal"].any()
    md = (workflow / "results/motion/motion_table1.md").read_text()
    assert "Translating diamonds" in md
    for fig in ("stimuli.png", "hs_flow.png", "fb_direction_error.png"):
        assert (workflow / "results/motion/figures" / fig).stat().st_size > 1000
    # the fits table reports the fit each verdict used, with AR(1)-aware standard errors
    from psybench.motion.fits import VERDICT_FIT_COLUMNS

    fits = pd.read_csv(workflow / "results/motion/fits/hs.csv")
    assert set(VERDICT_FIT_COLUMNS) <= set(fits.columns)
    assert set(fits["verdict_fit"].dropna()) <= {"single", "double"}
    # every verdict re-scored on the unfiltered mean flow and at other pursuit constants
    from psybench.motion.readout_dynamics import SENSITIVITY_COLUMNS

    lam = pd.read_csv(workflow / "results/motion/scores/lambda_sensitivity/hs.csv")
    assert list(lam.columns) == SENSITIVITY_COLUMNS
    assert set(lam["lambda_ms"]) == {0.0, 25.0, 50.0, 100.0}
    assert set(lam["experiment"]) == set(t1["experiment"])


def test_every_experiment_is_scored_at_every_direction(workflow):
    """Per-direction verdicts in the scores and Table 1; overall pass only if every direction passes."""
    scores = pd.read_csv(workflow / "results/motion/scores/hs.csv")
    assert list(scores.columns[:5]) == ["experiment", "model", "passed", "error", "details"]
    assert (scores["n_directions"] == 2).all()
    for direction in ("dir000", "dir030"):
        assert {f"passed_{direction}", f"error_{direction}"} <= set(scores.columns)
    t1 = pd.read_csv(workflow / "results/aggregate/motion_table1.csv")
    every = t1["passed_dir000"].astype(bool) & t1["passed_dir030"].astype(bool)
    assert (t1["passed"].astype(bool) == every).all()
    assert (t1["error"] >= t1[["error_dir000", "error_dir030"]].min(axis=1) - 1e-12).all()
    assert t1["integration_passed"].notna().sum() == 2  # grating size only, for both models
    assert "30°:" in (workflow / "results/motion/motion_table1.md").read_text()
    assert (workflow / "results/motion/stimuli/diamond_ccw_dir030.zarr").is_dir()
    assert (workflow / "results/motion/stimuli/barberpole_ar2_dir030.zarr").is_dir()
    fits = pd.read_csv(workflow / "results/motion/fits/hs.csv")
    assert sorted(fits.loc[fits["experiment"] == "diamonds", "direction_deg"]) == [0.0, 30.0]


def test_generalisation_table(workflow):
    """Columns of results/aggregate/motion_generalisation.csv; each re-run has its own contrast or display scale."""
    from psybench.io import open_store

    gen = pd.read_csv(workflow / "results/aggregate/motion_generalisation.csv")
    assert list(gen.columns[:6]) == ["model", "experiment", "nuisance", "level", "passed", "error"]
    assert list(gen.columns[-2:]) == ["verdict_changed", "cause"]
    rows = gen[(gen["experiment"] == "diamonds") & (gen["nuisance"] == "contrast")]
    assert set(zip(rows["model"], rows["level"], rows["baseline"])) == {
        ("hs", 1.0, True), ("hs", 0.3, False), ("fb", 1.0, True), ("fb", 0.3, False)}
    # the baseline row is the main run's verdict at 0 deg
    t1 = pd.read_csv(workflow / "results/aggregate/motion_table1.csv").set_index(["experiment", "model"])
    base = rows[rows["baseline"]].set_index("model")
    for m in ("hs", "fb"):
        assert bool(base.loc[m, "passed"]) == bool(t1.loc[("diamonds", m), "passed_dir000"])
    dep = gen[gen["experiment"] == "diamonds_contrast_dependence"]
    assert set(dep["model"]) == {"hs", "fb"} and dep["level"].isna().all()
    store = open_store(workflow / "results/motion/generalisation/contrast_000p3/stimuli/diamond_cw_dir000.zarr")
    assert store.attrs["stimulus"]["params"]["contrast"] == 0.3
    # 6 px/deg: the 96-px frame at 4 px/deg grows to 144 px (the same 24-deg field of view)
    scale = gen[(gen["experiment"] == "diamonds") & (gen["nuisance"] == "px_per_deg")]
    assert set(zip(scale["model"], scale["level"], scale["baseline"])) == {
        ("hs", 4.0, True), ("hs", 6.0, False), ("fb", 4.0, True), ("fb", 6.0, False)}
    store = open_store(workflow / "results/motion/generalisation/px_per_deg_006/stimuli/diamond_cw_dir000.zarr")
    assert (store.attrs["display"]["px_per_deg"], store.attrs["display"]["width_px"]) == (6.0, 144)
    # a flagged cell is exactly one whose verdict differs from its model's baseline, with a cause
    for _, r in gen[~gen["baseline"] & gen["level"].notna()].iterrows():
        b = gen[gen["baseline"] & (gen["model"] == r["model"]) & (gen["experiment"] == r["experiment"])
                & (gen["nuisance"] == r["nuisance"])].iloc[0]
        assert bool(r["verdict_changed"]) == (bool(r["passed"]) != bool(b["passed"]))
        assert isinstance(r["cause"], str) == bool(r["verdict_changed"])


def test_stores_carry_display_and_code_hash(workflow):
    from psybench.io import open_store

    stim = next((workflow / "results/motion/stimuli").glob("*.zarr"))
    resp = open_store(workflow / "results/motion/responses/hs" / stim.name, deep=True)
    assert resp.attrs["display"]["px_per_deg"] == 4
    assert resp.attrs["model"]["algorithm"] == "horn_schunck"
    assert resp.attrs["code_hash"]
    assert resp.dims["flow"] == ("t", "y", "x", "component")


def test_rerun_has_nothing_to_do(harness, workflow):
    proc = harness.run(workflow, "-n", "all")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_lint_is_clean(harness, workflow):
    proc = harness.run(workflow, "--lint", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Lints for" not in out, out


def test_param_change_reschedules_only_that_model(harness, workflow):
    cfg = yaml.safe_load((workflow / "config/config.yaml").read_text())
    cfg["motion"]["models"][0]["params"] = {"alpha": 3.0}
    harness.write_config(workflow, cfg)
    try:
        outs = harness.planned_outputs(harness.run(workflow, "-n", "all"))
    finally:
        harness.write_config(workflow, SMALL_CONFIG)
    assert any(o.startswith("results/motion/responses/hs/") for o in outs)
    assert "results/motion/scores/hs.csv" in outs
    assert "results/aggregate/motion_table1.csv" in outs
    assert not any("/fb" in o or o.startswith("results/motion/stimuli/") for o in outs), outs


def test_library_edit_reschedules_that_stage(harness, workflow):
    module = workflow / "psybench" / "motion" / "readouts.py"
    original = module.read_text()
    module.write_text(original + "\n# an edit to the readout stage\n")
    try:
        outs = harness.planned_outputs(harness.run(workflow, "-n", "all"))
    finally:
        module.write_text(original)
    assert any(o.startswith("results/motion/readouts/hs/") for o in outs)
    assert any(o.startswith("results/motion/readouts/fb/") for o in outs)
    assert "results/aggregate/motion_table1.csv" in outs
    assert not any(o.startswith(("results/motion/responses/", "results/motion/stimuli/")) for o in outs), outs


@pytest.mark.parametrize(
    "mutate,expected",
    [
        (
            lambda c: c["motion"]["models"].append({"name": "x", "algorithm": "no_such_model"}),
            r"motion\.models\[2\].*no_such_model",
        ),
        (
            lambda c: c["motion"]["gratings"].__setitem__("diameters_deg", [2, -6]),
            r"motion\.gratings\.diameters_deg\[1\]",
        ),
        (lambda c: c["motion"].__setitem__("diamons", {}), r"diamons"),
    ],
    ids=["unknown-model", "negative-diameter", "misspelt-key"],
)
def test_bad_config_fails_before_any_job(harness, workflow, mutate, expected):
    cfg = yaml.safe_load(yaml.safe_dump(SMALL_CONFIG))
    mutate(cfg)
    harness.write_config(workflow, cfg)
    try:
        proc = harness.run(workflow, "--cores", "1", "all", check=False)
    finally:
        harness.write_config(workflow, SMALL_CONFIG)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(expected, out), out
    assert "jobid" not in out  # no job was scheduled


def test_user_model_runs_and_bad_user_models_are_named(harness, workflow):
    cfg = yaml.safe_load(yaml.safe_dump(SMALL_CONFIG))
    cfg["motion"]["models"] = [
        {"name": "mine", "callable": "usermodels.flow:estimate", "kind": "pair", "params": {"gain": 0.5}}
    ]
    harness.write_config(workflow, cfg)
    table = workflow / "results/aggregate/motion_table1.csv"
    try:
        harness.run(workflow, "--cores", "2", "results/motion/scores/mine.csv")
        scores = pd.read_csv(workflow / "results/motion/scores/mine.csv")
        assert set(scores["experiment"]) == {"barberpole", "diamonds", "dashed_bars", "grating_size"}
        before = table.read_bytes()
        for func, message in (("nan_flow", "non-finite"), ("wrong_shape", "shape")):
            cfg["motion"]["models"] = [{"name": f"bad_{func}", "callable": f"usermodels.flow:{func}"}]
            harness.write_config(workflow, cfg)
            proc = harness.run(workflow, "--cores", "1", f"results/motion/scores/bad_{func}.csv", check=False)
            out = proc.stdout + proc.stderr
            logs = "".join(p.read_text() for p in (workflow / "logs/motion/responses").glob(f"bad_{func}/*.log"))
            assert proc.returncode != 0
            assert f"model 'bad_{func}'" in logs and message in logs, out + logs
            assert not list((workflow / "results/motion/responses").glob(f"bad_{func}/*.zarr"))
        assert table.read_bytes() == before  # nothing already computed was lost
    finally:
        harness.write_config(workflow, SMALL_CONFIG)


def test_report_builds(harness, workflow, tmp_path):
    harness.run(workflow, "--report", "report.html", "all")
    html = (workflow / "report.html").read_text(errors="replace")
    assert "motion_table1" in html
    # the leaderboard site is in the report (category Leaderboards); the site does not link to report.html,
    # which exists only after this separate --report run (a dead link after the README's first command)
    assert "Leaderboards" in html and "leaderboards.rst" not in html
    assert "report.html" not in (workflow / "results/report/index.html").read_text()
    # the motion page's held-out section, built from this run's Table 1 and generalisation table (no bio model here)
    motion_page = (workflow / "results/report/motion.html").read_text()
    assert "Held-out verdicts of the bio-inspired models" in motion_page
    assert "No bio-inspired motion model in this run." in motion_page
    assert 'href="../aggregate/motion_generalisation.csv"' in motion_page
    # the description prints the display mapping readably (key = value), not as a raw dict
    assert 'px_per_deg</tt> = 4' in html and "display mapping {'px_per_deg'" not in html
    # rendered by a real browser, the report's front page names the human reference and the leaderboards
    import re

    from test_report_leaderboard import _chromium, _run_chromium

    dom = _run_chromium(_chromium(), tmp_path, "--virtual-time-budget=8000", "--dump-dom",
                        (workflow / "report.html").resolve().as_uri()).stdout
    shown = re.sub(r"<script[\s\S]*?</script>", "", dom)
    assert "human observers" in shown and "Leaderboards" in shown and "px_per_deg" in shown
