"""Snakemake script of rule attention_metrics: the metrics parts of the training movies joined into one table."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.attention.pipeline import metrics  # noqa: E402

metrics(snakemake.params.parts, models=snakemake.params.models, pairs=snakemake.params.pairs,  # noqa: F821
        out=snakemake.output.table, maps=snakemake.params.maps, data=snakemake.params.data)  # noqa: F821
