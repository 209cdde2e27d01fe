"""Snakemake script: montage of every motion stimulus."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.figures import stimuli_montage  # noqa: E402

stimuli_montage(snakemake.input.stimuli, snakemake.output[0])  # noqa: F821
