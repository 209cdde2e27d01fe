"""Snakemake script: one model's flow fields (one stimulus per family) and direction-error curves with their fits."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import figures_model  # noqa: E402

inp, out = snakemake.input, snakemake.output  # noqa: F821
figures_model(
    inp.responses,
    inp.readouts,
    inp.fits,
    inp.scores,
    out.flow,
    out.direction_error,
    literature_path=inp.literature,
)
