"""Snakemake script: the HTML leaderboard report (results/report/index.html) and leaderboard tables.

Inputs:  scores (results/aggregate/scores_long.csv); samples (optional per-item samples CSV).
Output:  report (directory results/report); the leaderboard_<name>.csv/.parquet tables are
         written to params.table_dir (results/aggregate) and may be declared as outputs too.
Params:  leaderboards (list of {name, title, track, criteria, model, epsilon, missing,
         projections}; [] = overall + one per track), results_root, table_dir, n_boot,
         alpha, seed, max_projections.
"""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

import pandas as pd  # noqa: E402

from psybench.aggregate.table import read_scores  # noqa: E402
from psybench.report.leaderboard import build_report  # noqa: E402

inp = snakemake.input  # noqa: F821
params = snakemake.params  # noqa: F821
samples = getattr(inp, "samples", None)
if samples is not None and not isinstance(samples, str):
    samples = list(samples)[0] if len(samples) else None

tables = build_report(
    read_scores(inp.scores),
    snakemake.output.report,  # noqa: F821
    leaderboards=list(getattr(params, "leaderboards", None) or []) or None,
    # results/report -> results/; leaderboard tables go beside the declared outputs
    results_root=str(Path(snakemake.output.report).parent),  # noqa: F821
    table_dir=str(Path(snakemake.output.tables[0]).parent) if snakemake.output.tables else None,  # noqa: F821
    samples=pd.read_csv(samples) if samples else None,
    n_boot=int(getattr(params, "n_boot", 1000)),
    alpha=float(getattr(params, "alpha", 0.05)),
    seed=int(getattr(params, "seed", 0)),
    max_projections=int(getattr(params, "max_projections", 6)),
)
for name, t in tables.items():
    print(f"leaderboard {name}: {len(t)} entries, Pareto set {list(t.loc[t['pareto_optimal'], 'entry'])}",
          file=sys.stderr)
