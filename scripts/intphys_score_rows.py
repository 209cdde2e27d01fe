"""Snakemake script: the IntPhys models' scores -> their rows of the long score table, and the
per-quadruplet samples behind the tied ranks."""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.table import write_samples, write_scores  # noqa: E402
from psybench.intphys.pipeline import sample_rows, score_rows  # noqa: E402

inp = snakemake.input  # noqa: F821
rows = score_rows(list(inp.scores), results_root=snakemake.params.results_root)  # noqa: F821
write_scores({"track intphys": rows}, snakemake.output.table)  # noqa: F821
# results/intphys/scores/<model>/answer.txt: the model is the answer's folder
answers = {Path(p).parent.name: p for p in inp.answers}
samples = write_samples([sample_rows(answers, inp.metadata)] if answers else [], snakemake.output.samples)  # noqa: F821
print(f"{len(rows)} IntPhys score rows, {len(samples)} samples", file=sys.stderr)
