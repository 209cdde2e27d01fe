"""Snakemake script: criteria and fits of one model on one generalisation run (psybench.motion.scores)."""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.scores import score_model_stores  # noqa: E402

score_model_stores(
    sorted(Path(snakemake.input.readouts).glob("*.zarr")),  # noqa: F821
    snakemake.output.scores,  # noqa: F821
    snakemake.output.fits,  # noqa: F821
    criteria=snakemake.params.criteria,  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
)
