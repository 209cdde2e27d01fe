"""Snakemake script: train the next-frame predictor by streaming the training stores."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.pipeline import train  # noqa: E402

train(list(snakemake.input.stores), snakemake.output.weights,  # noqa: F821
      threads=snakemake.threads, **snakemake.params.train)  # noqa: F821
