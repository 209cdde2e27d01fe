"""Snakemake script: direction-error curves of one model with their fits."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.figures import direction_error_figure  # noqa: E402

direction_error_figure(
    snakemake.input.readouts,  # noqa: F821
    snakemake.input.fits,  # noqa: F821
    snakemake.input.scores,  # noqa: F821
    snakemake.output[0],  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
)
