"""Snakemake script of rule attention_features: base maps of one movie for one feature kind."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads
os.environ.setdefault("OMP_NUM_THREADS", "1")

from psybench.attention.workflow import make_features  # noqa: E402

make_features(snakemake.params.kind, snakemake.params.features, snakemake.input.stimulus,  # noqa: F821
              snakemake.output.store, chunk_frames=snakemake.params.chunk_frames,  # noqa: F821
              lags_ms=snakemake.params.lags_ms, threads=snakemake.threads,  # noqa: F821
              code_hash=snakemake.params.code)  # noqa: F821
