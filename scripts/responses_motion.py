"""Snakemake script: run one motion model on one stimulus (psybench.models.run)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.models.run import run_motion_model  # noqa: E402
from psybench.registry import resolve_model  # noqa: E402

spec = resolve_model(snakemake.params.model, track="motion")  # noqa: F821
run_motion_model(
    spec,
    snakemake.input.stimulus,  # noqa: F821
    snakemake.output.store,  # noqa: F821
    code_hash=snakemake.params.code_hash,  # noqa: F821
    threads=snakemake.threads,  # noqa: F821
)
