"""Snakemake script: run one motion model on one stimulus (psybench.motion.responses)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.responses import run_motion_model  # noqa: E402

run_motion_model(
    snakemake.params.model,  # noqa: F821  (the model's description, resolved at parse time)
    snakemake.input.stimulus,  # noqa: F821
    snakemake.output.store,  # noqa: F821
    code_hash=snakemake.params.code_hash,  # noqa: F821
    threads=snakemake.threads,  # noqa: F821
)
