"""Snakemake script: every track's per-item samples (behind the tied ranks) -> samples_long.csv + .parquet."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.table import write_samples  # noqa: E402

samples = write_samples(list(snakemake.input.tables), snakemake.output.table)  # noqa: F821
print(f"{len(samples)} samples", file=sys.stderr)
