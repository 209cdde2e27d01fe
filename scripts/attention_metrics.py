"""Snakemake script of rule attention_metrics: saliency metrics of untuned and tuned maps."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads

from psybench.attention.metrics import run_metrics  # noqa: E402

run_metrics(snakemake.params.feature_stores, snakemake.params.gaze_tables,  # noqa: F821
            models=snakemake.params.models, pairs=snakemake.params.pairs,  # noqa: F821
            out=snakemake.output.table, **snakemake.params.settings)  # noqa: F821
