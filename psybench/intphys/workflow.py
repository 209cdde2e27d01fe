"""Plan of the IntPhys rules (rules/intphys.smk): shards and input functions from the config.

Shards are enumerated from the config, never from checkpoints: for a generated
tree from the generator's sizes (:func:`~psybench.intphys.generate.expected_movie_ids`),
for a real tree by listing it once at parse time
(:func:`~psybench.intphys.ingest.list_movies`, directory entries only).
"""

from __future__ import annotations

import math
from typing import Any

from psybench.intphys.generate import BLOCKS, expected_movie_ids
from psybench.intphys.ingest import list_movies
from psybench.provenance import code_hash

__all__ = ["IntPhysPlan"]


class IntPhysPlan:
    """Input functions and targets of the IntPhys rules for one ``config["intphys"]``."""

    def __init__(self, cfg: dict[str, Any]):
        for key in ("data_root", "generate", "shard_size", "models", "train_split", "eval_split"):
            if key not in cfg:
                raise ValueError(f"config key intphys.{key} is missing")
        if int(cfg["shard_size"]) < 1:
            raise ValueError(f"config key intphys.shard_size must be >= 1, got {cfg['shard_size']!r}")
        for name, spec in cfg["models"].items():
            if not isinstance(spec, dict) or "kind" not in spec:
                raise ValueError(f"config key intphys.models.{name} needs a 'kind'")
        self.cfg = cfg
        self.root = str(cfg["data_root"])
        self.internal = sorted(cfg["models"])
        self.external = sorted(cfg.get("external_answers") or {})
        clash = set(self.internal) & set(self.external)
        if clash:
            raise ValueError(f"config: intphys.external_answers names {sorted(clash)} clash with intphys.models")
        self.code = {
            "generate": code_hash(["psybench.intphys.generate"]),
            "ingest": code_hash(["psybench.intphys.ingest", "psybench.io"]),
            "models": code_hash(["psybench.intphys.models", "psybench.intphys.ingest", "psybench.io"]),
            "metrics": code_hash(["psybench.intphys.metrics", "psybench.io.tables"]),
        }
        self._counts: dict[str, int] = {}

    def n_movies(self, split: str) -> int:
        if split not in self._counts:
            if self.cfg["generate"]:
                g = self.cfg.get("generator") or {}
                self._counts[split] = len(expected_movie_ids(
                    split, blocks=tuple(g.get("blocks", BLOCKS)), per_condition=g.get("per_condition", 1),
                    n_train=g.get("n_train", 16)))
            else:
                self._counts[split] = len(list_movies(self.root, split))
        return self._counts[split]

    def shards(self, split: str) -> list[str]:
        return [f"{k:04d}" for k in range(math.ceil(self.n_movies(split) / int(self.cfg["shard_size"])))]

    def stores(self, split: str) -> list[str]:
        return [f"results/intphys/stores/{split}/shard_{k}.zarr" for k in self.shards(split)]

    def tables(self, split: str) -> list[str]:
        return [f"results/intphys/stores/{split}/shard_{k}.csv" for k in self.shards(split)]

    # --- input / params functions (take Snakemake wildcards)
    def metadata_input(self, wildcards) -> list[str]:
        return self.tables(wildcards.split)

    def train_input(self, wildcards) -> list[str]:
        return self.stores(self.cfg["train_split"])

    def model_kind(self, wildcards) -> str:
        return self.cfg["models"][wildcards.model]["kind"]

    def model_params(self, wildcards) -> dict:
        return self.cfg["models"][wildcards.model].get("params") or {}

    def predict_input(self, wildcards) -> dict[str, str]:
        s = self.cfg["eval_split"]
        inp = {"store": f"results/intphys/stores/{s}/shard_{wildcards.shard}.zarr",
               "table": f"results/intphys/stores/{s}/shard_{wildcards.shard}.csv"}
        if self.model_kind(wildcards) == "nextframe":
            inp["weights"] = "results/intphys/train/nextframe.npz"
        return inp

    def score_input(self, wildcards) -> dict[str, Any]:
        inp: dict[str, Any] = {"metadata": f"results/intphys/metadata/{self.cfg['eval_split']}.csv"}
        if wildcards.model in self.external:
            inp["answer"] = self.cfg["external_answers"][wildcards.model]
        else:
            inp["predictions"] = [f"results/intphys/{wildcards.model}/predictions/shard_{k}.csv"
                                  for k in self.shards(self.cfg["eval_split"])]
        return inp

    def outputs(self) -> list[str]:
        """Final targets: scores.csv and answer.txt of every model and external answer."""
        return [f"results/intphys/{m}/{f}" for m in self.internal + self.external
                for f in ("scores.csv", "answer.txt")]
