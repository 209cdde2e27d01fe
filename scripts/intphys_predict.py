"""Snakemake script: plausibility P(movie) of one model on one evaluation shard."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.models import predict_shard  # noqa: E402

params = dict(snakemake.params.model_params)  # noqa: F821
if snakemake.input.get("weights"):  # noqa: F821
    params["weights"] = snakemake.input.weights  # noqa: F821
predict_shard(snakemake.wildcards.model, snakemake.params.kind, snakemake.input.store,  # noqa: F821
              snakemake.input.table, snakemake.output.predictions, params=params,  # noqa: F821
              threads=snakemake.threads)  # noqa: F821
