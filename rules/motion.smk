# Motion track (Tlapale et al. 2010, Motion Psychobench, RR-7317): stimuli -> responses
# -> readouts -> scores -> Table 1 -> score rows (+ figures, generalisation runs).
# Outputs under results/motion/<stage>/, logs under logs/motion/<stage>/; Table 1 and the
# generalisation table under results/aggregate/ (their paths are interfaces).
# Input and params functions are in motion_common.smk (snakemake --lint wants no
# functions next to rules).


include: "motion_common.smk"


# The batched rules exist only when they have outputs (a cached rule must have some).
if MOTION_ON:

    # Every stimulus in one job (start-up paid once), each in its own store.
    rule motion_stimuli:
        output:
            **MOTION_STIMULUS_STORES,
        log:
            "logs/motion/stimuli/batch.log",
        # between-workflow output cache (snakemake --cache, $SNAKEMAKE_OUTPUT_CACHE):
        # keyed by script, params (specs, display, code hash) and upstream provenance
        cache: True
        conda:
            "../envs/psybench.yaml"
        params:
            batch=get_motion_stimulus_batch,
            code_hash=get_code_hash("motion_stimuli.py"),
        script:
            "../scripts/motion_stimuli.py"

    # One job per model: interpreter start-up, imports and model resolution are paid once
    # for all stimuli; each stimulus keeps its own store (named outputs, so that the
    # between-workflow cache still stores them one by one).
    rule motion_responses:
        input:
            stimuli=expand("results/motion/stimuli/{stimulus}.zarr", stimulus=MOTION_STIMULI),
        output:
            **MOTION_RESPONSE_STORES,
        log:
            "logs/motion/responses/{model}/batch.log",
        cache: True
        conda:
            "../envs/psybench.yaml"
        # a model entry's resources (threads, mem_mb, runtime, gpu) are its jobs' own
        threads: get_motion_model_threads
        resources:
            mem_mb=get_motion_model_resource("mem_mb", 2000),
            runtime=get_motion_model_resource("runtime", 60),
            gpu=get_motion_model_resource("gpu", 0),
        params:
            model=get_motion_model_description,
            write_population=config["motion"]["write_population"],
            code_hash=get_motion_model_code_hash,
        script:
            "../scripts/motion_responses.py"


# One job per model: the pursuit readout of every response store (Tlapale et al. 2010,
# RR-7317 eq. 3), each in its own store.
rule motion_readouts:
    input:
        responses=get_motion_model_responses,
    output:
        stores=directory(expand("results/motion/readouts/{{model}}/{stimulus}.zarr", stimulus=MOTION_STIMULI)),
    log:
        "logs/motion/readouts/{model}.log",
    benchmark:
        "logs/benchmarks/motion_readouts/{model}.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        lambda_ms=config["motion"]["readout"]["lambda_ms"],
        readouts_code_hash=MOTION_READOUTS_CODE,
        code_hash=get_code_hash("motion_readouts.py"),
    script:
        "../scripts/motion_readouts.py"


# One job per model scores its readouts, and re-scores them at other pursuit constants
# lambda and on the unfiltered mean flow (psybench.motion.readout_dynamics), the readouts
# loaded once.
rule motion_scores:
    input:
        readouts=get_motion_model_readouts,
        literature=config["literature"],
    output:
        scores="results/motion/scores/{model}.csv",
        fits="results/motion/fits/{model}.csv",
        verdicts="results/motion/scores/lambda_sensitivity/{model}.csv",
        lambda_fits="results/motion/fits/lambda_sensitivity/{model}.csv",
    log:
        "logs/motion/scores/{model}.log",
    benchmark:
        "logs/benchmarks/motion_scores/{model}.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        criteria=config["motion"]["criteria"],
        code_hash=get_code_hash("motion_scores.py"),
    script:
        "../scripts/motion_scores.py"


rule motion_table1:
    input:
        scores=expand("results/motion/scores/{model}.csv", model=MOTION_MODELS),
    output:
        table=report(
            "results/aggregate/motion_table1.csv",
            caption="../report/motion_table1.rst",
            category="Motion",
            subcategory="Table 1",
        ),
        markdown="results/motion/motion_table1.md",
        pareto=report(
            "results/motion/motion_pareto.csv",
            caption="../report/motion_pareto.rst",
            category="Motion",
            subcategory="Pareto",
        ),
    log:
        "logs/motion/table1.log",
    benchmark:
        "logs/benchmarks/motion_table1/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=get_code_hash("motion_table1.py"),
    script:
        "../scripts/motion_table1.py"


rule motion_figures_stimuli:
    input:
        stimuli=expand("results/motion/stimuli/{stimulus}.zarr", stimulus=MOTION_STIMULI),
    output:
        report(
            "results/motion/figures/stimuli.png",
            caption="../report/motion_stimuli.rst",
            category="Motion",
            subcategory="Stimuli",
        ),
    log:
        "logs/motion/figures/stimuli.log",
    benchmark:
        "logs/benchmarks/motion_figures_stimuli/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=get_code_hash("motion_figures_stimuli.py"),
    script:
        "../scripts/motion_figures_stimuli.py"


# A model's flow-field and direction-error figures in one job (one start-up per
# model); a change to its scores redraws its flow figure too, which is cheap.
rule motion_figures_model:
    input:
        responses=get_motion_flow_figure_responses,
        readouts=get_motion_model_readouts,
        fits="results/motion/fits/{model}.csv",
        scores="results/motion/scores/{model}.csv",
        literature=config["literature"],
    output:
        flow=report(
            "results/motion/figures/{model}_flow.png",
            caption="../report/motion_flow.rst",
            category="Motion",
            subcategory="Flow fields",
        ),
        direction_error=report(
            "results/motion/figures/{model}_direction_error.png",
            caption="../report/motion_direction_error.rst",
            category="Motion",
            subcategory="Direction error",
        ),
    log:
        "logs/motion/figures/{model}.log",
    benchmark:
        "logs/benchmarks/motion_figures_model/{model}.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=get_code_hash("motion_figures_model.py"),
    script:
        "../scripts/motion_figures_model.py"


rule motion_figures_barberpole:
    input:
        scores=expand("results/motion/scores/{model}.csv", model=MOTION_MODELS),
    output:
        report(
            "results/motion/figures/barberpole_directions.png",
            caption="../report/motion_barberpole.rst",
            category="Motion",
            subcategory="Barber-pole",
        ),
    log:
        "logs/motion/figures/barberpole.log",
    benchmark:
        "logs/benchmarks/motion_figures_barberpole/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=get_code_hash("motion_figures_barberpole.py"),
    script:
        "../scripts/motion_figures_barberpole.py"


rule motion_score_rows:
    input:
        table1="results/aggregate/motion_table1.csv",
        fits=expand("results/motion/fits/{model}.csv", model=MOTION_MODELS),
    output:
        table="results/aggregate/scores_motion.csv",
        parquet="results/aggregate/scores_motion.parquet",
    log:
        "logs/motion/score_rows.log",
    benchmark:
        "logs/benchmarks/motion_score_rows/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        figure=get_motion_error_figure,
        results_root=get_results_root,
        code_hash=get_code_hash("motion_score_rows.py"),
    script:
        "../scripts/motion_score_rows.py"


# Generalisation runs (motion.generalisation): the selected experiments re-rendered at other
# contrasts, speeds and frame rates, each with its own display, through the same stages and
# scripts; held out (no model parameter may be tuned on them).


if MOTION_GENERALISATION:

    # The stimulus and responses jobs of the main run, on every run's stimuli and displays
    # (`use rule` does not carry `cache:` over: each says it again).
    use rule motion_stimuli as motion_generalisation_stimuli with:
        output:
            **MOTION_GENERALISATION_STIMULUS_STORES,
        log:
            "logs/motion/generalisation/stimuli/batch.log",
        cache: True
        params:
            batch=get_motion_generalisation_stimulus_batch,

    use rule motion_responses as motion_generalisation_responses with:
        input:
            stimuli=get_motion_generalisation_stimuli,
        output:
            **MOTION_GENERALISATION_RESPONSE_STORES,
        log:
            "logs/motion/generalisation/responses/{model}/batch.log",
        cache: True

    # One job per model for every run; each run keeps its readout folder.
    rule motion_generalisation_readouts:
        input:
            unpack(get_motion_generalisation_responses),
        output:
            **MOTION_GENERALISATION_READOUT_DIRS,
        log:
            "logs/motion/generalisation/readouts/{model}.log",
        benchmark:
            "logs/benchmarks/motion_generalisation_readouts/{model}.tsv"
        conda:
            "../envs/psybench.yaml"
        params:
            lambda_ms=config["motion"]["readout"]["lambda_ms"],
            readouts_code_hash=MOTION_READOUTS_CODE,
            code_hash=get_code_hash("motion_generalisation_readouts.py"),
        script:
            "../scripts/motion_generalisation_readouts.py"

    # One job per model for every run; each run keeps its tables.
    rule motion_generalisation_scores:
        input:
            unpack(get_motion_generalisation_readouts),
            literature=config["literature"],
        output:
            **MOTION_GENERALISATION_SCORE_TABLES,
        log:
            "logs/motion/generalisation/scores/{model}.log",
        benchmark:
            "logs/benchmarks/motion_generalisation_scores/{model}.tsv"
        conda:
            "../envs/psybench.yaml"
        params:
            criteria=config["motion"]["criteria"],
            code_hash=get_code_hash("motion_generalisation_scores.py"),
        script:
            "../scripts/motion_generalisation_scores.py"


rule motion_generalisation:
    input:
        main=expand("results/motion/scores/{model}.csv", model=MOTION_MODELS),
        variants=get_motion_generalisation_score_files,
    output:
        table=report(
            "results/aggregate/motion_generalisation.csv",
            caption="../report/motion_generalisation.rst",
            category="Motion",
            subcategory="Generalisation",
        ),
    log:
        "logs/motion/generalisation.log",
    benchmark:
        "logs/benchmarks/motion_generalisation/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        variant_scores=get_motion_generalisation_scores,
        settings=get_motion_generalisation_config,
        code_hash=get_code_hash("motion_generalisation.py"),
    script:
        "../scripts/motion_generalisation.py"


rule motion_all:
    input:
        motion_targets(),
