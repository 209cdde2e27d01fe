"""Snakemake script: run one motion model on a batch of stimuli (psybench.motion.responses)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # each frame block's temporaries reused, not page-faulted in again

from psybench.motion.pipeline import responses  # noqa: E402

responses(
    snakemake.params.model,  # noqa: F821  (the model's description, resolved at parse time)
    list(snakemake.input.stimuli),  # noqa: F821
    list(snakemake.output),  # noqa: F821  (one store per stimulus, in the same order)
    code_hash=snakemake.params.code_hash,  # noqa: F821
    threads=snakemake.threads,  # noqa: F821
    write_population=snakemake.params.write_population,  # noqa: F821
)
