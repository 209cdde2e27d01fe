"""Snakemake script: Table 1, its Markdown rendering and the Pareto table of the motion track."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.pipeline import table1  # noqa: E402

table1(
    snakemake.input.scores,  # noqa: F821
    table_csv=snakemake.output.table,  # noqa: F821
    markdown=snakemake.output.markdown,  # noqa: F821
    pareto_csv=snakemake.output.pareto,  # noqa: F821
)
