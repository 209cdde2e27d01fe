# Intuitive-physics track (IntPhys, Riochet et al. 2018): generate or read an IntPhys
# tree, ingest it in shards of movies, train the streamed next-frame predictor, run
# the plausibility models shard by shard and score them (L_R, L_R_strict, L_A +
# answer.txt). Shards are enumerated from config (generator sizes, or a directory
# listing of the real tree at parse time), never from checkpoints.
import functools

from psybench.config import ConfigError, track_models
from psybench.intphys.models import TRAINED_ALGORITHMS
from psybench.intphys.shards import count_movies, shard_ids
from psybench.provenance import code_hash

# input and params functions

INTPHYS = config["intphys"]
INTPHYS_ROOT = str(INTPHYS["data_root"])
# {name: ModelSpec}; a config in another shape fails here, before any job, naming intphys.models
INTPHYS_MODELS = track_models(config, "intphys")
INTPHYS_EXTERNAL = list(INTPHYS["external_answers"])
if set(INTPHYS_MODELS) & set(INTPHYS_EXTERNAL):
    raise ConfigError(
        f"config key intphys.external_answers: names {sorted(set(INTPHYS_MODELS) & set(INTPHYS_EXTERNAL))} "
        "clash with intphys.models"
    )

# Snakemake does not see edits to imported library modules: each rule carries a code hash.
INTPHYS_CODE = {
    "generate": code_hash(["psybench.intphys.generate"]),
    "ingest": code_hash(["psybench.intphys.ingest", "psybench.io"]),
    "train": code_hash(["psybench.intphys.models.nextframe", "psybench.intphys.models.observation", "psybench.io"]),
    "scores": code_hash(
        ["psybench.intphys.scores", "psybench.intphys.metrics", "psybench.intphys.answer", "psybench.io"]
    ),
}


def intphys_model_names():
    """Configured models, then external answers, in config order."""
    return list(INTPHYS_MODELS) + INTPHYS_EXTERNAL


@functools.cache
def intphys_shards(split):
    generator = INTPHYS["generator"] if INTPHYS["generate"] else None
    return shard_ids(count_movies(INTPHYS_ROOT, split, generator=generator), INTPHYS["shard_size"])


def intphys_shard_tables(wildcards):
    return expand("results/intphys/stores/{split}/shard_{shard}.csv", split=wildcards.split,
                  shard=intphys_shards(wildcards.split))


def intphys_train_stores(wildcards):
    split = INTPHYS["train_split"]
    return expand("results/intphys/stores/{split}/shard_{shard}.zarr", split=split, shard=intphys_shards(split))


def intphys_model_entry(wildcards):
    """The model's config entry ``{name, algorithm | callable, params}`` (resolved again by the job)."""
    return next(dict(m) for m in INTPHYS["models"] if m["name"] == wildcards.model)


def intphys_model_code(wildcards):
    model_module = INTPHYS_MODELS[wildcards.model].algorithm.function.__module__
    return code_hash(["psybench.intphys.models", "psybench.registry", "psybench.io", model_module])


def intphys_predict_input(wildcards):
    split = INTPHYS["eval_split"]
    inputs = {
        "store": f"results/intphys/stores/{split}/shard_{wildcards.shard}.zarr",
        "table": f"results/intphys/stores/{split}/shard_{wildcards.shard}.csv",
    }
    spec = INTPHYS_MODELS[wildcards.model]
    if spec.algorithm.source == "builtin" and spec.algorithm.name in TRAINED_ALGORITHMS:
        inputs["weights"] = "results/intphys/train/nextframe.npz"
    return inputs


def intphys_score_input(wildcards):
    split = INTPHYS["eval_split"]
    inputs = {"metadata": f"results/intphys/metadata/{split}.csv"}
    if wildcards.model in INTPHYS_EXTERNAL:
        inputs["answer"] = INTPHYS["external_answers"][wildcards.model]
    else:
        inputs["predictions"] = expand("results/intphys/{model}/predictions/shard_{shard}.csv",
                                       model=wildcards.model, shard=intphys_shards(split))
    return inputs


def intphys_targets():
    """Final targets: scores.csv and answer.txt of every model and external answer."""
    return expand("results/intphys/{model}/{file}", model=intphys_model_names(), file=["scores.csv", "answer.txt"])


wildcard_constraints:
    split="train|dev|test",
    shard=r"\d{4}",


if INTPHYS["generate"]:

    rule intphys_generate:
        output:
            directory(f"{INTPHYS_ROOT}/{{split}}"),
        log:
            "logs/intphys/generate/{split}.log",
        params:
            generator=INTPHYS["generator"],
            code=INTPHYS_CODE["generate"],
        threads: 1
        conda:
            "../envs/psybench.yaml"
        script:
            "../scripts/intphys_generate.py"


rule intphys_ingest:
    input:
        tree=f"{INTPHYS_ROOT}/{{split}}",
    output:
        store=directory("results/intphys/stores/{split}/shard_{shard}.zarr"),
        table="results/intphys/stores/{split}/shard_{shard}.csv",
        parquet="results/intphys/stores/{split}/shard_{shard}.parquet",
    log:
        "logs/intphys/ingest/{split}_{shard}.log",
    params:
        shard_size=INTPHYS["shard_size"],
        code=INTPHYS_CODE["ingest"],
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_ingest.py"


rule intphys_metadata:
    input:
        tables=intphys_shard_tables,
    output:
        table="results/intphys/metadata/{split}.csv",
        parquet="results/intphys/metadata/{split}.parquet",
    log:
        "logs/intphys/metadata/{split}.log",
    params:
        code=INTPHYS_CODE["ingest"],
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_metadata.py"


rule intphys_train:
    input:
        stores=intphys_train_stores,
    output:
        weights="results/intphys/train/nextframe.npz",
    log:
        "logs/intphys/train/nextframe.log",
    params:
        train=INTPHYS["train"],
        code=INTPHYS_CODE["train"],
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_train.py"


rule intphys_predict:
    input:
        unpack(intphys_predict_input),
    output:
        predictions="results/intphys/{model}/predictions/shard_{shard}.csv",
    log:
        "logs/intphys/predict/{model}_{shard}.log",
    params:
        model=intphys_model_entry,
        code=intphys_model_code,
    wildcard_constraints:
        model="|".join(INTPHYS_MODELS) or "^$",
    threads: 1
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_predict.py"


rule intphys_score:
    input:
        unpack(intphys_score_input),
    output:
        scores="results/intphys/{model}/scores.csv",
        parquet="results/intphys/{model}/scores.parquet",
        answer="results/intphys/{model}/answer.txt",
    log:
        "logs/intphys/score/{model}.log",
    params:
        n_boot=INTPHYS["n_boot"],
        seed=INTPHYS["seed"],
        code=INTPHYS_CODE["scores"],
    wildcard_constraints:
        model="|".join(intphys_model_names()) or "^$",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_score.py"


rule intphys_all:
    input:
        intphys_targets(),
