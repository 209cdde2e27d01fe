"""Snakemake script: render a batch of motion stimuli, each into its store (psybench.motion.stimuli)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import stimuli  # noqa: E402

stimuli(
    snakemake.params.batch,  # noqa: F821  ([name, spec, display] per stimulus)
    list(snakemake.output),  # noqa: F821  (one store per stimulus, in the same order)
    code_hash=snakemake.params.code_hash,  # noqa: F821
)
