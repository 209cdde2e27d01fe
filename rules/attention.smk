# Attention track (Shic & Scassellati 2007): stimuli -> gaze -> responses (feature maps)
# -> controls -> evaluate (Table 1) + metrics -> score rows.
# Included by the main Snakefile after rules/common.smk, which validates the config and
# fills the defaults of config/schema.yaml. Outputs under results/attention/.
# Input and params functions are in attention_common.smk (snakemake --lint wants no
# functions next to rules).


include: "attention_common.smk"


wildcard_constraints:
    attention_movie="[A-Za-z0-9_-]+",
    attention_train="[A-Za-z0-9_-]+",
    attention_map="[A-Za-z0-9_.-]+",
    attention_features="[A-Za-z0-9_.-]+",


rule attention_stimuli:
    input:
        movie=get_attention_movie_file,
    output:
        store=directory("results/attention/stimuli/{attention_movie}.zarr"),
    log:
        "logs/attention/stimuli/{attention_movie}.log",
    cache: True
    conda:
        "../envs/psybench.yaml"
    params:
        spec=get_attention_movie_spec,
        grid=ATTENTION["grid"],
        code_hash=get_code_hash("attention_stimuli.py"),
    script:
        "../scripts/attention_stimuli.py"


rule attention_gaze:
    input:
        stimulus="results/attention/stimuli/{attention_movie}.zarr",
        gaze=get_attention_gaze_files,
    output:
        table="results/attention/gaze/{attention_movie}.csv",
        parquet="results/attention/gaze/{attention_movie}.parquet",
        counts="results/attention/gaze/{attention_movie}.counts.csv",
    log:
        "logs/attention/gaze/{attention_movie}.log",
    benchmark:
        "logs/benchmarks/attention_gaze/{attention_movie}.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        spec=get_attention_movie_spec,
        code_hash=get_code_hash("attention_gaze.py"),
    script:
        "../scripts/attention_gaze.py"


# One job per feature family writes its store of every movie (each at its own path), so that a changed
# model (parameters, code, weights file) reruns its own job only. Defined only with the track on (a
# cached rule needs outputs).
if ATTENTION_ON:

    rule attention_responses:
        input:
            get_attention_responses_inputs,
        output:
            **ATTENTION_RESPONSE_STORES,
        log:
            "logs/attention/responses/{attention_features}/batch.log",
        cache: True
        conda:
            "../envs/psybench.yaml"
        # one core unless the model's resources ask for more: its chunks in 2 threads give the
        # same bits, and a 2-thread job waits for both cores of a 2-core run
        threads: get_attention_responses_threads
        resources:
            mem_mb=get_attention_responses_resource("mem_mb", 1000),
            runtime=get_attention_responses_resource("runtime", 30),
            gpu=get_attention_responses_resource("gpu", 0),
        params:
            stores=get_attention_feature_batch,
            chunk_frames=ATTENTION["chunk_frames"],
            lags_ms=ATTENTION["lags_ms"],
            code_hash=get_code_hash("attention_responses.py"),
        script:
            "../scripts/attention_responses.py"


rule attention_control_scanpaths:
    input:
        features=get_attention_scanpath_features,
        gaze="results/attention/gaze/{attention_movie}.csv",
    output:
        table="results/attention/controls/{attention_movie}.csv",
        parquet="results/attention/controls/{attention_movie}.parquet",
    log:
        "logs/attention/controls/{attention_movie}.log",
    benchmark:
        "logs/benchmarks/attention_control_scanpaths/{attention_movie}.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        evaluation=ATTENTION["evaluation"],
        code_hash=get_code_hash("attention_control_scanpaths.py"),
    script:
        "../scripts/attention_control_scanpaths.py"


# One job per training movie: every model row's part (its own files), the feature-independent
# work (scanpaths read, training points, ceilings) done once for all rows.
if ATTENTION_ON:

    rule attention_evaluate_part:
        input:
            features=get_attention_train_features,
            gaze=get_attention_part_gaze,
            scanpaths="results/attention/controls/{attention_train}.parquet",
        output:
            tables=expand(
                "results/attention/evaluate/{part}/{{attention_train}}/table.csv",
                part=ATTENTION_PART_DIRS,
            ),
            table_parquets=expand(
                "results/attention/evaluate/{part}/{{attention_train}}/table.parquet",
                part=ATTENTION_PART_DIRS,
            ),
            curves=expand(
                "results/attention/evaluate/{part}/{{attention_train}}/curves.csv",
                part=ATTENTION_PART_DIRS,
            ),
            curves_parquets=expand(
                "results/attention/evaluate/{part}/{{attention_train}}/curves.parquet",
                part=ATTENTION_PART_DIRS,
            ),
        log:
            "logs/attention/evaluate/{attention_train}.log",
        benchmark:
            "logs/benchmarks/attention_evaluate_part/{attention_train}.tsv"
        conda:
            "../envs/psybench.yaml"
        params:
            feature_stores=get_attention_train_stores,
            gaze_tables=get_attention_gaze_tables(),
            parts=get_attention_train_parts,
            pairs=ATTENTION["pairs"],
            lags_ms=ATTENTION["lags_ms"],
            evaluation=ATTENTION["evaluation"],
            code_hash=get_code_hash("attention_evaluate_part.py"),
        script:
            "../scripts/attention_evaluate_part.py"


rule attention_evaluate:
    input:
        parts=[p[k] for p in get_attention_parts() for k in ("table", "curves")],
    output:
        table=report(
            "results/attention/table1.csv",
            caption="../report/attention_table1.rst",
            category="Attention",
            subcategory="Table 1",
        ),
        table_parquet="results/attention/table1.parquet",
        curves="results/attention/curves.csv",
        curves_parquet="results/attention/curves.parquet",
        figure=report(
            "results/attention/curves.png",
            caption="../report/attention_curves.rst",
            category="Attention",
            subcategory="Table 1",
        ),
    log:
        "logs/attention/evaluate.log",
    benchmark:
        "logs/benchmarks/attention_evaluate/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        parts=get_attention_parts(),
        models=get_attention_rows(),
        pairs=ATTENTION["pairs"],
        data=get_attention_gaze_data(),
        code_hash=get_code_hash("attention_evaluate.py"),
    script:
        "../scripts/attention_evaluate.py"


# One job per training movie (its pairs' rows, next to its evaluation part), then one join.
if ATTENTION_ON:

    rule attention_metrics_part:
        input:
            features=get_attention_train_features,
            gaze=get_attention_part_gaze,
        output:
            table="results/attention/metrics/{attention_train}.csv",
            parquet="results/attention/metrics/{attention_train}.parquet",
        log:
            "logs/attention/metrics/{attention_train}.log",
        benchmark:
            "logs/benchmarks/attention_metrics_part/{attention_train}.tsv"
        conda:
            "../envs/psybench.yaml"
        params:
            feature_stores=get_attention_metrics_part_stores,
            gaze_tables=get_attention_gaze_tables(),
            models=get_attention_rows(),
            pairs=ATTENTION["pairs"],
            settings=get_attention_metrics_settings(),
            code_hash=get_code_hash("attention_metrics_part.py"),
        script:
            "../scripts/attention_metrics_part.py"


# One job per map-output model and test movie: the model built once, run on the movie's RGB frames,
# scored untuned on every pair that tests on the movie.
rule attention_map_scores:
    input:
        stimulus="results/attention/stimuli/{attention_movie}.zarr",
        movie=get_attention_movie_file,
        gaze="results/attention/gaze/{attention_movie}.csv",
    output:
        table="results/attention/maps/{attention_map}/{attention_movie}.csv",
        parquet="results/attention/maps/{attention_map}/{attention_movie}.parquet",
    log:
        "logs/attention/maps/{attention_map}/{attention_movie}.log",
    benchmark:
        "logs/benchmarks/attention_map_scores/{attention_map}/{attention_movie}.tsv"
    conda:
        "../envs/psybench.yaml"
    threads: get_attention_map_threads
    resources:
        mem_mb=get_attention_map_resource("mem_mb", 1000),
        runtime=get_attention_map_resource("runtime", 30),
        gpu=get_attention_map_resource("gpu", 0),
    params:
        model=get_attention_map_model,
        trains=get_attention_map_trains,
        settings=get_attention_metrics_settings(),
        code_hash=get_attention_map_code_hash,
    script:
        "../scripts/attention_map_scores.py"


rule attention_metrics:
    input:
        parts=list(get_attention_metrics_parts().values()),
        maps=get_attention_map_tables(),
    output:
        table="results/attention/metrics.csv",
        parquet="results/attention/metrics.parquet",
    log:
        "logs/attention/metrics.log",
    benchmark:
        "logs/benchmarks/attention_metrics/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        parts=get_attention_metrics_parts(),
        models=get_attention_rows(),
        pairs=ATTENTION["pairs"],
        maps=get_attention_map_tables(),
        data=get_attention_gaze_data(),
        code_hash=get_code_hash("attention_metrics.py"),
    script:
        "../scripts/attention_metrics.py"


rule attention_all:
    input:
        attention_targets(),


rule attention_score_rows:
    input:
        metrics="results/attention/metrics.csv",
        table1="results/attention/table1.csv",
    output:
        table="results/aggregate/scores_attention.csv",
        parquet="results/aggregate/scores_attention.parquet",
    log:
        "logs/attention/score_rows.log",
    benchmark:
        "logs/benchmarks/attention_score_rows/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        table1_figure="attention/curves.png",
        results_root=get_results_root,
        code_hash=get_code_hash("attention_score_rows.py"),
    script:
        "../scripts/attention_score_rows.py"
