"""Snakemake script: perceived barber-pole direction of every model against aspect ratio."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.figures import barberpole_figure  # noqa: E402

barberpole_figure(snakemake.input.scores, snakemake.output[0])  # noqa: F821
