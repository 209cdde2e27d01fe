"""Snakemake script: montage of every motion stimulus."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import figures_stimuli  # noqa: E402

figures_stimuli(snakemake.input.stimuli, snakemake.output[0])  # noqa: F821
