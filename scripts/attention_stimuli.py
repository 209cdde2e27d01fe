"""Snakemake script of rule attention_stimuli: render or ingest one movie."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.attention.pipeline import stimuli  # noqa: E402

stimuli(snakemake.wildcards.attention_movie, snakemake.params.spec, snakemake.output.store,  # noqa: F821
        grid=snakemake.params.grid)  # noqa: F821
