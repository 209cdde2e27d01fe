"""The IntPhys track's chain: each stage's function, named once, for the workflow and for ``psybench.score``.

``scripts/intphys_<stage>.py`` call these names, one per rule of ``rules/intphys.smk``,
and :func:`score` calls the same functions in the rules' order for one model in one
process (Riochet et al. 2018, sec. 3): (generate ->) ingest -> metadata -> (train, train_model ->)
responses -> scores -> score rows. Each name is loaded on first use
(:mod:`psybench._lazy`), so a job imports, and its rule's code hash covers
(:func:`psybench.provenance.rule_code_hash`), its own stage only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psybench._lazy import lazy_exports

if TYPE_CHECKING:
    import pandas as pd

    from psybench.registry import ModelSpec

#: The stages in the order the rules and :func:`score` run them: name -> ``module:function``.
STAGES = {
    "generate": "psybench.intphys.generate.tree:generate_intphys",
    "ingest": "psybench.intphys.ingest.shard:ingest_shard",
    "metadata": "psybench.intphys.ingest.shard:merge_metadata",
    "train": "psybench.intphys.models.nextframe:train_nextframe_stores",
    "train_model": "psybench.intphys.train:train_future_stores",
    "responses": "psybench.intphys.responses:predict_shards",
    "scores": "psybench.intphys.scores:score_model",
    "score_rows": "psybench.intphys.score_rows:score_rows",
}
#: Written by the score rows' job beside the rows: the per-quadruplet samples behind the tied ranks.
OTHER_STAGES = {"sample_rows": "psybench.intphys.score_rows:sample_rows"}
__all__ = ["STAGES", "OTHER_STAGES", *STAGES, *OTHER_STAGES, "score"]
__getattr__, __dir__ = lazy_exports(__name__, {**STAGES, **OTHER_STAGES})


def score(entry: Mapping[str, Any], spec: ModelSpec, cfg: Mapping[str, Any], experiment: str | None, work: Path, *,
          given_stimuli: None = None, given_gaze: None = None, threads: int = 1, progress) -> pd.DataFrame:
    """One model through :data:`STAGES`; its rows of ``results/aggregate/scores_intphys.csv``.

    ``entry`` is the model's entry, ``spec`` it resolved; ``cfg`` a validated config
    with its defaults filled; ``experiment``: a block (``"O1"``) keeps only its rows,
    None all. ``given_stimuli`` and ``given_gaze`` are not read (the stimuli are the
    tree's movies); ``progress`` (``psybench.api._Steps``) counts the stages. The tree is
    ``intphys.data_root``, or generated into ``work / "generated"`` with ``intphys.generate``.
    """
    from psybench.intphys import pipeline as stage
    from psybench.intphys.responses import CHECKPOINT_ALGORITHMS, TRAINED_ALGORITHMS
    from psybench.intphys.shards import count_movies, shard_ids

    ip = cfg["intphys"]
    builtin = spec.algorithm.source == "builtin"
    per_model = builtin and spec.algorithm.name in CHECKPOINT_ALGORITHMS
    trained = per_model or (builtin and spec.algorithm.name in TRAINED_ALGORITHMS)
    splits = [ip["eval_split"]] + ([ip["train_split"]] if trained and ip["train_split"] != ip["eval_split"] else [])
    root = work / "generated" if ip["generate"] else Path(ip["data_root"])
    generator = dict(ip["generator"]) if ip["generate"] else None
    shards = {split: shard_ids(count_movies(root, split, generator=generator), ip["shard_size"]) for split in splits}
    progress.start(total=sum(len(v) for v in shards.values()) + len(shards[ip["eval_split"]]) + 2)
    stores: dict[str, list[tuple[Path, Path]]] = {}
    for split in splits:
        if ip["generate"]:
            stage.generate(root, split, threads=threads, **generator)
        for shard in shards[split]:
            store, table = (work / "stores" / split / f"shard_{shard}.{ext}" for ext in ("zarr", "csv"))
            stage.ingest(root, split, store, table, shard=int(shard), shard_size=ip["shard_size"], threads=threads)
            stores.setdefault(split, []).append((store, table))
            progress.step(f"ingest {split} shard {shard}")
    weights = None
    if per_model:
        train = [s for s, _ in stores[ip["train_split"]]], [t for _, t in stores[ip["train_split"]]]
        weights = stage.train_model(*train, work / "train" / f"{spec.name}.pt", params=spec.params,
                                    threads=threads, model=spec.name)
    elif trained:
        weights = stage.train([s for s, _ in stores[ip["train_split"]]], work / "train" / "nextframe.npz",
                              threads=threads, **ip["train"])
    merged = work / "metadata.csv"
    stage.metadata([t for _, t in stores[ip["eval_split"]]], merged, conditions=ip["conditions"])
    progress.step("metadata")
    predictions = []
    for store, table in stores[ip["eval_split"]]:
        out = work / spec.name / "predictions" / f"{store.name.removesuffix('.zarr')}.csv"
        stage.responses(spec, [store], [table], [out], weights=weights, threads=threads)
        predictions.append(out)
        progress.step(f"{spec.name} on {out.stem}")
    score_csv = work / spec.name / "scores.csv"
    stage.scores(spec.name, merged, score_csv, work / spec.name / "answer.txt", predictions=predictions,
                 n_boot=ip["n_boot"], seed=ip["seed"], min_ci=ip["min_quadruplets_ci"])
    progress.step("scores")
    rows = stage.score_rows([score_csv], results_root=work)
    return rows if experiment is None else rows[rows["experiment"].astype(str).str.startswith(f"{experiment}/")]
