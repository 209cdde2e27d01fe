"""``psybench.score``: the workflow's numbers for one model, from one Python call."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import psybench
from psybench.aggregate.table import SCORE_COLUMNS
from psybench.api import parse_benchmark, score_config
from psybench.config import ConfigError
from psybench.provenance import params_hash
from psybench.registry import ModelError, get_algorithm

KEYS = ["model", "track", "experiment", "metric", "direction"]


def _values(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[KEYS + ["value"]].sort_values(KEYS, kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def workflow_rows(completed_workflow, harness, tmp_path_factory):
    """The workflow's motion score rows of the tiny config (its model 'hs' = horn_schunck)."""
    work = harness.clone(completed_workflow, tmp_path_factory.mktemp("api") / "wf")
    harness.run(work, "--cores", "1", "results/aggregate/scores_motion.csv")
    return work, pd.read_csv(work / "results/aggregate/scores_motion.csv")


@pytest.mark.workflow
def test_score_equals_the_workflow_rows(harness, workflow_rows, capsys):
    work, expected = workflow_rows
    tiny = harness.tiny_config()
    rows = psybench.score("horn_schunck", "motion", name="hs", config=tiny)
    assert list(rows.columns) == list(SCORE_COLUMNS)
    assert len(rows) == len(expected) == 8  # 4 experiments x (error, passed)
    got, want = _values(rows), _values(expected)
    pd.testing.assert_frame_equal(got.drop(columns="value"), want.drop(columns="value"), check_dtype=False)
    np.testing.assert_allclose(got["value"], want["value"], rtol=1e-12, equal_nan=True)
    assert (rows["source"] == "psybench.score(motion)").all()
    err = capsys.readouterr().err
    assert "psybench.score('hs', 'motion'): 24/24 (100 %)" in err and "left" in err


@pytest.mark.workflow
def test_score_one_experiment_on_the_runs_stimulus_stores(harness, workflow_rows):
    """``motion/barberpole`` on the stores the workflow rendered: its rows of the workflow, nothing else."""
    work, expected = workflow_rows
    rows = psybench.score("horn_schunck", "motion/barberpole", name="hs", config=harness.tiny_config(),
                          stimuli=work / "results/motion/stimuli", progress=False)
    want = expected[expected["experiment"] == "barberpole"]
    np.testing.assert_allclose(_values(rows)["value"], _values(want)["value"], rtol=1e-12)
    assert set(rows["experiment"]) == {"barberpole"}


def test_user_function_with_ordinary_parameter_and_its_errors(harness, tmp_path):
    cfg = harness.tiny_config()

    def estimate(frame0, frame1, radius=3):
        return np.zeros(np.shape(frame0) + (2,), np.float32)

    with pytest.raises(ModelError, match=r"model 'estimate': unknown parameter\(s\) \['size'\].*accepted: "
                                         r"\['radius'\]"):
        psybench.score(estimate, "motion/barberpole", params={"size": 2}, config=cfg)
    with pytest.raises(FileNotFoundError, match=r"stimulus store .*barberpole_ar1\.zarr is missing"):
        psybench.score(estimate, "motion/barberpole", params={"radius": 2}, config=cfg, stimuli=tmp_path,
                       progress=False)


@pytest.mark.parametrize("benchmark,error,message", [
    ("vision", ValueError, r"benchmark 'vision': unknown track 'vision'; tracks: \['motion', 'attention'"),
    ("motion/barber", ValueError, r"unknown motion experiment 'barber'; known: \['barberpole'"),
    ("attention/heatmaps", ValueError, r"unknown attention experiment 'heatmaps'; known: \['table1'"),
])
def test_bad_benchmarks_are_named(benchmark, error, message):
    with pytest.raises(error, match=message):
        psybench.score("horn_schunck", benchmark)


def test_parse_benchmark_and_config_overrides(harness):
    assert parse_benchmark("motion") == ("motion", None)
    assert parse_benchmark("intphys/O2") == ("intphys", "O2")
    cfg = score_config(harness.tiny_config(), {"motion": {"directions_deg": [0, 15]}})
    assert cfg["motion"]["directions_deg"] == [0, 15] and cfg["motion"]["gratings"]["diameters_deg"] == [2, 6, 12]
    assert cfg["motion"]["readout"]["lambda_ms"] > 0  # schema default filled
    with pytest.raises(ConfigError, match=r"motion\.directions_deg"):
        score_config(harness.tiny_config(), {"motion": {"directions_deg": "east"}})


def test_score_reports_each_stage_with_the_time_left():
    """psybench.score counts its stages through the house progress helper (psybench.progress)."""
    from psybench.api import _Steps

    steps = _Steps("job", enabled=True)
    out = io.StringIO()
    steps.start(total=4)
    steps.bar.stream, steps.bar.clock, steps.bar.t0 = out, lambda: 10.0, 0.0  # the first stage took 10 s
    steps.step("a")
    assert out.getvalue() == "job: 1/4 (25 %), 10 s elapsed, about 30 s left [a]\n"
    silent = _Steps("job", enabled=False)
    silent.start(total=2)
    silent.step("a")
    assert silent.bar.lines and silent.bar.stream is None


INTPHYS = {"tracks": ["intphys"], "intphys": {
    "generator": {"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 4, "height": 16, "width": 16,
                  "n_frames": 8},
    "shard_size": 40, "n_boot": 20}}


def _overall(rows: pd.DataFrame, metric: str, experiment: str = "all/all/all/all") -> float:
    (value,) = rows.loc[(rows["experiment"] == experiment) & (rows["metric"] == metric), "value"]
    return float(value)


def test_intphys_constant_model_gives_the_tie_values():
    """P = 0.5 for every movie: L_R = L_A = 0.5 by the tie rule, L_R_strict 0 (Riochet et al. 2018, sec. 3.2)."""
    rows = psybench.score("constant", "intphys", overrides=INTPHYS, progress=False)
    assert set(rows["track"]) == {"intphys"} and set(rows["model"]) == {"constant"}
    assert _overall(rows, "L_R") == 0.5 and _overall(rows, "L_A") == 0.5 and _overall(rows, "L_R_strict") == 0.0
    assert list(rows.columns) == list(SCORE_COLUMNS)


def test_intphys_user_function_with_ordinary_parameter_one_block(tmp_path):
    """A user's plausibility function (ordinary keyword parameter) through the intphys stages, block O1 only."""

    def plausibility(observation, scale=10.0):
        depth = np.asarray(observation.depth, dtype=np.float64)
        jump = np.abs(np.diff(depth, axis=1)).mean(axis=(2, 3)).max(axis=1)
        return pd.Series(np.exp(-jump / scale), index=list(observation.movies))

    rows = psybench.score(plausibility, "intphys/O1", params={"scale": 50.0}, overrides=INTPHYS,
                          workdir=tmp_path, progress=False)
    assert rows["experiment"].str.startswith("O1/").all() and len(rows)
    answer = tmp_path / "plausibility" / "answer.txt"  # the submission file, kept in workdir
    assert len(answer.read_text().splitlines()) == 4 * 18  # one line per movie: 18 quadruplets of block O1
    assert 0.0 <= _overall(rows, "L_R", "O1/all/all/all") <= 1.0


def test_progress_false_prints_nothing_and_rows_carry_the_name_and_parameters(harness, capfd):
    """``progress=False`` silences the stages and the loops inside them (the motion responses' own
    progress too); the rows name the model as given and hash its non-default parameters."""

    def estimate(frame0, frame1, radius=3):
        return np.zeros(np.shape(frame0) + (2,), np.float32)

    capfd.readouterr()
    rows = psybench.score(estimate, "motion/barberpole", params={"radius": 5}, name="myflow",
                          config=harness.tiny_config(), progress=False)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert set(rows["model"]) == {"myflow"} and len(rows) == 2  # error, passed
    assert set(rows["params_hash"]) == {params_hash({"radius": 5})}


def test_a_config_entry_is_scored_by_its_name_with_its_parameters(harness):
    """A name from the config's models list runs that entry (its algorithm and parameters)."""
    cfg = harness.tiny_config()
    cfg["motion"]["models"] = [{"name": "fb_wide", "algorithm": "farneback", "params": {"winsize": 21}}]
    rows = psybench.score("fb_wide", "motion/barberpole", config=cfg, progress=False)
    assert set(rows["model"]) == {"fb_wide"}
    defaults = get_algorithm("farneback", track="motion").defaults
    assert set(rows["params_hash"]) == {params_hash({**defaults, "winsize": 21})}
    with pytest.raises(ModelError, match="fb_narrow"):
        psybench.score("fb_narrow", "motion/barberpole", config=cfg, progress=False)


def test_default_parameters_leave_params_hash_empty_as_the_workflow_does():
    from psybench.api import _label_parameters
    from psybench.registry import resolve_model

    rows = pd.DataFrame({"model": ["hs", "hs"], "params_hash": ["", ""]})
    default = resolve_model({"name": "hs", "algorithm": "horn_schunck"}, track="motion")
    assert list(_label_parameters(rows.copy(), default)["params_hash"]) == ["", ""]
    tuned = resolve_model({"name": "hs", "algorithm": "horn_schunck", "params": {"alpha": 0.5}}, track="motion")
    assert list(_label_parameters(rows.copy(), tuned)["params_hash"]) == [params_hash(dict(tuned.params))] * 2
    settings = pd.DataFrame({"model": ["hs", "hs L=1 tuned"], "params_hash": [params_hash({"L": 1}), ""]})
    assert _label_parameters(settings.copy(), tuned).equals(settings)  # attention: the column holds L already
    assert params_hash(dict(tuned.params)) != params_hash(dict(default.params))
