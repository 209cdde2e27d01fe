"""Snakemake script: readouts of one model on every generalisation run (generalisation_runs)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import generalisation_readouts  # noqa: E402

out = snakemake.output  # noqa: F821
generalisation_readouts(
    {run: list(snakemake.input[run]) for run in out.keys()},  # noqa: F821  (named by run)
    {run: out[run] for run in out.keys()},  # one readout folder per run
    lambda_ms=snakemake.params.lambda_ms,  # noqa: F821
    code_hash=snakemake.params.readouts_code_hash,  # noqa: F821  (recorded in the readout stores)
)
