"""The motion workflow's batching and cost records.

Library level: the per-rule cost table of Snakemake benchmark files
(:mod:`psybench.io.costs`) against hand-computed sums, and batched stimulus rendering
against single renders. Workflow level, on the session's completed tiny run: one
response job per model, every stimulus its own store, a benchmark file per job.
"""

from __future__ import annotations

import math

import pytest

from psybench.io.costs import COST_COLUMNS, job_costs, rule_costs

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, wall, rss, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:01\t{rss}\t300.0\t90.0\t95.0\t0.0\t1.0\t80.0\t{cpu}\n")


def test_rule_costs_sums_jobs_per_rule(tmp_path):
    _bench(tmp_path / "motion_readouts" / "hs.tsv", 2.5, 150.0, 2.0)
    _bench(tmp_path / "motion_readouts" / "fb.tsv", 1.5, 180.0, 1.25)
    _bench(tmp_path / "intphys_responses" / "m" / "0001.tsv", 7.0, 90.0, "-")
    _bench(tmp_path / "motion_table1" / "job.tsv", 0.5, "NA", 0.5)
    table = rule_costs(tmp_path)
    assert tuple(table.columns) == COST_COLUMNS
    assert list(table["rule"]) == ["intphys_responses", "motion_readouts", "motion_table1"]  # by wall s
    row = table.set_index("rule").loc["motion_readouts"]
    assert (row["jobs"], row["cpu_s"], row["wall_s"], row["max_wall_s"], row["peak_rss_mb"]) == (2, 3.25, 4.0, 2.5, 180)
    assert table.set_index("rule").loc["intphys_responses", "cpu_s"] == 0  # not measured: skipped in the sum
    assert math.isnan(table.set_index("rule").loc["motion_table1", "peak_rss_mb"])
    assert [j["job"] for j in job_costs(tmp_path)][0] == "m/0001"


def test_bad_benchmark_file_is_named(tmp_path):
    bad = tmp_path / "motion_scores" / "hs.tsv"
    bad.parent.mkdir(parents=True)
    bad.write_text("s\tcpu_time\n1.0\t1.0\n")
    with pytest.raises(ValueError, match=r"motion_scores/hs.tsv, line 1: no column\(s\) \['max_rss'\]"):
        rule_costs(tmp_path)
    bad.write_text(HEADER + "1.0\t0:00:01\tlots\t1\t1\t1\t1\t1\t1\t1\n")
    with pytest.raises(ValueError, match=r"hs.tsv, line 2: column 'max_rss' is 'lots'"):
        rule_costs(tmp_path)


def test_stimulus_batch_equals_single_renders(tmp_path):
    from psybench.motion.display import Display
    from psybench.motion.stimuli import write_stimuli, write_stimulus

    display = Display(width_px=32, height_px=32, frames_per_s=50, supersample=1)
    slow = dict(display.to_attrs(), frames_per_s=25)  # items may have their own display
    batch = [
        ["bar", {"family": "bar", "params": {"length_deg": 1.0, "duration_ms": 60.0, "speed_deg_s": 5.0}}, display],
        ["bar2", {"family": "bar", "params": {"length_deg": 2.0, "duration_ms": 80.0, "speed_deg_s": 5.0}}, slow],
    ]
    got = write_stimuli(batch, [tmp_path / "b" / "bar.zarr", tmp_path / "b" / "bar2.zarr"], code_hash="c")
    for (name, spec, disp), store in zip(batch, got):
        alone = write_stimulus(name, spec, disp, tmp_path / "a" / f"{name}.zarr", code_hash="c")
        files = sorted(f.relative_to(alone) for f in alone.rglob("*") if f.is_file())
        assert files and all((alone / f).read_bytes() == (store / f).read_bytes() for f in files)
    with pytest.raises(ValueError, match=r"stimulus 'bar' does not match its output .*bar2.zarr"):
        write_stimuli(batch[:1], [tmp_path / "c" / "bar2.zarr"])


@pytest.mark.workflow
def test_completed_run_has_one_job_per_model_and_a_cost_per_job(completed_workflow):
    from psybench.io import verify_store

    work = completed_workflow
    stimuli = sorted(p.name for p in (work / "results/motion/stimuli").glob("*.zarr"))
    responses = sorted(p.name for p in (work / "results/motion/responses/hs").glob("*.zarr"))
    assert len(stimuli) > 5 and responses == stimuli  # one batch job, one store per stimulus
    for name in responses[:2]:
        verify_store(work / "results/motion/responses/hs" / name, deep=True)
    # the batches' logs: one per job, not one per stimulus
    assert [p.name for p in (work / "logs/motion/responses/hs").iterdir()] == ["batch.log"]
    assert [p.name for p in (work / "logs/motion/stimuli").iterdir()] == ["batch.log"]
    table = rule_costs(work / "logs/benchmarks").set_index("rule")
    assert {"motion_scores", "motion_table1"} <= set(table.index)
    # the readouts stage has its own job per model, before the scores'
    assert table.loc["motion_readouts", "jobs"] == 1 and (work / "results/motion/readouts/hs").is_dir()
    assert len(list((work / "results/motion/readouts/hs").glob("*.zarr"))) == len(stimuli)
    # the lambda sensitivity is written by the scores' job
    assert "motion_lambda_sensitivity" not in table.index and table.loc["motion_scores", "jobs"] == 1
    assert (work / "results/motion/scores/lambda_sensitivity/hs.csv").is_file()
    assert (work / "results/motion/fits/lambda_sensitivity/hs.csv").is_file()
    assert table.loc["motion_scores", "jobs"] == 1 and table.loc["motion_scores", "wall_s"] > 0
    assert table.loc["motion_scores", "peak_rss_mb"] > 20  # a Python process with numpy


def test_code_hash_imports_nothing_and_hashes_the_same_files():
    """Planning hashes library code on every run: it must not import what it hashes."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    from psybench.provenance import module_files

    names = ["psybench.motion.criteria.directions", "psybench.aggregate.pareto", "psybench.motion.fits", "psybench.io"]
    for name in names:  # the files find_spec (which imports the parents) gives
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin)
        want = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        assert module_files([name]) == want, name
    code = ("import sys; from psybench.provenance import code_hash; code_hash(%r); "
            "print(sorted(m for m in ('scipy', 'pandas', 'zarr', 'psybench.motion.criteria') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code % names], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
