"""Snakemake script: render one motion stimulus into its store (psybench.motion.stimuli)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.stimuli import write_stimulus  # noqa: E402

write_stimulus(
    snakemake.params.name,  # noqa: F821
    snakemake.params.spec,  # noqa: F821
    snakemake.params.display,  # noqa: F821  (the display config section)
    snakemake.output.store,  # noqa: F821
    code_hash=snakemake.params.code_hash,  # noqa: F821
)
