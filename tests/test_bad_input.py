"""Bad input stops the workflow with a message naming what is wrong; nothing computed is lost.

Config errors are caught while the Snakefile is parsed (before any job); model
errors stop the model's own job (its log names the model) and leave every other
result in place. Unreadable movies, corrupt PNGs, malformed gaze files and
answer.txt files are covered by the intphys and attention tests.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def workflow(harness, completed_workflow, tmp_path_factory):
    return harness.clone(completed_workflow, tmp_path_factory.mktemp("bad") / "wf")


def _run_with_config(harness, workflow, cfg, *args, **kwargs):
    """Run snakemake under ``cfg``, then restore the tiny default config; returns the process."""
    harness.write_config(workflow, cfg)
    try:
        return harness.run(workflow, *args, check=False, **kwargs)
    finally:
        harness.write_config(workflow, harness.tiny_config())


def _set(path, value):
    def mutate(cfg):
        node = cfg
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


CONFIG_CASES = [
    (_set(["display", "width_px"], "wide"), r"display\.width_px.*'wide'"),
    (_set(["display", "frames_per_s"], 0), r"display\.frames_per_s"),
    (_set(["tracks"], ["motion", "moton"]), r"tracks\[1\].*moton"),
    (_set(["motion", "duration_ms"], -5), r"motion\.duration_ms"),
    (_set(["motion", "bars", "lengths_deg"], [4]), r"motion\.bars\.lengths_deg"),
    (_set(["motion", "models"], [{"name": "hs", "algorithm": "horn_schunck"}, {"name": "hs", "algorithm": "dis"}]),
     r"hs.*(duplicate|twice|more than once|unique)"),
    (_set(["motion", "models"], [{"name": "hs", "algorithm": "horn_schunck", "params": {"alphaa": 1}}]),
     r"model 'hs'.*alphaa"),
    (_set(["motion", "models"], [{"name": "m", "callable": "usermodels.flow"}]), r"motion\.models\[0\]"),
    (_set(["motion", "models"], [{"name": "m", "callable": "no_such_pkg.flow:f", "kind": "pair"}]),
     r"model 'm'.*no_such_pkg"),
    (_set(["motion", "models"], [{"name": "m", "callable": "usermodels.flow:nope", "kind": "pair"}]),
     r"model 'm'.*nope"),
    (_set(["motion", "models"], [{"name": "bad name", "algorithm": "dis"}]), r"motion\.models\[0\]\.name"),
]


@pytest.mark.parametrize(
    "mutate,expected",
    CONFIG_CASES,
    ids=["string-for-int", "zero-rate", "unknown-track", "negative-duration", "too-few-lengths",
         "duplicate-model", "unknown-param", "callable-without-function", "callable-missing-module",
         "callable-missing-function", "bad-model-name"],
)
def test_malformed_config_fails_before_any_job(harness, workflow, mutate, expected):
    cfg = harness.tiny_config()
    mutate(cfg)
    proc = _run_with_config(harness, workflow, cfg, "-n", harness.table, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert re.search(expected, out, flags=re.S), out
    assert "Job stats" not in out and "jobid" not in out  # nothing was planned


@pytest.mark.parametrize(
    "func,expected",
    [
        ("boom", r"model 'bad_boom' raised RuntimeError.*boom: this user model is broken"),
        ("nan_flow", r"model 'bad_nan_flow' returned \d+ non-finite value"),
        ("wrong_shape", r"model 'bad_wrong_shape' returned 'flow' of shape \(\d+, \d+\).*expected \(\d+, \d+, 2\)"),
    ],
    ids=["raises", "nan", "wrong-shape"],
)
def test_bad_user_model_stops_its_job_and_keeps_results(harness, workflow, func, expected):
    before = {p: p.read_bytes() for p in (workflow / "results/aggregate").glob("*.csv")}
    good = sorted((workflow / "results/motion/responses/hs").glob("*.zarr"))
    stimulus = sorted((workflow / "results/motion/stimuli").glob("*.zarr"))[0].name
    cfg = harness.tiny_config()
    name = f"bad_{func}"
    cfg["motion"]["models"].append({"name": name, "callable": f"usermodels.flow:{func}", "kind": "pair"})
    proc = _run_with_config(harness, workflow, cfg, "--cores", "1", f"results/motion/responses/{name}/{stimulus}")
    out = proc.stdout + proc.stderr
    log = (workflow / "logs/motion/responses" / name / "batch.log").read_text()  # one job per model
    assert proc.returncode != 0
    assert re.search(expected, log, flags=re.S), log
    assert "ModelError" in log
    # no partial store under the final name, nothing already computed was lost
    assert not list((workflow / "results/motion/responses" / name).glob("*.zarr*"))
    assert {p: p.read_bytes() for p in (workflow / "results/aggregate").glob("*.csv")} == before
    assert sorted((workflow / "results/motion/responses/hs").glob("*.zarr")) == good
    assert "Nothing to be done" in harness.output(harness.run(workflow, "-n", harness.table)), out


@pytest.mark.parametrize("generate", [False, True], ids=["missing-dataset", "generated-outside-project"])
def test_data_folder_outside_project_is_refused(harness, workflow, tmp_path, generate):
    outside = tmp_path / "elsewhere" / "intphys"  # outside the workflow directory
    cfg = harness.tiny_config()
    cfg["tracks"] = ["motion", "intphys"]
    cfg["intphys"] = {"data_root": str(outside), "generate": generate}
    proc = _run_with_config(harness, workflow, cfg, "-n", harness.table, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert re.search(r"intphys\.data_root", out) and str(outside) in out, out
    assert "Job stats" not in out
