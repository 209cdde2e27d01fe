"""Snakemake script: the attention track's metrics and Table 1 -> its rows of the long score table."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.table import write_scores  # noqa: E402
from psybench.attention.pipeline import score_rows  # noqa: E402

rows = score_rows(
    metrics=snakemake.input.metrics,  # noqa: F821
    table1=snakemake.input.table1,  # noqa: F821
    table1_figure=snakemake.params.table1_figure,  # noqa: F821
    results_root=snakemake.params.results_root,  # noqa: F821
)
write_scores({"track attention": rows}, snakemake.output.table)  # noqa: F821
print(f"{len(rows)} attention score rows", file=sys.stderr)
