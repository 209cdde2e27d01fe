"""Snakemake script of rule attention_evaluate: Table 1, curves and their figure."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: F821  (line-buffered: progress shows while it runs)
import logging  # noqa: E402

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads

from psybench.attention.workflow import make_table1  # noqa: E402

make_table1(list(snakemake.input.features), [tuple(k) for k in snakemake.params.feature_keys],  # noqa: F821
            list(snakemake.input.gaze), snakemake.params.movies,  # noqa: F821
            table=snakemake.output.table, curves=snakemake.output.curves,  # noqa: F821
            figure=snakemake.output.figure, cfg=snakemake.params.cfg)  # noqa: F821
