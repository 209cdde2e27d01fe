"""Snakemake script of rule attention_metrics_part: the metrics rows of the pairs training on one movie."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per job: the training movies run side by side

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # its large temporaries reused, not page-faulted in again

from psybench.attention.pipeline import metrics_part  # noqa: E402

metrics_part(snakemake.params.feature_stores, snakemake.params.gaze_tables,  # noqa: F821
             models=snakemake.params.models, pairs=snakemake.params.pairs,  # noqa: F821
             out=snakemake.output.table, train=snakemake.wildcards.attention_train,  # noqa: F821
             **snakemake.params.settings)  # noqa: F821
