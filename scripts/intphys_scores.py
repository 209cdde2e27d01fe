"""Snakemake script: L_R / L_A table and answer.txt of one model (or an external answer.txt)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.pipeline import scores  # noqa: E402

scores(snakemake.wildcards.model, snakemake.input.metadata, snakemake.output.scores,  # noqa: F821
       snakemake.output.answer, predictions=list(snakemake.input.get("predictions", [])),  # noqa: F821
       answer=snakemake.input.get("answer") or None, n_boot=snakemake.params.n_boot,  # noqa: F821
       seed=snakemake.params.seed, min_ci=snakemake.params.min_ci)  # noqa: F821
