# Motion track (Motion Psychobench, RR-7317): stimuli -> responses -> readouts -> scores.


rule stimuli_render:
    # between-workflow output cache (snakemake --cache, $SNAKEMAKE_OUTPUT_CACHE):
    # keyed by script, params (spec, display, code hash) and upstream provenance
    cache: True
    output:
        store=directory("results/stimuli/{stimulus}.zarr"),
    params:
        name="{stimulus}",
        spec=get_stimulus_spec,
        display=get_display(),
        code_hash=CODE["stimuli"],
    log:
        "logs/stimuli/{stimulus}.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/stimuli_render.py"


rule responses_motion:
    cache: True
    input:
        stimulus="results/stimuli/{stimulus}.zarr",
    output:
        store=directory("results/responses/{model}/{stimulus}.zarr"),
    params:
        model=get_model_entry,
        code_hash=get_model_code_hash,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    log:
        "logs/responses/{model}/{stimulus}.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/responses_motion.py"


rule readouts_pursuit:
    input:
        responses=get_model_responses,
    output:
        stores=directory(expand("results/readouts/{{model}}/{stimulus}.zarr", stimulus=MOTION_STIMULI)),
    params:
        lambda_ms=config["motion"]["readout"]["lambda_ms"],
        code_hash=CODE["readouts"],
    log:
        "logs/readouts/{model}.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/readouts_pursuit.py"


rule scores_motion:
    input:
        readouts=get_model_readouts,
        literature=config["literature"],
    output:
        scores="results/scores/motion/{model}.csv",
        fits="results/fits/motion/{model}.csv",
    params:
        criteria=config["motion"]["criteria"],
        code_hash=CODE["scores"],
    log:
        "logs/scores/motion/{model}.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/scores_motion.py"


rule figures_motion_stimuli:
    input:
        stimuli=expand("results/stimuli/{stimulus}.zarr", stimulus=MOTION_STIMULI),
    output:
        report(
            "results/figures/motion/stimuli.png",
            caption="../report/motion_stimuli.rst",
            category="Motion",
            subcategory="Stimuli",
        ),
    params:
        code_hash=CODE["figures"],
    log:
        "logs/figures/motion/stimuli.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/figures_motion_stimuli.py"


rule figures_motion_flow:
    input:
        responses=get_flow_figure_responses,
    output:
        report(
            "results/figures/motion/{model}_flow.png",
            caption="../report/motion_flow.rst",
            category="Motion",
            subcategory="Flow fields",
        ),
    params:
        code_hash=CODE["figures"],
    log:
        "logs/figures/motion/{model}_flow.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/figures_motion_flow.py"


rule figures_motion_direction_error:
    input:
        readouts=get_model_readouts,
        fits="results/fits/motion/{model}.csv",
        scores="results/scores/motion/{model}.csv",
    output:
        report(
            "results/figures/motion/{model}_direction_error.png",
            caption="../report/motion_direction_error.rst",
            category="Motion",
            subcategory="Direction error",
        ),
    params:
        code_hash=CODE["figures"],
    log:
        "logs/figures/motion/{model}_direction_error.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/figures_motion_direction_error.py"


rule figures_motion_barberpole:
    input:
        scores=expand("results/scores/motion/{model}.csv", model=MOTION_MODELS),
    output:
        report(
            "results/figures/motion/barberpole_directions.png",
            caption="../report/motion_barberpole.rst",
            category="Motion",
            subcategory="Barber-pole",
        ),
    params:
        code_hash=CODE["figures"],
    log:
        "logs/figures/motion/barberpole.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/figures_motion_barberpole.py"
