"""Cost that grows with the work: the workflow on a small config, doubling one dimension at a time.

Four cases, each run by a fresh ``snakemake --cores 2 all`` process
from an empty ``results/`` in one copy of the workflow (motion and intphys tracks, tiny
displays). A first, unmeasured run of the base case pays the one-time costs (Numba's
compilation into the copy's cache, cold file caches), which would otherwise be counted
in whichever case ran first:

* ``base``: 11 motion stimuli (one direction), one motion model, 72 IntPhys dev movies
  (block O1, one quadruplet per condition, 96 x 96 px, 40 frames) and two IntPhys models;
* ``stimuli_x2``: the motion stimuli doubled (a second direction, 22 stimuli);
* ``models_x2``: a second motion model of the same cost (Horn-Schunck at another
  smoothness weight);
* ``movies_x2``: the IntPhys movies doubled (two quadruplets per condition).

For each case it prints the wall time and peak RSS of the run (``/usr/bin/time``'s
maximum resident set size: the largest process, Snakemake or a job), the job count,
the fixed overhead (the dry run's wall time: parsing the Snakefile and building the
DAG, which every run pays) and the job-seconds of each track (benchmark files,
:func:`psybench.io.costs.rule_costs`, and for the cached rules the lifetimes of their
script processes). Growth is linear when a doubled dimension doubles the cost of the
stages that scale with it and leaves the rest: ``FIGURE scaling_cpu_ratio_<case>`` is
the CPU seconds of the script processes of the stages the case doubles
(:data:`SCALING`; user + system time of every job process, sampled from ``/proc``)
over the base's, 2 for linear growth (less where each job's start-up is a fixed
part, which ``FIGURE scaling_<case>_startup_cpu_s`` estimates: one import of the
libraries a job loads, times the number of jobs). With base = F + W and doubled =
F + 2 W, it also prints the fixed part F and the work W of each case. CPU time, unlike wall time, hardly
depends on what else the machine runs; ``FIGURE scaling_ratio_<case>`` is the same
ratio on job wall-seconds.

Run: ``.venv/bin/python benchmarks/workflow_scaling.py [--cases base,stimuli_x2,...]``
(about 7-8 minutes with the default 3 repeats, on 2 quiet cores). Figures: ``FIGURE <name> <value> <unit>``.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workflow_walltime import CACHED_SCRIPTS, RssSampler, copy_workflow  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from conftest import TINY_CONFIG  # noqa: E402

# the test suite's tiny motion config (tests/conftest.py: every experiment family, few
# frames), plus a small IntPhys section
BASE = copy.deepcopy(TINY_CONFIG)
BASE["tracks"] = ["motion", "intphys"]
BASE["intphys"] = {
    # movies large enough (96 x 96 px, 40 frames) that their work, not each job's start-up,
    # is what the movies_x2 case doubles
    "generator": {"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 4, "height": 96, "width": 96,
                  "n_frames": 40},
    "shard_size": 100,
    "n_boot": 50,
    "models": [{"name": "constant", "algorithm": "constant", "params": {"value": 0.5}},
               {"name": "flow", "algorithm": "flow"}],
}


# the stages whose work a case doubles (rules; the cached ones by their script's name)
SCALING = {
    "stimuli_x2": ("motion_stimuli", "motion_responses", "motion_readouts", "motion_scores"),
    "models_x2": ("motion_responses", "motion_readouts", "motion_scores"),
    "movies_x2": ("intphys_generate", "intphys_ingest", "intphys_responses"),
}


def case_config(case: str) -> tuple[dict, str]:
    """The config of a case and the track whose work it doubles."""
    cfg = copy.deepcopy(BASE)
    if case == "base":
        return cfg, ""
    if case == "stimuli_x2":
        cfg["motion"]["directions_deg"] = [0, 15]
        cfg["motion"]["diamonds"]["directions_deg"] = [0, 15]
        return cfg, "motion"
    if case == "models_x2":
        cfg["motion"]["models"].append({"name": "hs_b", "algorithm": "horn_schunck", "params": {"alpha": 2.0}})
        return cfg, "motion"
    if case == "movies_x2":
        cfg["intphys"]["generator"]["per_condition"] = 2
        return cfg, "intphys"
    raise SystemExit(f"unknown case {case!r}; known: base, stimuli_x2, models_x2, movies_x2")


def rule_seconds(work: Path, sampler: RssSampler) -> dict[str, float]:
    """Job-seconds per rule: benchmark files, plus the sampled cached rules (by script)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from psybench.io.costs import rule_costs

    out: dict[str, float] = {}
    folder = work / "logs" / "benchmarks"
    if folder.is_dir():
        for row in rule_costs(folder).itertuples(index=False):
            out[row.rule] = row.wall_s
    for script, st in sampler.per_script().items():
        if script in CACHED_SCRIPTS:
            out[script] = out.get(script, 0.0) + st["sum_s"]
    return out


def script_cpu_seconds(sampler: RssSampler) -> dict[str, float]:
    """CPU seconds per script (= per rule: scripts/<rule>.py) of every job process."""
    return {script: st["cpu_s"] for script, st in sampler.per_script().items()}


def startup_cpu_s() -> float:
    """CPU seconds of one job's start-up: the interpreter and the libraries every job imports."""
    code = "import numpy, pandas, scipy.optimize, zarr, dask.array, snakemake.script"
    best = float("inf")
    for _ in range(3):
        t0 = os.times()
        subprocess.run([sys.executable, "-c", code], check=True)
        t1 = os.times()
        best = min(best, (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system))
    return best


def by_track(rules: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for rule, seconds in rules.items():
        out[rule.split("_")[0]] = out.get(rule.split("_")[0], 0.0) + seconds
    return out


def prepare(tmp: Path) -> Path:
    """One copy of the workflow that every case runs in, each with its own config and an empty ``results/``.

    A copy per case would start each with a cold Numba cache (the compiled loops live
    beside their sources) and cold file caches, and the cases would then compare these
    one-time costs, not work: the base case, run first, paid them.
    """
    work = tmp / "workflow"
    work.mkdir()
    copy_workflow(work)
    return work


def run_case(case: str, work: Path, cores: int) -> dict:
    """``snakemake --cores cores all`` on ``case``'s config in ``work``, from no results."""
    cfg, _ = case_config(case)
    for name in ("results", "logs", ".snakemake"):
        shutil.rmtree(work / name, ignore_errors=True)
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = dict(os.environ, PYTHONPATH=str(work), OMP_NUM_THREADS="1")
    snake = [sys.executable, "-m", "snakemake"]
    t0 = time.perf_counter()
    dry = subprocess.run([*snake, "-n", "all"], cwd=work, env=env, capture_output=True, text=True)
    t_dry = time.perf_counter() - t0
    if dry.returncode:
        sys.exit(f"{case}: dry run failed:\n{dry.stderr[-3000:]}")
    jobs = re.search(r"^total\s+(\d+)", dry.stdout + dry.stderr, flags=re.M)
    sampler = RssSampler(work)
    sampler.start()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB %M", *snake, "--cores", str(cores), "all"],
                              cwd=work, env=env, capture_output=True, text=True)
    finally:
        wall = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
    if proc.returncode:
        sys.exit(f"{case}: run failed:\n{proc.stderr[-3000:]}")
    rss = re.search(r"MAXRSS_KB (\d+)", proc.stderr)
    job_peak = max((st["peak_mb"] for st in sampler.per_script().values()), default=0.0)
    return {"wall_s": wall, "dry_s": t_dry, "jobs": int(jobs.group(1)) if jobs else -1,
            "peak_rss_mb": max(int(rss.group(1)) / 1024 if rss else 0.0, job_peak),
            "rules": rule_seconds(work, sampler), "cpu": script_cpu_seconds(sampler)}


def stage_seconds(per_rule: dict[str, float], rules) -> float:
    """The seconds of ``rules`` in one run's per-rule seconds."""
    return sum(per_rule.get(rule, 0.0) for rule in rules)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="base,stimuli_x2,models_x2,movies_x2")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of each case, interleaved (base, stimuli_x2, ..., base, ...); medians")
    args = ap.parse_args()
    cases = args.cases.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="psybench-scaling-"))
    runs: dict[str, list[dict]] = {case: [] for case in cases}
    startup = startup_cpu_s()
    print(f"FIGURE job_startup_cpu_s {startup:.2f} s")
    try:
        work = prepare(tmp)
        # the one-time costs, apart: Numba's compilation into the copy's cache and cold file caches
        warm = run_case("base", work, args.cores)
        print(f"warm-up (base, first run in the copy: compiles the loops) wall {warm['wall_s']:.1f} s", flush=True)
        print(f"FIGURE scaling_warmup_wall_s {warm['wall_s']:.1f} s")
        for _ in range(max(1, args.repeats)):
            for case in cases:
                runs[case].append(run_case(case, work, args.cores))
        print(f"median of {max(1, args.repeats)} interleaved runs per case")
        for case in cases:
            r = sorted(runs[case], key=lambda run: run["wall_s"])[len(runs[case]) // 2]  # the median run by wall
            r["tracks"] = by_track(r["rules"])
            tracks = ", ".join(f"{t} {s:.1f} s" for t, s in sorted(r["tracks"].items()))
            print(f"{case:11s} {r['jobs']:3d} jobs  wall {r['wall_s']:6.1f} s  fixed (dry run) {r['dry_s']:5.1f} s  "
                  f"peak RSS {r['peak_rss_mb']:5.0f} MB  job-seconds: {tracks}", flush=True)
            print(f"FIGURE scaling_{case}_wall_s {r['wall_s']:.1f} s")
            print(f"FIGURE scaling_{case}_fixed_s {r['dry_s']:.1f} s")
            print(f"FIGURE scaling_{case}_peak_rss_mb {r['peak_rss_mb']:.0f} MB")
            print(f"FIGURE scaling_{case}_jobs {r['jobs']} jobs")
            for track, seconds in sorted(r["tracks"].items()):
                print(f"FIGURE scaling_{case}_job_s_{track} {seconds:.1f} s")
            for track, seconds in sorted(by_track(r["cpu"]).items()):
                print(f"FIGURE scaling_{case}_cpu_s_{track} {seconds:.1f} s")
            print(f"FIGURE scaling_{case}_startup_cpu_s {startup * r['jobs']:.1f} s")
        if "base" in runs:
            for case in cases:
                if case not in SCALING:
                    continue
                for key, label, figure in (("cpu", "CPU seconds", "scaling_cpu_ratio"),
                                           ("rules", "job wall-seconds", "scaling_ratio")):
                    base = statistics.median(stage_seconds(run[key], SCALING[case]) for run in runs["base"])
                    got = statistics.median(stage_seconds(run[key], SCALING[case]) for run in runs[case])
                    if not base:
                        continue
                    print(f"{case}: {label} of {', '.join(SCALING[case])}: {base:.1f} s -> {got:.1f} s (medians)")
                    print(f"FIGURE {figure}_{case} {got / base:.2f} x(base; 2 = linear)")
                    if key == "cpu":
                        # linear growth: base = F + W, doubled = F + 2 W, so W = doubled - base, F = 2 base - doubled
                        print(f"{case}: = a fixed {2 * base - got:.1f} CPU s (the jobs' start-up) "
                              f"+ {got - base:.1f} CPU s per unit of work")
                        print(f"FIGURE scaling_fixed_cpu_s_{case} {2 * base - got:.1f} s")
                        print(f"FIGURE scaling_work_cpu_s_{case} {got - base:.1f} s")
        print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
