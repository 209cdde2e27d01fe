"""Snakemake script: readouts, criteria and fits of one model on every generalisation run (generalisation_runs)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.generalisation_runs import run_readouts_and_scores  # noqa: E402

out, params = snakemake.output, snakemake.params  # noqa: F821
runs = [key.removeprefix("scores_") for key in out.keys() if key.startswith("scores_")]
run_readouts_and_scores(
    {run: list(snakemake.input[run]) for run in runs},  # noqa: F821  (named by run)
    {run: out[run] for run in runs},  # one readout folder per run
    {run: out[f"scores_{run}"] for run in runs},
    {run: out[f"fits_{run}"] for run in runs},
    lambda_ms=params.lambda_ms,
    code_hash=params.readouts_code_hash,  # recorded in the readout stores, as the readouts stage did
    criteria=params.criteria,
    literature_path=snakemake.input.literature,  # noqa: F821
)
