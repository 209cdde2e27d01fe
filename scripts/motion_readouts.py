"""Snakemake script: pursuit readouts of one model on every stimulus (psybench.motion.readouts)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.readouts import compute_readouts  # noqa: E402

compute_readouts(
    list(snakemake.input.responses),  # noqa: F821
    list(snakemake.output.stores),  # noqa: F821
    lambda_ms=snakemake.params.lambda_ms,  # noqa: F821
    code_hash=snakemake.params.code_hash,  # noqa: F821
)
