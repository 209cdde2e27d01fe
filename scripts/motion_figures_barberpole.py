"""Snakemake script: perceived barber-pole direction of every model against aspect ratio."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import figures_barberpole  # noqa: E402

figures_barberpole(snakemake.input.scores, snakemake.output[0])  # noqa: F821
