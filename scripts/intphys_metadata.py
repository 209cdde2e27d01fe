"""Snakemake script: merge the per-shard metadata tables of a split."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.ingest import merge_metadata  # noqa: E402

merge_metadata(list(snakemake.input.tables), snakemake.output.table)  # noqa: F821
