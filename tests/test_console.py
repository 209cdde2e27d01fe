"""psybench.console: folded job announcements, the cost-weighted time left, the report named last."""

from __future__ import annotations

import json
import logging

import pytest

from psybench.console import (
    ConsoleFormatter,
    RunClock,
    fold_files,
    fold_reason,
    job_durations,
    report_line,
    rule_costs,
)


class Clock:
    def __init__(self):
        self.t = 50.0

    def __call__(self):
        return self.t


def test_lists_are_folded_to_two_files_and_a_count():
    files = [f"results/motion/stimuli/s{i}.zarr" for i in range(11)]
    assert fold_files(files) == files[:2] + ["... 9 more"]
    assert fold_files(files[:3]) == files[:3]  # "... 1 more" would save nothing
    reason = f"Missing output files: {', '.join(files)}; Input files updated by another job: a, b, c, d"
    assert fold_reason(reason) == (f"Missing output files: {files[0]}, {files[1]}, ... 9 more; "
                                   "Input files updated by another job: a, b, ... 2 more")
    assert fold_reason("Code has changed since last execution") == "Code has changed since last execution"


def test_time_left_weights_each_job_by_its_rules_cost():
    """Two cheap jobs (1 s each) done in 2 s of a run with one dear job (8 s) left: 20 % of the cost, and
    2 s * 8 / 2 = 8 s left, where counting steps (2 of 3 in 2 s) would promise 1 s."""
    clock = Clock()
    run = RunClock({1: "cheap", 2: "cheap", 3: "dear"}, {"cheap": 1.0, "dear": 8.0}, clock=clock)
    assert run.summary() == "by job cost 0 % done, time left known after the first job"
    clock.t += 2.0
    run.finish(1)
    run.finish(2)
    run.finish(2)  # Snakemake may report a job twice: counted once
    assert run.summary() == "by job cost 20 % done, about 8 s left"
    clock.t += 8.0
    run.finish(3)
    assert run.summary() == "by job cost 100 % done"


def test_unknown_rules_cost_the_median_and_late_jobs_join_the_total():
    run = RunClock({1: "a", 2: "mystery"}, {"a": 2.0, "b": 4.0, "c": 30.0}, clock=Clock())
    assert run.cost("mystery") == 4.0 and run.total == 6.0
    run.finish(7, "c")  # a job added after the plan (a checkpoint's)
    assert run.total == 36.0 and run.done == 30.0


def _record(folder, name, rule, start, end):
    (folder / name).write_text(json.dumps({"rule": rule, "starttime": start, "endtime": end}))


def test_job_costs_are_medians_of_snakemakes_records_over_the_shipped_table(tmp_path):
    meta = tmp_path / "metadata"
    meta.mkdir()
    _record(meta, "o1", "responses", 100.0, 104.0)  # one job, two outputs: it lasts until the last one
    _record(meta, "o2", "responses", 100.0, 110.0)
    _record(meta, "o3", "responses", 200.0, 230.0)
    _record(meta, "o4", "responses", 300.0, 320.0)
    _record(meta, "o5", "scores", 10.0, 12.0)
    (meta / "broken").write_text("{not json")
    assert job_durations(meta) == {"responses": [10.0, 30.0, 20.0], "scores": [2.0]}
    shipped = tmp_path / "costs.json"
    shipped.write_text(json.dumps({"responses": 78.4, "stimuli": 144.4}))
    assert rule_costs(meta, shipped=shipped) == {"responses": 20.0, "scores": 2.0, "stimuli": 144.4}
    assert rule_costs(tmp_path / "none", shipped=shipped) == {"responses": 78.4, "stimuli": 144.4}


def test_shipped_table_covers_the_model_running_rules():
    costs = rule_costs(None)
    for rule in ("motion_stimuli", "motion_responses", "attention_responses", "attention_evaluate_part",
                 "intphys_responses", "report_leaderboard"):
        assert costs[rule] > 0, rule
    assert costs["motion_responses"] > 10 * costs["motion_table1"]


def test_formatter_folds_snakemakes_job_announcement_and_extends_the_steps_line():
    """Through Snakemake's own formatter: the 'rule x:' line stays, the lists are folded, the steps line
    gains the weighted estimate, and the record the log file gets is left whole."""
    from snakemake.logging import DefaultFormatter
    from snakemake_interface_logger_plugins.common import LogEvent

    clock = Clock()
    formatter = ConsoleFormatter(DefaultFormatter(), RunClock({4: "motion_responses", 5: "motion_table1"},
                                                              {"motion_responses": 9.0, "motion_table1": 1.0},
                                                              clock=clock))
    outputs = [f"results/motion/responses/hs/s{i}.zarr" for i in range(11)]
    info = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
    info.__dict__.update(event=LogEvent.JOB_INFO, jobid=4, rule_msg=None, rule_name="motion_responses", local=True,
                         input=[], output=outputs, log=["logs/motion/responses/hs/batch.log"], benchmark=None,
                         wildcards={"model": "hs"}, reason=f"Missing output files: {', '.join(outputs)}",
                         resources={}, priority=0, threads=1, indent=False, is_checkpoint=False)
    text = formatter.format(info)
    assert text.splitlines()[1] == "localrule motion_responses:"
    assert f"    output: {outputs[0]}, {outputs[1]}, ... 9 more" in text.splitlines()
    assert f"    reason: Missing output files: {outputs[0]}, {outputs[1]}, ... 9 more" in text.splitlines()
    assert info.output == outputs  # the record itself (also the log file's) is untouched
    clock.t += 30.0
    done = logging.LogRecord("snakemake", logging.INFO, "", 0, "Finished jobid: 4", None, None)
    done.__dict__.update(event=LogEvent.JOB_FINISHED, job_id=4)
    formatter.format(done)
    steps = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
    steps.__dict__.update(event=LogEvent.PROGRESS, done=1, total=2)
    # 30 s for 90 % of the cost: 30 * 1 / 9 = 3 s left (steps alone: 50 %, 30 s)
    assert formatter.format(steps) == "1 of 2 steps (50%) done; by job cost 90 % done, about 3 s left"
    odd = logging.LogRecord("snakemake", logging.INFO, "", 0, "Finished a group job", None, None)
    odd.__dict__.update(event=LogEvent.JOB_FINISHED, job_id=None)  # not a job id: shown as Snakemake shows it
    assert formatter.format(odd).endswith("Finished a group job") and formatter.clock.done == 9.0


def test_report_line_names_the_report_or_says_how_to_build_it(tmp_path):
    report = tmp_path / "results" / "report" / "index.html"
    assert report_line(report) == f"psybench: no report yet: `snakemake all` writes {report}"
    report.parent.mkdir(parents=True)
    report.write_text("<html></html>")
    assert report_line(report) == f"psybench: the report is {report} (open it in a browser)"


@pytest.mark.workflow
def test_a_run_folds_file_lists_estimates_by_cost_and_ends_naming_the_report(harness, completed_workflow,
                                                                             tmp_path):
    work = harness.clone(completed_workflow, tmp_path / "wf")
    proc = harness.run(work, "--cores", "1", "all")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[-1] == "psybench: the report is results/report/index.html (open it in a browser)"
    assert (work / "results/report/index.html").is_file()
    listed = [line for line in lines if line.startswith(("    input: ", "    output: "))]
    assert listed and all(line.count(", ") <= 2 for line in listed)
    assert any(line.endswith(" more") for line in listed)
    steps = [line for line in lines if " steps (" in line]
    assert steps and all("; by job cost " in line for line in steps)
    assert steps[-1].endswith("; by job cost 100 % done")
    assert "Platform:" not in proc.stderr  # the profile's quiet: [host]
