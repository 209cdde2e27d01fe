"""Snakemake script: train the next-frame predictor by streaming the training stores."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.models import train_nextframe_stores  # noqa: E402

train_nextframe_stores(list(snakemake.input.stores), snakemake.output.weights,  # noqa: F821
                       threads=snakemake.threads, **snakemake.params.train)  # noqa: F821
