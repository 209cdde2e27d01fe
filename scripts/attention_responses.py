"""Snakemake script of rule attention_responses: one saliency model's base maps of every movie."""
import os
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight the rule's own threads
os.environ.setdefault("OMP_NUM_THREADS", "1")

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # each batch's network and pooling temporaries reused, not page-faulted in again

from psybench.attention.pipeline import responses  # noqa: E402

# each store names its movie's stimulus store and file
responses(None, snakemake.params.stores,  # noqa: F821
          chunk_frames=snakemake.params.chunk_frames, lags_ms=snakemake.params.lags_ms,  # noqa: F821
          num_workers=snakemake.threads)  # noqa: F821
