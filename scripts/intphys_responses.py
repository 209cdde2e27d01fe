"""Snakemake script: plausibility P(movie) of one model on every evaluation shard."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.pipeline import responses  # noqa: E402

responses(snakemake.params.model, snakemake.input.stores, snakemake.input.tables,  # noqa: F821
          list(snakemake.output), weights=snakemake.input.get("weights"),  # noqa: F821
          threads=snakemake.threads,  # noqa: F821
          train_stores=snakemake.input.get("train_stores", []),  # noqa: F821
          train_tables=snakemake.input.get("train_tables", []))  # noqa: F821
