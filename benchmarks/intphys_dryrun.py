"""Dry-run planning time of the IntPhys rules on a 15k-movie training tree (skeleton).

Usage: python benchmarks/intphys_dryrun.py [--n-train 15000] [--shard-size 50]

Writes a directory skeleton (movie directories + status.json, no frames) of
``n_train`` training movies and a full dev set, points a temporary workflow that
includes rules/intphys.smk at it (``generate: false``: shards come from listing
the tree at parse time), and times ``python -m snakemake -n`` (target < 30 s).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=15000)
    ap.add_argument("--shard-size", type=int, default=50)
    args = ap.parse_args(argv)
    from psybench.intphys.generate import generate_intphys
    from psybench.intphys.ingest import list_movies

    with tempfile.TemporaryDirectory(prefix="intphys_dry_") as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        generate_intphys(tmp / "data", "train", n_train=args.n_train, skeleton=True)
        generate_intphys(tmp / "data", "dev", skeleton=True)
        print(f"skeleton of {args.n_train} train + 216 dev movies written in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        n = len(list_movies(tmp / "data", "train"))
        print(f"list_movies(train): {n} movies in {time.perf_counter() - t:.2f} s")

        (tmp / "rules").mkdir()
        for smk in ("intphys.smk", "intphys_common.smk"):
            shutil.copy(REPO / "rules" / smk, tmp / "rules")
        shutil.copytree(REPO / "scripts", tmp / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "envs", tmp / "envs")
        # the workflow's own preparation (rules/common.smk): schema defaults filled, models resolved once
        (tmp / "Snakefile").write_text('configfile: "config.yaml"\n'
                                       "from psybench.config import prepare_workflow\n"
                                       "MODELS = prepare_workflow(config)\n"
                                       "def get_results_root(wildcards, output):\n    return 'results'\n"
                                       'include: "rules/intphys.smk"\n'
                                       "rule all:\n    default_target: True\n    input: intphys_targets()\n")
        cfg = {"tracks": ["intphys"],
               "intphys": yaml.safe_load((REPO / "config" / "config.yaml").read_text())["intphys"]}
        cfg["intphys"].update(data_root="data", generate=False, shard_size=args.shard_size)
        (tmp / "config.yaml").write_text(yaml.safe_dump(cfg))
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "2"],
                           cwd=tmp, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if r.returncode:
            sys.exit(f"snakemake -n failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
        out = r.stdout + r.stderr
        counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", out, re.M)}
        print(f"snakemake -n: {dt:.1f} s for {counts.get('total')} jobs "
              f"({counts.get('intphys_ingest')} ingest shards)   (target < 30 s)")


if __name__ == "__main__":
    main()
