"""Snakemake script: plausibility P(movie) of one model on one evaluation shard."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.models import predict_shard  # noqa: E402

predict_shard(snakemake.params.model, snakemake.input.store, snakemake.input.table,  # noqa: F821
              snakemake.output.predictions, weights=snakemake.input.get("weights"),  # noqa: F821
              threads=snakemake.threads)  # noqa: F821
