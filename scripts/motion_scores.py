"""Snakemake script: one model's criteria, fits and Gaussian scores, and their lambda sensitivity."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import scores  # noqa: E402

scores(
    list(snakemake.input.readouts),  # noqa: F821
    snakemake.output.scores,  # noqa: F821
    snakemake.output.fits,  # noqa: F821
    criteria=snakemake.params.criteria,  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
    sensitivity_out=(snakemake.output.verdicts, snakemake.output.lambda_fits),  # noqa: F821
)
