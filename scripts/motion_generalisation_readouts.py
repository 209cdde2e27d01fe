"""Snakemake script: pursuit readouts of one model on one generalisation run (psybench.motion.readouts)."""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.readouts import compute_readouts  # noqa: E402

responses = list(snakemake.input.responses)  # noqa: F821
compute_readouts(
    responses,
    [Path(snakemake.output.stores) / Path(p).name for p in responses],  # noqa: F821  (one store per stimulus)
    lambda_ms=snakemake.params.lambda_ms,  # noqa: F821
    code_hash=snakemake.params.code_hash,  # noqa: F821
)
