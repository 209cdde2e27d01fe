"""Snakemake script: one model's flow fields (one stimulus per family) and direction-error curves with their fits."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.figures import model_figures  # noqa: E402

inp, out = snakemake.input, snakemake.output  # noqa: F821
model_figures(
    inp.responses,
    inp.readouts,
    inp.fits,
    inp.scores,
    out.flow,
    out.direction_error,
    literature_path=inp.literature,
)
