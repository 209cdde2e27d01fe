"""Snakemake script: ingest one shard of an IntPhys split into a Zarr store + metadata table."""
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.intphys.pipeline import ingest  # noqa: E402

ingest(Path(snakemake.input.tree).parent, snakemake.wildcards.split, snakemake.output.store,  # noqa: F821
       snakemake.output.table, shard=int(snakemake.wildcards.shard),  # noqa: F821
       shard_size=snakemake.params.shard_size, threads=snakemake.threads,  # noqa: F821
       attrs={"code": snakemake.params.code_hash})  # noqa: F821
