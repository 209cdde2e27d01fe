"""Per-job start-up: the CPU seconds each workflow script's imports cost in a fresh process.

Toward the 5-minute target of the default run. Snakemake starts one Python process per
job (``script:``); before any work,
each job pays the interpreter, Snakemake's script preamble (unpickling the
``snakemake`` object: ``snakemake.io``, ``snakemake.logging``) and the module-level
imports of its ``scripts/<rule>.py``. For every script, this benchmark runs those
import statements (read with :mod:`ast`, so exactly the script's own) in a fresh
``python -c`` and takes the median over ``--repeats`` runs of the child's CPU seconds
(user + system, which hardly depend on what else the machine runs). References
measured in the same run, the same way: the bare interpreter (``pass``), ``import
numpy`` and the preamble's imports. Libraries a job imports later, inside the
functions that do its work, are not counted here: they are part of its work.

The default run's sum: each rule's job count, from a dry run of the default config
(``snakemake -n --forceall``, its "Job stats" table), times the import CPU of the
rule's script (``rules/*.smk``: ``script:``).

Run: ``.venv/bin/python benchmarks/job_startup.py [--repeats 3]`` (about 2 minutes).
Figures: ``FIGURE import_cpu_s_<script> <s> s`` and ``..._vs_numpy`` ratios,
``FIGURE default_run_import_cpu_s``, ``FIGURE default_run_jobs``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what the preamble of every script job imports (snakemake.script.PythonScript.generate_preamble)
PREAMBLE = "\n".join(["import pickle, snakemake.io", "from snakemake.logging import logger",
                      "from snakemake.iocontainers import Snakemake"])


def script_imports(path: Path) -> str:
    """The module-level import statements of a script, as source (``from __future__`` left out)."""
    tree = ast.parse(path.read_text())
    nodes = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
             and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    return "\n".join(ast.unparse(n) for n in nodes)


def cpu_s(code: str, repeats: int) -> float:
    """Median CPU seconds (user + system) of ``python -c code`` in a fresh process."""
    runs = []
    for _ in range(repeats):
        t0 = os.times()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        t1 = os.times()
        runs.append((t1.children_user - t0.children_user) + (t1.children_system - t0.children_system))
    return statistics.median(runs)


def rule_scripts() -> dict[str, str]:
    """Each rule of ``rules/*.smk`` that ends in ``script:``, with its script's name."""
    out = {}
    for smk in sorted((ROOT / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=\s*rule \w+:)", smk.read_text()):
            rule = re.match(r"\s*rule (\w+):", block)
            script = re.search(r'script:\s*"[^"]*/(\w+)\.py"', block)
            if rule and script:
                out[rule.group(1)] = script.group(1)
    return out


def default_run_jobs() -> dict[str, int]:
    """Jobs per rule of the default run (a dry run of config/config.yaml with every job forced)."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores", "2", "all"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    table = proc.stdout.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per measurement (median)")
    args = parser.parse_args()

    python = cpu_s("pass", args.repeats)
    numpy = cpu_s("import numpy", args.repeats)
    preamble = cpu_s(PREAMBLE, args.repeats)
    print(f"FIGURE startup_cpu_s_interpreter {python:.3f} s")
    print(f"FIGURE startup_cpu_s_numpy {numpy:.3f} s")
    print(f"FIGURE startup_cpu_s_snakemake_preamble {preamble:.3f} s")
    per_script = {}
    for path in sorted((ROOT / "scripts").glob("*.py")):
        per_script[path.stem] = seconds = cpu_s(script_imports(path), args.repeats)
        print(f"FIGURE import_cpu_s_{path.stem} {seconds:.3f} s")
        print(f"FIGURE import_cpu_vs_numpy_{path.stem} {seconds / numpy:.2f} x")

    jobs = default_run_jobs()
    scripts = rule_scripts()
    counted = {rule: n for rule, n in jobs.items() if rule in scripts}
    total = sum(n * per_script[scripts[rule]] for rule, n in counted.items())
    print("default run: rule, jobs, import CPU s per job, all jobs")
    for rule, n in sorted(counted.items(), key=lambda kv: -kv[1] * per_script[scripts[kv[0]]]):
        print(f"  {rule:34s} {n:3d}  {per_script[scripts[rule]]:6.3f}  {n * per_script[scripts[rule]]:7.2f}")
    print(f"FIGURE default_run_jobs {sum(counted.values())} jobs")
    print(f"FIGURE default_run_import_cpu_s {total:.1f} s")
    print(f"FIGURE default_run_startup_cpu_s {total + sum(counted.values()) * (preamble - python):.1f} s")
    print(f"FIGURE default_run_import_vs_numpy {total / (numpy * sum(counted.values())):.2f} x")


if __name__ == "__main__":
    main()
