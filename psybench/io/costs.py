"""The cost of a workflow run, per rule, from Snakemake's ``benchmark:`` files.

Every rule of the workflow that runs a job (apart from those with ``cache: True``,
which Snakemake does not let carry a benchmark) writes one benchmark file per job,
``logs/benchmarks/<rule>/<wildcards>.tsv`` (``<rule>/job.tsv`` without wildcards).
A file is Snakemake's tab-separated table with a header and one row per repeat:
``s`` (wall seconds), ``h:m:s``, ``max_rss`` (peak resident set size, MB), ``max_vms``,
``max_uss``, ``max_pss``, ``io_in``, ``io_out``, ``mean_load`` and ``cpu_time`` (user
+ system CPU seconds); a field Snakemake could not measure is ``-`` or ``NA``.

:func:`rule_costs` sums them into the per-rule table that
``benchmarks/workflow_walltime.py`` prints and the report can show.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

__all__ = ["COST_COLUMNS", "job_costs", "rule_costs"]

#: Columns of :func:`rule_costs`: jobs, summed CPU and wall seconds, peak RSS of the largest job.
COST_COLUMNS = ("rule", "jobs", "cpu_s", "wall_s", "max_wall_s", "peak_rss_mb")


def _number(value: str, path: Path, line: int, column: str) -> float:
    if value.strip() in ("", "-", "NA", "nan"):
        return math.nan
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"benchmark file {path}, line {line}: column {column!r} is {value!r}, not a number") from None


def job_costs(folder: str | os.PathLike) -> list[dict]:
    """One record per benchmark file under ``folder`` (the first, usually only, repeat).

    Parameters
    ----------
    folder : path-like
        The benchmark folder (``logs/benchmarks``); the rule is the first path part
        below it, the job the rest.

    Returns
    -------
    list of dict
        ``rule``, ``job``, ``wall_s``, ``cpu_s``, ``peak_rss_mb`` (NaN when not measured),
        sorted by rule and job.

    Raises
    ------
    ValueError
        A file without the columns ``s``, ``max_rss`` and ``cpu_time`` or without a data
        row, or a value that is not a number, naming the file and line.
    """
    folder = Path(folder)
    out = []
    for path in sorted(folder.rglob("*.tsv")):
        rel = path.relative_to(folder)
        if len(rel.parts) < 2:
            raise ValueError(f"benchmark file {path} is not under a rule's folder (<rule>/<job>.tsv)")
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh, delimiter="\t"))
        missing = [c for c in ("s", "max_rss", "cpu_time") if not rows or c not in rows[0]]
        if missing:
            raise ValueError(f"benchmark file {path}, line 1: no column(s) {missing} (not a Snakemake benchmark)")
        if len(rows) < 2:
            raise ValueError(f"benchmark file {path}: no measurement (header only)")
        col = {name: i for i, name in enumerate(rows[0])}
        first = rows[1]
        if len(first) != len(rows[0]):
            raise ValueError(f"benchmark file {path}, line 2: {len(first)} fields, header has {len(rows[0])}")
        out.append({
            "rule": rel.parts[0],
            "job": str(Path(*rel.parts[1:]).with_suffix("")),
            "wall_s": _number(first[col["s"]], path, 2, "s"),
            "cpu_s": _number(first[col["cpu_time"]], path, 2, "cpu_time"),
            "peak_rss_mb": _number(first[col["max_rss"]], path, 2, "max_rss"),
        })
    return out


def rule_costs(folder: str | os.PathLike):
    """The per-rule cost table of a run: jobs, CPU s, wall s, peak RSS.

    Parameters
    ----------
    folder : path-like
        The benchmark folder (``logs/benchmarks``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COST_COLUMNS`, one row per rule sorted by ``wall_s``
        (descending, then rule): ``cpu_s`` and ``wall_s`` summed over the rule's jobs
        (job-seconds; NaN values skipped), ``max_wall_s`` the longest job,
        ``peak_rss_mb`` the largest job's peak RSS.
    """
    import pandas as pd

    jobs = pd.DataFrame(job_costs(folder), columns=["rule", "job", "wall_s", "cpu_s", "peak_rss_mb"])
    table = jobs.groupby("rule", sort=True).agg(
        jobs=("job", "size"), cpu_s=("cpu_s", "sum"), wall_s=("wall_s", "sum"),
        max_wall_s=("wall_s", "max"), peak_rss_mb=("peak_rss_mb", "max"),
    ).reset_index()
    table = table.sort_values(["wall_s", "rule"], ascending=[False, True], kind="mergesort")
    return table.reset_index(drop=True)[list(COST_COLUMNS)]
