"""The workflow's console: jobs with their file lists folded, an ETA weighted by job cost, the report last.

Snakemake announces every job with its input, output and log lists and, as its
reason, the list of missing outputs: on the default run most of what it prints.
:func:`install` (called by the workflow's ``onstart`` handler, so in a real run
only: a dry run still lists every planned file) wraps the formatter of Snakemake's
console handler with :class:`ConsoleFormatter`, which

* folds each list of a job's announcement to its first :data:`KEEP_FILES` files and
  the count of the rest (the log file under ``.snakemake/log`` keeps them whole);
* appends to Snakemake's ``N of M steps (p%) done`` the share of the run's *cost*
  done and the time left, ``elapsed * (cost left) / (cost done)``: the rate
  extrapolation of :mod:`psybench.progress` with each job weighted by the
  typical duration of its rule (:func:`rule_costs`), so that a run whose first
  steps are its cheapest does not promise to end early.

:func:`report_line` is the run's last line, naming the report.

Job costs are the median wall time of a rule's jobs as Snakemake recorded them
(``starttime``/``endtime`` of each output's record in ``.snakemake/metadata``; the
rules' ``benchmark:`` files miss the model-running rules): this working
directory's records where they cover a rule, else the default run's, shipped as
``psybench/job_costs.json`` (written by ``python -m psybench.console
.snakemake/metadata``), else the median of the known rules.  Timing goes to the
console only, never into an artifact.
"""

from __future__ import annotations

import atexit
import copy
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from psybench.progress import format_duration

__all__ = ["KEEP_FILES", "COST_TABLE", "fold_files", "fold_reason", "job_durations", "rule_costs",
           "RunClock", "ConsoleFormatter", "install", "report_line", "announce_report_at_exit"]

#: Files shown of each list of a job's announcement; the rest are counted.
KEEP_FILES = 2
#: Per-rule job costs (median seconds) of the default run, :func:`job_durations` of its records.
COST_TABLE = Path(__file__).with_name("job_costs.json")
_STREAM_HANDLER = "DefaultStreamHandler"  # Snakemake's console handler (snakemake.logging)


def fold_files(files: Iterable[str], keep: int = KEEP_FILES) -> list[str]:
    """The first ``keep`` files, then ``"... N more"`` for the rest.

    >>> fold_files(["a.zarr", "b.zarr", "c.zarr", "d.zarr"])
    ['a.zarr', 'b.zarr', '... 2 more']
    """
    files = list(files)
    if len(files) <= keep + 1:
        return files
    return files[:keep] + [f"... {len(files) - keep} more"]


def fold_reason(reason: str, keep: int = KEEP_FILES) -> str:
    """Snakemake's reason with each clause's file list folded.

    >>> fold_reason("Missing output files: a, b, c, d; Code has changed since last execution")
    'Missing output files: a, b, ... 2 more; Code has changed since last execution'
    """
    clauses = []
    for clause in str(reason).split("; "):
        head, sep, files = clause.partition(": ")
        clauses.append(head + sep + ", ".join(fold_files(files.split(", "), keep)) if sep else clause)
    return "; ".join(clauses)


def job_durations(metadata: str | Path) -> dict[str, list[float]]:
    """``{rule: [seconds per job]}`` from Snakemake's records of a working directory's outputs.

    Each output of a job has a record (``.snakemake/metadata/<encoded path>``) with the
    job's ``rule``, ``starttime`` and the output's ``endtime``; a job is its rule and
    start, lasting until its last output.  Unreadable records are skipped.
    """
    ends: dict[tuple[str, float], float] = {}
    folder = Path(metadata)
    for f in sorted(folder.iterdir()) if folder.is_dir() else []:
        try:
            record = json.loads(f.read_text(encoding="utf-8"))
            key, end = (str(record["rule"]), float(record["starttime"])), float(record["endtime"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        ends[key] = max(end, ends.get(key, end))
    out: dict[str, list[float]] = {}
    for (rule, start), end in sorted(ends.items()):
        out.setdefault(rule, []).append(max(0.0, end - start))
    return out


def rule_costs(metadata: str | Path | None = None, *, shipped: str | Path | None = COST_TABLE) -> dict[str, float]:
    """Median seconds of a job of each rule: ``metadata``'s records, over the ``shipped`` table."""
    costs: dict[str, float] = {}
    if shipped is not None and Path(shipped).is_file():
        costs.update({str(k): float(v) for k, v in json.loads(Path(shipped).read_text(encoding="utf-8")).items()})
    if metadata is not None:
        costs.update({rule: statistics.median(d) for rule, d in job_durations(metadata).items() if d})
    return costs


class RunClock:
    """Cost-weighted progress of a run's jobs.

    Parameters
    ----------
    planned : mapping
        ``{jobid: rule}`` of the jobs the run will execute.
    costs : mapping
        ``{rule: seconds}``; a rule not in it costs the median of those known (1 s if none).
    clock : callable
        Seconds, monotonic; injectable for tests.
    """

    def __init__(self, planned: Mapping[int, str], costs: Mapping[str, float], *,
                 clock: Callable[[], float] = time.monotonic):
        known = [float(c) for c in costs.values() if float(c) > 0]
        self._default = statistics.median(known) if known else 1.0
        self.costs = {str(r): max(float(c), 0.0) for r, c in costs.items()}
        self.planned = {int(j): str(r) for j, r in planned.items()}
        self.total = sum(self.cost(r) for r in self.planned.values())
        self.done = 0.0
        self._finished: set[int] = set()
        self.clock, self.t0 = clock, clock()

    def cost(self, rule: str) -> float:
        """Weight of one job of ``rule``."""
        return self.costs.get(rule, self._default)

    def finish(self, jobid: int, rule: str | None = None) -> None:
        """Count job ``jobid`` done (a job not planned, e.g. after a checkpoint, joins the total)."""
        jobid = int(jobid)
        if jobid in self._finished:
            return
        self._finished.add(jobid)
        if jobid not in self.planned:
            self.planned[jobid] = rule or ""
            self.total += self.cost(self.planned[jobid])
        self.done += self.cost(self.planned[jobid])

    def summary(self) -> str:
        """``"by job cost 41 % done, about 5 min 10 s left"`` (``"..., done"`` at the end)."""
        if self.total <= 0:
            return "by job cost done"
        share = min(1.0, self.done / self.total)
        text = f"by job cost {100.0 * share:.0f} % done"
        if set(self.planned) <= self._finished:
            return text
        if self.done <= 0:
            return text + ", time left known after the first job"
        left = (self.clock() - self.t0) * (self.total - self.done) / self.done
        return text + f", about {format_duration(left)} left"


class ConsoleFormatter(logging.Formatter):
    """Snakemake's console formatter with job file lists folded and the weighted ETA (module docstring)."""

    def __init__(self, inner: logging.Formatter, clock: RunClock, *, keep: int = KEEP_FILES):
        super().__init__()
        self.inner, self.clock, self.keep = inner, clock, keep
        self._rules: dict[int, str] = {}

    def format(self, record: logging.LogRecord) -> str:
        event = str(getattr(record, "event", "") or "")
        try:
            shown = self._fold(record, event)
        except (TypeError, ValueError, AttributeError):  # a record shaped otherwise: Snakemake's own text
            shown, event = record, ""
        text = self.inner.format(shown)
        if event == "progress" and text:
            text += f"; {self.clock.summary()}"
        return text

    def _fold(self, record: logging.LogRecord, event: str) -> logging.LogRecord:
        """The record to show (a folded copy for a job's announcement); counts finished jobs."""
        if event == "job_info":
            self._rules[int(record.jobid)] = str(getattr(record, "rule_name", ""))
            record = copy.copy(record)
            for name in ("input", "output", "log"):
                if isinstance(getattr(record, name, None), list):
                    setattr(record, name, fold_files(getattr(record, name), self.keep))
            if isinstance(getattr(record, "reason", None), str):
                record.reason = fold_reason(record.reason, self.keep)
        elif event == "job_finished":
            jobid = int(record.job_id)
            self.clock.finish(jobid, self._rules.get(jobid))
        return record


def install(workflow, logger: logging.Logger, *, shipped: str | Path | None = COST_TABLE) -> ConsoleFormatter | None:
    """Wrap the formatter of Snakemake's console handler (``onstart``); None if there is none to wrap.

    ``workflow`` and ``logger`` are the Snakefile's: the DAG gives the planned jobs,
    the working directory's ``.snakemake/metadata`` the local job costs, and the
    logger's console handler (a logger plugin writing to the console has its own
    formatter, left alone) is the one wrapped.
    """
    handler = next((h for h in logger.handlers if h.name == _STREAM_HANDLER), None)
    if handler is None or handler.formatter is None or isinstance(handler.formatter, ConsoleFormatter):
        return None
    dag = workflow.dag
    jobs = list(dag.needrun_jobs())
    planned = {dag.jobid(job): job.rule.name for job in jobs}
    costs = rule_costs(Path(".snakemake") / "metadata", shipped=shipped)
    costs.update({job.rule.name: 0.0 for job in jobs if not job.output})  # targets such as `all` do no work
    formatter = ConsoleFormatter(handler.formatter, RunClock(planned, costs))
    handler.setFormatter(formatter)
    return formatter


def announce_report_at_exit(report: str | Path) -> None:
    """Print :func:`report_line` when the process ends, after Snakemake's own closing lines.

    ``report`` is the report's ``index.html`` (rule report_leaderboard's, in rules/common.smk).
    """
    atexit.register(lambda: print(report_line(report), file=sys.stderr, flush=True))


def report_line(report: str | Path) -> str:
    """The run's last line: where the report is, or that this run has not built it."""
    if Path(report).is_file():
        return f"psybench: the report is {report} (open it in a browser)"
    return f"psybench: no report yet: `snakemake all` writes {report}"


def _write_cost_table(metadata: str, out: str | Path = COST_TABLE) -> None:
    costs = {rule: round(statistics.median(d), 1) for rule, d in sorted(job_durations(metadata).items()) if d}
    Path(out).write_text(json.dumps(costs, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":  # python -m psybench.console <run>/.snakemake/metadata [out.json]
    _write_cost_table(*sys.argv[1:3])
