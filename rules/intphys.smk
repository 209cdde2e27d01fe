# Intuitive-physics track (IntPhys, Riochet et al. 2018): generate or read an IntPhys
# tree, ingest it in shards of movies, train the streamed next-frame predictor, run
# the plausibility models shard by shard and score them (L_R, L_R_strict, L_A +
# answer.txt). Shards are enumerated from config (generator sizes, or a directory
# listing of the real tree at parse time), never from checkpoints.
# Input and params functions are in intphys_common.smk (snakemake --lint wants no
# functions next to rules).


include: "intphys_common.smk"


wildcard_constraints:
    split="train|dev|test",
    shard=r"\d{4}",


if INTPHYS["generate"]:

    rule intphys_generate:
        output:
            directory(f"{INTPHYS_ROOT}/{{split}}"),
        log:
            "logs/intphys/generate/{split}.log",
        benchmark:
            "logs/benchmarks/intphys_generate/{split}.tsv"
        conda:
            "../envs/psybench.yaml"
        threads: 1
        params:
            generator=INTPHYS["generator"],
            code_hash=get_code_hash("intphys_generate.py"),
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
    benchmark:
        "logs/benchmarks/intphys_ingest/{split}/{shard}.tsv"
    conda:
        "../envs/psybench.yaml"
    # one core per shard: shards run side by side (a 2-thread job waits for both cores)
    threads: 1
    resources:
        mem_mb=2000,
    params:
        shard_size=INTPHYS["shard_size"],
        tree_digest=get_intphys_tree_digest,
        code_hash=get_code_hash("intphys_ingest.py"),
    script:
        "../scripts/intphys_ingest.py"


rule intphys_metadata:
    input:
        tables=get_intphys_shard_tables,
    output:
        table="results/intphys/metadata/{split}.csv",
        parquet="results/intphys/metadata/{split}.parquet",
    log:
        "logs/intphys/metadata/{split}.log",
    benchmark:
        "logs/benchmarks/intphys_metadata/{split}.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        conditions=INTPHYS["conditions"],
        code_hash=get_code_hash("intphys_metadata.py"),
    script:
        "../scripts/intphys_metadata.py"


rule intphys_train:
    input:
        stores=get_intphys_train_stores,
    output:
        weights="results/intphys/train/nextframe.npz",
    log:
        "logs/intphys/train/nextframe.log",
    benchmark:
        "logs/benchmarks/intphys_train/job.tsv"
    conda:
        "../envs/psybench.yaml"
    # one core by default: a 2-thread job waits for both cores, which kept this 2-s job and the
    # IntPhys predictions and scores after it to the end of the default run. The sums
    # are added in block order at any thread count (same weights); a large training set streams
    # N blocks at a time with --set-threads intphys_train=N (profiles/slurm: 4).
    threads: 1
    resources:
        mem_mb=2000,
    params:
        train=INTPHYS["train"],
        code_hash=get_code_hash("intphys_train.py"),
    script:
        "../scripts/intphys_train.py"


if INTPHYS_CHECKPOINT_MODELS:

    # One checkpoint per trained model (cnn_future, Riochet et al. 2018 "Baseline results"),
    # from the possible-only train split. A killed job leaves its last resume checkpoint
    # (results/intphys/train/{model}.pt.resume, not an output): the rerun starts from it.
    rule intphys_train_model:
        input:
            stores=get_intphys_train_stores,
            tables=get_intphys_train_tables,
        output:
            checkpoint="results/intphys/train/{model}.pt",
        log:
            "logs/intphys/train/{model}.log",
        benchmark:
            "logs/benchmarks/intphys_train_model/{model}.tsv"
        wildcard_constraints:
            model="|".join(INTPHYS_CHECKPOINT_MODELS),
        conda:
            "../envs/psybench.yaml"
        # the model entry's resources (threads, mem_mb, runtime, gpu) are its training job's own
        threads: get_intphys_model_threads
        resources:
            mem_mb=get_intphys_model_resource("mem_mb", 2000),
            runtime=get_intphys_model_resource("runtime", 60),
            gpu=get_intphys_model_resource("gpu", 0),
        params:
            train=get_intphys_train_params,
            code_hash=get_code_hash("intphys_train_model.py"),
        script:
            "../scripts/intphys_train_model.py"


if INTPHYS_RESPONSES:

    rule intphys_responses:
        input:
            unpack(get_intphys_responses_input),
        output:
            **INTPHYS_RESPONSES,
        log:
            "logs/intphys/responses/{model}.log",
        benchmark:
            "logs/benchmarks/intphys_responses/{model}.tsv"
        wildcard_constraints:
            model="|".join(INTPHYS_MODELS) or "^$",
        conda:
            "../envs/psybench.yaml"
        # a model entry's resources (threads, mem_mb, runtime, gpu) are its jobs' own
        threads: get_intphys_model_threads
        resources:
            mem_mb=get_intphys_model_resource("mem_mb", 1000),
            runtime=get_intphys_model_resource("runtime", 30),
            gpu=get_intphys_model_resource("gpu", 0),
        params:
            model=get_intphys_model_description,
            code_hash=get_intphys_model_code,
        script:
            "../scripts/intphys_responses.py"


rule intphys_scores:
    input:
        unpack(get_intphys_score_input),
    output:
        scores=report(
            "results/intphys/scores/{model}/scores.csv",
            caption="../report/intphys_scores.rst",
            category="IntPhys",
            subcategory="{model}",
        ),
        parquet="results/intphys/scores/{model}/scores.parquet",
        answer="results/intphys/scores/{model}/answer.txt",
    log:
        "logs/intphys/scores/{model}.log",
    benchmark:
        "logs/benchmarks/intphys_scores/{model}.tsv"
    wildcard_constraints:
        model="|".join(intphys_model_names()) or "^$",
    conda:
        "../envs/psybench.yaml"
    params:
        n_boot=INTPHYS["n_boot"],
        min_ci=INTPHYS["min_quadruplets_ci"],
        seed=INTPHYS["seed"],
        code_hash=get_code_hash("intphys_scores.py"),
    script:
        "../scripts/intphys_scores.py"


rule intphys_all:
    input:
        intphys_targets(),


rule intphys_score_rows:
    input:
        unpack(get_intphys_score_row_inputs),
    output:
        table="results/aggregate/scores_intphys.csv",
        parquet="results/aggregate/scores_intphys.parquet",
        samples="results/aggregate/samples_intphys.csv",
        samples_parquet="results/aggregate/samples_intphys.parquet",
    log:
        "logs/intphys/score_rows.log",
    benchmark:
        "logs/benchmarks/intphys_score_rows/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        results_root=get_results_root,
        code_hash=get_code_hash("intphys_score_rows.py"),
    script:
        "../scripts/intphys_score_rows.py"
