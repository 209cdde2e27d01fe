# Intuitive-physics track (IntPhys): generate or read an IntPhys tree, ingest it in
# shards of movies, train the streamed next-frame predictor, run the plausibility
# models shard by shard and score them (L_R, L_R_strict, L_A + answer.txt).
# Shards are enumerated from config (generator sizes, or a directory listing of
# the real tree at parse time), never from checkpoints; input functions live in
# psybench.intphys.workflow.IntPhysPlan.

from psybench.intphys.workflow import IntPhysPlan

IP = IntPhysPlan(config["intphys"])


wildcard_constraints:
    split="train|dev|test",
    shard=r"\d{4}",


if config["intphys"]["generate"]:

    rule intphys_generate:
        output:
            directory(f"{IP.root}/{{split}}"),
        log:
            "logs/intphys/generate/{split}.log",
        params:
            generator=config["intphys"]["generator"],
            code=IP.code["generate"],
        threads: 1
        conda:
            "../envs/psybench.yaml"
        script:
            "../scripts/intphys_generate.py"


rule intphys_ingest:
    input:
        tree=f"{IP.root}/{{split}}",
    output:
        store=directory("results/intphys/stores/{split}/shard_{shard}.zarr"),
        table="results/intphys/stores/{split}/shard_{shard}.csv",
        parquet="results/intphys/stores/{split}/shard_{shard}.parquet",
    log:
        "logs/intphys/ingest/{split}_{shard}.log",
    params:
        shard_size=config["intphys"]["shard_size"],
        code=IP.code["ingest"],
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_ingest.py"


rule intphys_metadata:
    input:
        tables=IP.metadata_input,
    output:
        table="results/intphys/metadata/{split}.csv",
        parquet="results/intphys/metadata/{split}.parquet",
    log:
        "logs/intphys/metadata/{split}.log",
    params:
        code=IP.code["ingest"],
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_metadata.py"


rule intphys_train:
    input:
        stores=IP.train_input,
    output:
        weights="results/intphys/train/nextframe.npz",
    log:
        "logs/intphys/train/nextframe.log",
    params:
        train=config["intphys"]["train"],
        code=IP.code["models"],
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_train.py"


rule intphys_predict:
    input:
        unpack(IP.predict_input),
    output:
        predictions="results/intphys/{model}/predictions/shard_{shard}.csv",
    log:
        "logs/intphys/predict/{model}_{shard}.log",
    params:
        kind=IP.model_kind,
        model_params=IP.model_params,
        code=IP.code["models"],
    wildcard_constraints:
        model="|".join(IP.internal) or "^$",
    threads: 1
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_predict.py"


rule intphys_score:
    input:
        unpack(IP.score_input),
    output:
        scores="results/intphys/{model}/scores.csv",
        parquet="results/intphys/{model}/scores.parquet",
        answer="results/intphys/{model}/answer.txt",
    log:
        "logs/intphys/score/{model}.log",
    params:
        n_boot=config["intphys"]["n_boot"],
        seed=config["intphys"]["seed"],
        code=IP.code["metrics"],
    wildcard_constraints:
        model="|".join(IP.internal + IP.external) or "^$",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_score.py"


rule intphys_all:
    input:
        IP.outputs(),
