"""Snakemake script of rule attention_gaze: per-frame gaze table of one movie and its sample counts."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.attention.pipeline import gaze  # noqa: E402

gaze(snakemake.wildcards.attention_movie, snakemake.params.spec,  # noqa: F821
     snakemake.input.stimulus, snakemake.output.table,  # noqa: F821
     counts_out=snakemake.output.counts)  # noqa: F821
