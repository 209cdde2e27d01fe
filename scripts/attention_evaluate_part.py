"""Snakemake script of rule attention_evaluate_part: every model row's Table 1 part on one training movie."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: F821  (line-buffered: progress shows while it runs)
import logging  # noqa: E402

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per job: the training movies run side by side

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # its large temporaries reused, not page-faulted in again

from psybench.attention.pipeline import evaluate_part  # noqa: E402

evaluate_part(snakemake.params.feature_stores, snakemake.params.gaze_tables,  # noqa: F821
              scanpaths=snakemake.input.scanpaths, parts=snakemake.params.parts,  # noqa: F821
              train=snakemake.wildcards.attention_train, pairs=snakemake.params.pairs,  # noqa: F821
              lags_ms=snakemake.params.lags_ms, evaluation=snakemake.params.evaluation)  # noqa: F821
