"""Wall time of the default workflow: full run, no-op rerun, dry run.

Copies the workflow (Snakefile, rules, scripts, config, report, profiles) and the
psybench package into a temporary directory, runs ``snakemake --cores 2 all`` on
the DEFAULT config (config/config.yaml as shipped), then times the no-op rerun
(target: < 3 s) and a dry run. Figures are printed as
``FIGURE <name> <value> <unit>`` lines (benchmarks/README.md).

During the full run a sampler reads ``/proc/<pid>/status`` of every Snakemake
script process (``.snakemake/scripts/tmp*.<script>.py``) every 50 ms and keeps its
``VmHWM`` (the kernel's peak resident set size of that process, so sampling late
still sees the peak) and its lifetime; the per-rule maxima are what
profiles/slurm/config.yaml is sized from (``peak_rss_mb_<rule>``,
``max_job_s_<rule>``).

Every job of a rule without ``cache: True`` writes a Snakemake benchmark file
(``logs/benchmarks/<rule>/<wildcards>.tsv``); their per-rule table
(:func:`psybench.io.costs.rule_costs`: jobs, CPU s, wall s, peak RSS) is printed as
``FIGURE rule_<quantity>_<rule>`` lines, and the job-seconds of each track summed
(``FIGURE job_s_<track>``); the cached rules, which Snakemake gives no benchmark,
are counted from the sampler (lifetimes of their script processes).

With ``--existing DIR`` it skips the full run and times, in DIR (a completed run,
left as it is apart from Snakemake's logs and psybench's record of verified artifacts),
the no-op rerun and the dry run ``--repeats`` times each (default 3), printing the
median wall time and the median CPU time (user + system of the Snakemake process).

Run: ``.venv/bin/python benchmarks/workflow_walltime.py [--cores N] [--keep] [--configfile F]``
or ``.venv/bin/python benchmarks/workflow_walltime.py --existing DIR [--repeats 3]``
"""


from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# PSYBENCH_WORKFLOW_ROOT: measure another checkout (default: this one)
ROOT = Path(os.environ.get("PSYBENCH_WORKFLOW_ROOT") or Path(__file__).resolve().parent.parent)
COPY = ("Snakefile", "rules", "scripts", "config", "envs", "report", "profiles", "psybench")


def copy_workflow(dest: Path) -> None:
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, dest / name)


# scripts of the rules with ``cache: True`` (Snakemake allows them no benchmark file)
CACHED_SCRIPTS = ("motion_stimuli", "motion_responses", "attention_stimuli", "attention_responses")
SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^ /]*\.(\w+)\.py")


_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _cpu_s(stat: str) -> float:
    """User + system CPU seconds of a process (all its threads) from its ``/proc/<pid>/stat`` line."""
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) * _TICK_S  # utime, stime (fields 14 and 15 of proc(5))


class RssSampler(threading.Thread):
    """Peak RSS (VmHWM), lifetime and CPU time of every Snakemake script process, per script.

    The CPU time is the last value seen (every ``interval`` s) of the process's user +
    system time, all threads included: it undercounts a job by at most one interval,
    and unlike wall time it barely depends on what else the machine runs.
    """

    def __init__(self, workdir: Path, interval: float = 0.05):
        super().__init__(daemon=True)
        self.workdir = str(workdir.resolve())
        self.interval = interval
        self.stop = threading.Event()
        self.procs: dict[int, dict] = {}

    def run(self) -> None:
        first_seen: dict[int, float] = {}
        ignored: set[int] = set()  # processes known not to be job scripts
        while not self.stop.is_set():
            now = time.perf_counter()
            for name in os.listdir("/proc"):
                if not name.isdigit() or int(name) in ignored:
                    continue
                pid, d = int(name), Path("/proc") / name
                try:
                    if pid not in self.procs:
                        cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                        m = SCRIPT.search(cmd)
                        if not m or os.readlink(d / "cwd") != self.workdir \
                                or "python" not in os.path.basename(os.readlink(d / "exe")) \
                                or "timelimit.py" in cmd.split(" -- ")[0]:
                            # not a job's script process: another workflow, the shell Snakemake starts the
                            # script from (same command line), the job's watchdog (psybench/io/timelimit.py).
                            # Once it has lived a second it is not one being exec'ed: skipped from then on,
                            # so that the sampler's own cost stays small next to the run it measures
                            if now - first_seen.setdefault(pid, now) > 1.0:
                                ignored.add(pid)
                            continue
                        self.procs[pid] = {"script": m.group(1), "start": now, "hwm_kb": 0}
                    status = (d / "status").read_text()
                    cpu = _cpu_s((d / "stat").read_text())
                except (OSError, IndexError, ValueError):
                    continue
                hwm = re.search(r"VmHWM:\s+(\d+) kB", status)
                rec = self.procs[pid]
                rec["end"] = now
                rec["cpu_s"] = cpu
                if hwm:
                    rec["hwm_kb"] = max(rec["hwm_kb"], int(hwm.group(1)))
            self.stop.wait(self.interval)

    def per_script(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for rec in self.procs.values():
            s = out.setdefault(rec["script"], {"n": 0, "peak_mb": 0.0, "max_s": 0.0, "sum_s": 0.0, "cpu_s": 0.0})
            s["n"] += 1
            s["cpu_s"] += rec.get("cpu_s", 0.0)
            s["peak_mb"] = max(s["peak_mb"], rec["hwm_kb"] / 1024)
            s["max_s"] = max(s["max_s"], rec.get("end", rec["start"]) - rec["start"])
            s["sum_s"] += rec.get("end", rec["start"]) - rec["start"]
        return out


def timed_snakemake(work: Path, *args: str, check: bool = True) -> tuple[float, subprocess.CompletedProcess]:
    env = dict(os.environ, PYTHONPATH=str(work), OMP_NUM_THREADS="1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=work, env=env,
                          capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if check and proc.returncode != 0:
        sys.exit(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return dt, proc


def child_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure_existing(work: Path, cores: int, targets: list[str], repeats: int) -> None:
    """Median wall and CPU time of the no-op rerun and of the dry run in the completed run ``work``."""
    figures = {}
    for name, args in (("noop_rerun", ["--cores", str(cores), *targets]), ("dry_run", ["-n", *targets])):
        walls, cpus = [], []
        for _ in range(repeats):
            cpu0 = child_cpu_s()
            dt, proc = timed_snakemake(work, *args)
            cpus.append(child_cpu_s() - cpu0)
            walls.append(dt)
            if "Nothing to be done" not in proc.stdout + proc.stderr:
                sys.exit(f"snakemake {' '.join(args)} in {work} is not a no-op:\n" + proc.stderr[-3000:])
        figures[name] = (statistics.median(walls), statistics.median(cpus), walls)
    print(f"{work}, load average {os.getloadavg()[0]:.1f}, median of {repeats}")
    for name, (wall, cpu, walls) in figures.items():
        print(f"{name}: {wall:.2f} s wall ({', '.join(f'{w:.2f}' for w in walls)}), {cpu:.2f} s CPU")
        print(f"FIGURE {name}_s {wall:.2f} s")
        print(f"FIGURE {name}_cpu_s {cpu:.2f} s")
    print(f"FIGURE noop_vs_target {figures['noop_rerun'][0] / 3.0:.2f} x(3 s)")


def print_rules(sampler: RssSampler) -> None:
    stats = sorted(sampler.per_script().items())
    print("per rule (script): jobs, peak RSS of the largest job (VmHWM), longest job, all jobs (sampled lifetimes)")
    for script, st in stats:
        print(f"  {script:32s} {st['n']:4d} jobs  {st['peak_mb']:7.0f} MB  {st['max_s']:6.1f} s  {st['sum_s']:7.1f} s")
    for script, st in stats:
        print(f"FIGURE peak_rss_mb_{script} {st['peak_mb']:.0f} MB")
        print(f"FIGURE max_job_s_{script} {st['max_s']:.1f} s")
        print(f"FIGURE script_job_s_{script} {st['sum_s']:.1f} s")
    motion = sum(st["sum_s"] for script, st in stats if script.startswith("motion_"))
    print(f"FIGURE sampled_job_s_motion {motion:.1f} s")
    print(f"FIGURE sampled_jobs_motion {sum(st['n'] for script, st in stats if script.startswith('motion_'))} jobs")


def print_costs(work: Path, sampler: RssSampler) -> None:
    """The per-rule table of the benchmark files, the cached rules from the sampler, job-seconds per track."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's library
    from psybench.io.costs import rule_costs

    folder = work / "logs" / "benchmarks"
    table = rule_costs(folder) if folder.is_dir() else None
    track_s: dict[str, float] = {}
    print("per rule (benchmark files): jobs, CPU s, wall s (job-seconds), longest job, peak RSS")
    if table is not None:
        for row in table.itertuples(index=False):
            print(f"  {row.rule:34s} {row.jobs:4d} jobs  {row.cpu_s:8.1f} CPU s  {row.wall_s:8.1f} s  "
                  f"{row.max_wall_s:6.1f} s  {row.peak_rss_mb:7.0f} MB")
            print(f"FIGURE rule_jobs_{row.rule} {row.jobs} jobs")
            print(f"FIGURE rule_cpu_s_{row.rule} {row.cpu_s:.1f} s")
            print(f"FIGURE rule_wall_s_{row.rule} {row.wall_s:.1f} s")
            print(f"FIGURE rule_peak_rss_mb_{row.rule} {row.peak_rss_mb:.0f} MB")
            track = row.rule.split("_")[0]
            track_s[track] = track_s.get(track, 0.0) + row.wall_s
    measured = set(table["rule"]) if table is not None else set()
    # cached rules (no benchmark file): the sampled lifetimes of their script processes
    for script, st in sorted(sampler.per_script().items()):
        if script in measured or script not in CACHED_SCRIPTS:
            continue
        print(f"  {script:34s} {st['n']:4d} jobs  (cached rules, sampled)  {st['sum_s']:8.1f} s  "
              f"{st['max_s']:6.1f} s  {st['peak_mb']:7.0f} MB")
        print(f"FIGURE script_jobs_{script} {st['n']} jobs")
        print(f"FIGURE script_wall_s_{script} {st['sum_s']:.1f} s")
        track = script.split("_")[0]
        track_s[track] = track_s.get(track, 0.0) + st["sum_s"]
    for track, seconds in sorted(track_s.items()):
        print(f"FIGURE job_s_{track} {seconds:.1f} s")
    print(f"FIGURE job_s_total {sum(track_s.values()):.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the temporary workflow copy")
    ap.add_argument("--configfile", type=Path, help="replace config/config.yaml of the copy by this file")
    ap.add_argument("--existing", type=Path, metavar="DIR",
                    help="time the no-op rerun and the dry run in this completed run, without a full run")
    ap.add_argument("--repeats", type=int, default=3, help="with --existing: runs of each (median)")
    ap.add_argument("targets", nargs="*", default=["all"], help="Snakemake targets (default: all)")
    args = ap.parse_args()
    if args.existing:
        measure_existing(args.existing.resolve(), args.cores, args.targets, args.repeats)
        return
    tmp = Path(tempfile.mkdtemp(prefix="psybench-walltime-"))
    try:
        copy_workflow(tmp)
        if args.configfile:
            shutil.copy2(args.configfile, tmp / "config" / "config.yaml")
        n_jobs = None
        load_before = os.getloadavg()[0]  # what else the machine was running when the run started
        sampler = RssSampler(tmp)
        sampler.start()
        try:
            t_full, proc = timed_snakemake(tmp, "--cores", str(args.cores), *args.targets, check=False)
        finally:
            sampler.stop.set()
            sampler.join()
        if proc.returncode != 0:
            print_rules(sampler)
            print(f"FIGURE full_run_failed_after_s {t_full:.1f} s")
            sys.exit(f"snakemake {' '.join(args.targets)} failed:\n{proc.stderr[-3000:]}")
        for line in (proc.stdout + proc.stderr).splitlines():
            if line.strip().startswith("total"):
                n_jobs = int(line.split()[1])
                break
        t_noop, proc = timed_snakemake(tmp, "--cores", str(args.cores), *args.targets)
        if "Nothing to be done" not in proc.stdout + proc.stderr:
            sys.exit("the rerun after a complete run was not a no-op:\n" + proc.stderr[-3000:])
        t_dry, _ = timed_snakemake(tmp, "-n", *args.targets)
        config = args.configfile or "default config"
        print(f"{config}, load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
              f"snakemake --cores {args.cores} "
              f"{' '.join(args.targets)} in a fresh copy ({tmp})")
        print(f"full run: {t_full:.1f} s for {n_jobs} jobs; no-op rerun: {t_noop:.2f} s (target < 3 s); "
              f"dry run: {t_dry:.2f} s")
        print_rules(sampler)
        print_costs(tmp, sampler)
        print(f"FIGURE full_run_s {t_full:.1f} s")
        if n_jobs is not None:
            print(f"FIGURE jobs {n_jobs} jobs")
        print(f"FIGURE noop_rerun_s {t_noop:.2f} s")
        print(f"FIGURE dry_run_s {t_dry:.2f} s")
        print(f"FIGURE noop_vs_target {t_noop / 3.0:.2f} x(3 s)")
    finally:
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
