"""Snakemake script of rule attention_features: base maps of one movie for one saliency model."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads
os.environ.setdefault("OMP_NUM_THREADS", "1")

from psybench.attention.features import write_feature_store  # noqa: E402

write_feature_store(snakemake.input.stimulus, snakemake.output.store,  # noqa: F821
                    model=snakemake.params.family, chunk_frames=snakemake.params.chunk_frames,  # noqa: F821
                    lags_ms=snakemake.params.lags_ms, num_workers=snakemake.threads,  # noqa: F821
                    code_hash=snakemake.params.code_hash, **snakemake.params.params)  # noqa: F821
