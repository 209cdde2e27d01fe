"""Snakemake script of rule attention_metrics: saliency metrics of untuned and tuned maps."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads

from psybench.attention.workflow import make_metrics  # noqa: E402

make_metrics(list(snakemake.input.features), [tuple(k) for k in snakemake.params.feature_keys],  # noqa: F821
             list(snakemake.input.gaze), snakemake.params.movies,  # noqa: F821
             out=snakemake.output.table, cfg=snakemake.params.cfg)  # noqa: F821
