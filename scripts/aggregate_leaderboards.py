"""Snakemake script: the configured leaderboards -> leaderboard_<name>.csv (+ .parquet) and their page data.

Inputs:  scores (the long score table CSV), samples (per-item samples CSV).
Outputs: tables (leaderboard_<name>.csv, beside pages), pages (leaderboards.json).
Params:  leaderboards, n_boot, alpha, seed, max_projections.
"""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.leaderboard import compute_leaderboards, write_leaderboards  # noqa: E402
from psybench.aggregate.table import read_scores  # noqa: E402
from psybench.io.tables import read_csv_checked  # noqa: E402

inp, params, out = snakemake.input, snakemake.params, snakemake.output  # noqa: F821
boards = compute_leaderboards(
    read_scores(inp.scores),
    leaderboards=list(params.leaderboards),
    samples=read_csv_checked(inp.samples),
    n_boot=params.n_boot,
    alpha=params.alpha,
    seed=params.seed,
    max_projections=params.max_projections,
)
write_leaderboards(boards, Path(out.pages).parent, out.pages)
for b in boards:
    print(f"leaderboard {b.name}: {len(b.table)} entries, Pareto set "
          f"{list(b.table.loc[b.table['pareto_optimal'], 'entry'])}", file=sys.stderr)
