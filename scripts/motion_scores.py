"""Snakemake script: one model's readouts, then its criteria, fits and Gaussian scores, and their lambda sensitivity."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # each frame block's temporaries reused, not page-faulted in again

from psybench.motion.scores import score_model_responses  # noqa: E402

score_model_responses(
    list(snakemake.input.responses),  # noqa: F821
    list(snakemake.output.stores),  # noqa: F821  (one readout store per response, in the same order)
    snakemake.output.scores,  # noqa: F821
    snakemake.output.fits,  # noqa: F821
    lambda_ms=snakemake.params.lambda_ms,  # noqa: F821
    readouts_code_hash=snakemake.params.readouts_code_hash,  # noqa: F821  (recorded in the readout stores)
    criteria=snakemake.params.criteria,  # noqa: F821
    literature_path=snakemake.input.literature,  # noqa: F821
    sensitivity_out=(snakemake.output.verdicts, snakemake.output.lambda_fits),  # noqa: F821
)
