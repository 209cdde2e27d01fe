"""Snakemake script: pursuit readouts of one model on every generalisation run (motion.generalisation_runs)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.generalisation_runs import run_readouts  # noqa: E402

run_readouts(
    {run: list(snakemake.input[run]) for run in snakemake.output.keys()},  # noqa: F821  (named by run)
    dict(snakemake.output.items()),  # noqa: F821  (one folder per run)
    lambda_ms=snakemake.params.lambda_ms,  # noqa: F821
    code_hash=snakemake.params.code_hash,  # noqa: F821
)
