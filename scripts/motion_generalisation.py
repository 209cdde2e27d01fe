"""Snakemake script: the motion generalisation table (psybench.motion.generalisation)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import generalisation  # noqa: E402

generalisation(
    list(snakemake.input.main),  # noqa: F821
    dict(snakemake.params.variant_scores),  # noqa: F821
    snakemake.params.settings,  # noqa: F821  (display and motion config sections)
    snakemake.output.table,  # noqa: F821
)
