"""Snakemake script: the motion track's Table 1 and fits -> its rows of the long score table."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.table import write_scores  # noqa: E402
from psybench.motion.pipeline import score_rows  # noqa: E402

rows = score_rows(
    snakemake.input.table1,  # noqa: F821
    fits=list(snakemake.input.fits),  # noqa: F821
    figure=snakemake.params.figure,  # noqa: F821
    results_root=snakemake.params.results_root,  # noqa: F821
)
write_scores({"track motion": rows}, snakemake.output.table)  # noqa: F821
print(f"{len(rows)} motion score rows", file=sys.stderr)
