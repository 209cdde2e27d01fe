"""Snakemake script: criteria and fits of one model on every generalisation run (generalisation_runs)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import generalisation_scores  # noqa: E402

out = snakemake.output  # noqa: F821
runs = [key.removeprefix("scores_") for key in out.keys() if key.startswith("scores_")]
generalisation_scores(
    {run: snakemake.input[run] for run in runs},  # noqa: F821  (one readout folder per run)
    {run: out[f"scores_{run}"] for run in runs},
    {run: out[f"fits_{run}"] for run in runs},
    criteria=snakemake.params.criteria,  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
)
