"""Snakemake script: flow fields of one model, one stimulus per family."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.figures import flow_figure  # noqa: E402

flow_figure(snakemake.input.responses, snakemake.output[0])  # noqa: F821
