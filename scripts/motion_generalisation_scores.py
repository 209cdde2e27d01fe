"""Snakemake script: criteria and fits of one model on every generalisation run (motion.generalisation_runs)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.generalisation_runs import run_scores  # noqa: E402

runs = [key.removeprefix("scores_") for key in snakemake.output.keys() if key.startswith("scores_")]  # noqa: F821
run_scores(
    {run: snakemake.input[run] for run in runs},  # noqa: F821  (named by run)
    {run: snakemake.output[f"scores_{run}"] for run in runs},  # noqa: F821
    {run: snakemake.output[f"fits_{run}"] for run in runs},  # noqa: F821
    criteria=snakemake.params.criteria,  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
)
