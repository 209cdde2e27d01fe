"""Snakemake script of rule attention_evaluate: Table 1, curves and their figure."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: F821  (line-buffered: progress shows while it runs)
import logging  # noqa: E402

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads

from psybench.attention.table1 import run_evaluation  # noqa: E402

run_evaluation(snakemake.params.feature_stores, snakemake.params.gaze_tables,  # noqa: F821
               table_path=snakemake.output.table, curves_path=snakemake.output.curves,  # noqa: F821
               figure_path=snakemake.output.figure, models=snakemake.params.models,  # noqa: F821
               pairs=snakemake.params.pairs, lags_ms=snakemake.params.lags_ms,  # noqa: F821
               **snakemake.params.evaluation)  # noqa: F821
