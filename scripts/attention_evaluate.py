"""Snakemake script of rule attention_evaluate: the evaluation parts joined into Table 1, curves and figure."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.attention.pipeline import evaluate  # noqa: E402

evaluate(snakemake.params.parts, models=snakemake.params.models, pairs=snakemake.params.pairs,  # noqa: F821
         table_path=snakemake.output.table, curves_path=snakemake.output.curves,  # noqa: F821
         figure_path=snakemake.output.figure, data=snakemake.params.data)  # noqa: F821
