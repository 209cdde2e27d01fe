"""Snakemake script: one model's pursuit readout stores, one per response store."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # each frame block's temporaries reused, not page-faulted in again

from psybench.motion.pipeline import readouts  # noqa: E402

readouts(
    list(snakemake.input.responses),  # noqa: F821
    list(snakemake.output.stores),  # noqa: F821  (one readout store per response, in the same order)
    lambda_ms=snakemake.params.lambda_ms,  # noqa: F821
    code_hash=snakemake.params.readouts_code_hash,  # noqa: F821  (recorded in the readout stores)
)
