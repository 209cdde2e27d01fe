"""Snakemake script: train one future-prediction model on the train split, resuming a killed run."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
sys.stdout = sys.stderr

from psybench.intphys.pipeline import train_model  # noqa: E402

train_model(list(snakemake.input.stores), list(snakemake.input.tables),  # noqa: F821
            snakemake.output.checkpoint, params=snakemake.params.train,  # noqa: F821
            code_hash=snakemake.params.code_hash, threads=snakemake.threads,  # noqa: F821
            model=snakemake.wildcards.model)  # noqa: F821
