"""Snakemake script: merge the per-shard metadata tables of a split."""
import logging
import sys
import warnings

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.pipeline import metadata  # noqa: E402

logging.captureWarnings(True)
warnings.simplefilter("always")

metadata(list(snakemake.input.tables), snakemake.output.table,  # noqa: F821
         conditions=snakemake.params.conditions)  # noqa: F821
