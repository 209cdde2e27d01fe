"""Snakemake script: per-item samples behind the tied ranks (IntPhys quadruplets)."""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

import pandas as pd  # noqa: E402

from psybench.aggregate.collect import intphys_samples  # noqa: E402
from psybench.io.tables import write_table  # noqa: E402

answers = {Path(p).parent.name: p for p in snakemake.input.get("intphys_answers", [])}  # noqa: F821
if answers:
    samples = intphys_samples(answers, snakemake.input.intphys_metadata)  # noqa: F821
else:
    samples = pd.DataFrame(columns=["model", "params_hash", "track", "experiment", "metric", "item", "value"])
write_table(samples, snakemake.output.table)  # noqa: F821
