"""Snakemake script of rule attention_control_scanpaths: the random controls' trajectories of a training movie."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # its large temporaries reused, not page-faulted in again

from psybench.attention.pipeline import controls  # noqa: E402

controls(snakemake.wildcards.attention_movie, snakemake.input.features,  # noqa: F821
         snakemake.input.gaze, out=snakemake.output.table,  # noqa: F821
         evaluation=snakemake.params.evaluation)  # noqa: F821
