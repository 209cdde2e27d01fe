"""Snakemake script of rule attention_gaze: per-frame gaze table of one movie."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.attention.workflow import make_gaze  # noqa: E402

make_gaze(snakemake.wildcards.attention_movie, snakemake.params.spec,  # noqa: F821
          snakemake.input.stimulus, snakemake.output.table)  # noqa: F821
