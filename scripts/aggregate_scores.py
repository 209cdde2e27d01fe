"""Snakemake script: every track's score rows -> results/aggregate/scores_long.csv + .parquet.

Only concatenates (and checks that no score key appears twice); each track wrote its
own rows (rules motion_score_rows, attention_score_rows, intphys_score_rows); adds the
readable ``algorithm`` and ``setting`` columns (psybench.aggregate.labels.annotate).
"""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.table import write_scores  # noqa: E402

long_df = write_scores(
    list(snakemake.input.tables),  # noqa: F821
    snakemake.output.table,  # noqa: F821
    algorithms=dict(snakemake.params.algorithms),  # noqa: F821
    settings=dict(snakemake.params.settings),  # noqa: F821
)
print(f"collected {len(long_df)} scores from tracks {sorted(set(long_df['track']))}", file=sys.stderr)
