# Intuitive-physics track: the resolved models, code hashes and every input and
# params function of rules/intphys.smk, from config["intphys"] (validated and
# filled with the schema's defaults in rules/common.smk).
import functools

from psybench.config import ConfigError
from psybench.intphys.responses import CHECKPOINT_ALGORITHMS, TRAINED_ALGORITHMS
from psybench.intphys.train import TRAIN_DEFAULTS
from psybench.intphys.shards import count_movies, shard_ids
from psybench.io.inputs import listing_change, listing_path, quarantine_changed_tree, tree_digest
from psybench.io.rebuild import record_moved
from psybench.handoff import describe_model, job_resource, job_threads

# input and params functions

INTPHYS = config["intphys"]
INTPHYS_ROOT = str(INTPHYS["data_root"])
# A generated split is a directory output, up to date for Snakemake whatever it holds: one
# edited, truncated, removed or added since it was written (its recorded listing) is moved
# aside to results/.damaged/ with its ingested stores, and generated again with everything
# downstream (request_rebuilds, rules/common.smk). Real run only; a dry run compares
# without moving or writing, and lists the jobs.
if INTPHYS["generate"] and config["verify_stores"] == "structural" and _repair:
    LISTED_TREES.extend(f"{INTPHYS_ROOT}/{_split}" for _split in ("train", "dev", "test"))
    for _split in ("train", "dev", "test"):
        _why = quarantine_changed_tree(
            f"{INTPHYS_ROOT}/{_split}",
            f"results/.damaged/intphys-generated/{_split}",
            derived=[f"results/intphys/stores/{_split}"],
        )
        if _why:
            QUARANTINED.append(f"{INTPHYS_ROOT}/{_split}")
            record_moved("results", [f"{INTPHYS_ROOT}/{_split}"])
            logger.warning(
                f"psybench: moved the generated IntPhys split {INTPHYS_ROOT}/{_split} to "
                f"results/.damaged/intphys-generated/{_split}/ to generate it again: {_why}"
            )
elif INTPHYS["generate"] and config["verify_stores"] == "structural" and _dry_run:
    for _split in ("train", "dev", "test"):
        _tree = f"{INTPHYS_ROOT}/{_split}"
        _why = listing_change(_tree) if Path(_tree).is_dir() and listing_path(_tree).is_file() else None
        if _why:
            QUARANTINED.append(_tree)
            logger.warning(
                f"psybench: the generated IntPhys split {_tree} changed, the real run generates it again: {_why}"
            )
# {name: ModelSpec}; a config in another shape fails here, before any job, naming intphys.models
INTPHYS_MODELS = MODELS.get("intphys", {})
INTPHYS_EXTERNAL = list(INTPHYS["external_answers"])
if set(INTPHYS_MODELS) & set(INTPHYS_EXTERNAL):
    raise ConfigError(
        f"config key intphys.external_answers: names {sorted(set(INTPHYS_MODELS) & set(INTPHYS_EXTERNAL))} "
        "clash with intphys.models"
    )


# models trained one checkpoint each (rule intphys_train_model)
INTPHYS_CHECKPOINT_MODELS = [
    name
    for name, spec in INTPHYS_MODELS.items()
    if spec.algorithm.source == "builtin" and spec.algorithm.name in CHECKPOINT_ALGORITHMS
]


def intphys_model_names():
    """Configured models, then external answers, in config order."""
    return list(INTPHYS_MODELS) + INTPHYS_EXTERNAL


@functools.cache
def intphys_shards(split):
    generator = INTPHYS["generator"] if INTPHYS["generate"] else None
    return shard_ids(count_movies(INTPHYS_ROOT, split, generator=generator), INTPHYS["shard_size"])


# One prediction job per model for every shard of the evaluation split (start-up
# paid once per model, not per shard), each shard keeping its own table (named outputs).
INTPHYS_RESPONSES = (
    {
        f"shard_{shard}": f"results/intphys/responses/{{model}}/shard_{shard}.csv"
        for shard in intphys_shards(INTPHYS["eval_split"])
    }
    if "intphys" in config["tracks"] and INTPHYS_MODELS
    else {}
)


def get_intphys_tree_digest(wildcards):
    """Digest of every file (path, size, mtime_ns) of a real IntPhys split, as a param of the ingest.

    A frame or status.json changed, removed or added below the split changes it and reruns
    the ingest (the directory input alone shows only the directory's own mtime). A
    generated tree is an output of intphys_generate, tracked by Snakemake: no digest.
    """
    return "" if INTPHYS["generate"] else _intphys_tree_digest(wildcards.split)


@functools.cache
def _intphys_tree_digest(split):
    return tree_digest(f"{INTPHYS_ROOT}/{split}")


def get_intphys_shard_tables(wildcards):
    return expand(
        "results/intphys/stores/{split}/shard_{shard}.csv", split=wildcards.split, shard=intphys_shards(wildcards.split)
    )


def get_intphys_train_stores(wildcards):
    split = INTPHYS["train_split"]
    return expand("results/intphys/stores/{split}/shard_{shard}.zarr", split=split, shard=intphys_shards(split))


def get_intphys_train_tables(wildcards):
    split = INTPHYS["train_split"]
    return expand("results/intphys/stores/{split}/shard_{shard}.csv", split=split, shard=intphys_shards(split))


def get_intphys_model_description(wildcards):
    """The model's description (psybench.handoff.describe_model), rebuilt by the job."""
    return describe_model(INTPHYS_MODELS[wildcards.model])


def get_intphys_model_threads(wildcards):
    """The model entry's resources.threads (default 1): torch runs on the job's threads."""
    return job_threads([INTPHYS_MODELS[wildcards.model]], 1)


def get_intphys_model_resource(key, default):
    """A resources function: the model entry's ``resources[key]``, else the rule's ``default``."""

    def resource(wildcards):
        return job_resource([INTPHYS_MODELS[wildcards.model]], key, default)

    return resource


def get_intphys_train_params(wildcards):
    """The model entry's params: its training configuration (psybench.intphys.train.TRAIN_DEFAULTS)."""
    return {k: v for k, v in INTPHYS_MODELS[wildcards.model].params.items() if k in TRAIN_DEFAULTS}


def get_intphys_model_code(wildcards):
    model_module = INTPHYS_MODELS[wildcards.model].algorithm.function.__module__
    return get_code_hash("intphys_responses.py", modules=(model_module,))


def get_intphys_responses_input(wildcards):
    """Every shard store and table of the eval split (one job per model); weights or train split if trained."""
    split = INTPHYS["eval_split"]
    inputs = {
        "stores": expand("results/intphys/stores/{split}/shard_{shard}.zarr", split=split, shard=intphys_shards(split)),
        "tables": expand("results/intphys/stores/{split}/shard_{shard}.csv", split=split, shard=intphys_shards(split)),
    }
    spec = INTPHYS_MODELS[wildcards.model]
    if spec.algorithm.source == "builtin" and spec.algorithm.name in TRAINED_ALGORITHMS:
        inputs["weights"] = "results/intphys/train/nextframe.npz"
    if wildcards.model in INTPHYS_CHECKPOINT_MODELS:
        inputs["weights"] = f"results/intphys/train/{wildcards.model}.pt"
    if spec.train:  # a stream model fitted on the train split (possible movies only) first
        inputs["train_stores"] = get_intphys_train_stores(wildcards)
        inputs["train_tables"] = get_intphys_train_tables(wildcards)
    return inputs


def get_intphys_score_input(wildcards):
    split = INTPHYS["eval_split"]
    inputs = {"metadata": f"results/intphys/metadata/{split}.csv"}
    if wildcards.model in INTPHYS_EXTERNAL:
        inputs["answer"] = INTPHYS["external_answers"][wildcards.model]
    else:
        inputs["predictions"] = expand(
            "results/intphys/responses/{model}/shard_{shard}.csv", model=wildcards.model, shard=intphys_shards(split)
        )
    return inputs


def intphys_targets():
    """Final targets: scores.csv and answer.txt of every model and external answer."""
    return expand(
        "results/intphys/scores/{model}/{file}", model=intphys_model_names(), file=["scores.csv", "answer.txt"]
    )


def get_intphys_score_row_inputs(wildcards):
    split = config["intphys"]["eval_split"]
    return {
        "scores": expand("results/intphys/scores/{model}/scores.csv", model=intphys_model_names()),
        "answers": expand("results/intphys/scores/{model}/answer.txt", model=intphys_model_names()),
        "metadata": f"results/intphys/metadata/{split}.csv",
    }
