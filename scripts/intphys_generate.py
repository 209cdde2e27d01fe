"""Snakemake script: write one split of a generated IntPhys-format tree."""
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.pipeline import generate  # noqa: E402

generate(Path(snakemake.output[0]).parent, snakemake.wildcards.split, threads=snakemake.threads,  # noqa: F821
         **snakemake.params.generator)  # noqa: F821
