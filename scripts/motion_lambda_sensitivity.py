"""Snakemake script: one model's verdicts at several pursuit constants (psybench.motion.readout_dynamics)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.readout_dynamics import lambda_sensitivity_stores  # noqa: E402

lambda_sensitivity_stores(
    list(snakemake.input.readouts),  # noqa: F821
    snakemake.output.verdicts,  # noqa: F821
    snakemake.output.fits,  # noqa: F821
    criteria=snakemake.params.criteria,  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
)
