# Motion track (Tlapale et al. 2010, Motion Psychobench, RR-7317): stimuli -> responses
# -> readouts -> scores -> Table 1 (+ figures). Outputs under results/ (paths unchanged).
from psybench.config import ConfigError
from psybench.motion.display import Display
from psybench.motion.stimuli import stimulus_set

MOTION_ON = "motion" in config["tracks"]


# input and params functions
# (values computed once while the Snakefile is parsed, and lambdas over them:
# `snakemake --lint` wants no `def` next to rules)

# The stimulus set, built once; a stimulus that leaves the display fails here, before any job.
MOTION_STIMULI = {}
if MOTION_ON:
    try:
        MOTION_STIMULI = stimulus_set(
            config["motion"], display=Display.from_config(config["display"])
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None

# Each model entry resolved once for the workflow (psybench.config.track_models); a job
# gets its description (spec.to_attrs(): algorithm, kind, parameters with defaults, hash).
MOTION_MODELS = track_models(config, "motion") if MOTION_ON else {}

# Code hashes of the motion stages (see CODE in common.smk); a model's own hash covers
# the runner and the model's module (its whole package for a split one, e.g. flow/).
MOTION_CODE = {
    "stimuli": code_hash(
        ["psybench.motion.stimuli", "psybench.motion.display", "psybench.io"]
    ),
    "readouts": code_hash(
        [
            "psybench.motion.readouts",
            "psybench.motion.population",
            "psybench.motion.display",
            "psybench.io",
        ]
    ),
    "scores": code_hash(
        [
            "psybench.motion.scores",
            "psybench.motion.criteria",
            "psybench.motion.fits",
            "psybench.motion.literature",
            "psybench.io",
        ]
    ),
    "table1": code_hash(
        ["psybench.motion.table1", "psybench.aggregate.pareto", "psybench.io"]
    ),
    "figures": code_hash(["psybench.motion.figures"]),
}
MOTION_MODEL_CODE = {}
for _name, _spec in MOTION_MODELS.items():
    _module = _spec.algorithm.function.__module__
    _package = _module.rpartition(".")[0]
    if _package.startswith("psybench.motion.models."):
        _module = _package
    MOTION_MODEL_CODE[_name] = code_hash(
        [
            "psybench.motion.responses",
            "psybench.registry",
            "psybench.motion.population",
            "psybench.io",
            _module,
        ]
    )

# Final motion outputs, for the main `rule all`.
MOTION_TARGETS = [
    "results/aggregate/motion_table1.csv",
    "results/aggregate/motion_table1.md",
    "results/aggregate/motion_pareto.csv",
    "results/figures/motion/stimuli.png",
    "results/figures/motion/barberpole_directions.png",
]
MOTION_TARGETS += expand(
    "results/figures/motion/{model}_direction_error.png", model=MOTION_MODELS
)
MOTION_TARGETS += expand("results/figures/motion/{model}_flow.png", model=MOTION_MODELS)

# The motion result files scripts/aggregate_scores.py reads, by name.
MOTION_SCORE_INPUTS = {
    "motion_table1": "results/aggregate/motion_table1.csv",
    "motion_fits": expand("results/fits/motion/{model}.csv", model=MOTION_MODELS),
}

# One stimulus per experiment family, for the flow-field figure.
MOTION_FLOW_FIGURE_STIMULI = {}
for _name, _stimulus in MOTION_STIMULI.items():
    MOTION_FLOW_FIGURE_STIMULI.setdefault(_stimulus["family"], _name)

get_stimulus_spec = lambda wildcards: MOTION_STIMULI[wildcards.stimulus]
get_model_description = lambda wildcards: MOTION_MODELS[wildcards.model].to_attrs()
get_model_code_hash = lambda wildcards: MOTION_MODEL_CODE[wildcards.model]
get_model_responses = lambda wildcards: expand(
    "results/responses/{model}/{stimulus}.zarr",
    model=wildcards.model,
    stimulus=MOTION_STIMULI,
)
get_model_readouts = lambda wildcards: expand(
    "results/readouts/{model}/{stimulus}.zarr",
    model=wildcards.model,
    stimulus=MOTION_STIMULI,
)
get_flow_figure_responses = lambda wildcards: expand(
    "results/responses/{model}/{stimulus}.zarr",
    model=wildcards.model,
    stimulus=MOTION_FLOW_FIGURE_STIMULI.values(),
)


rule motion_stimuli:
    output:
        store=directory("results/stimuli/{stimulus}.zarr"),
    log:
        "logs/stimuli/{stimulus}.log",
    # between-workflow output cache (snakemake --cache, $SNAKEMAKE_OUTPUT_CACHE):
    # keyed by script, params (spec, display, code hash) and upstream provenance
    cache: True
    conda:
        "../envs/psybench.yaml"
    params:
        name="{stimulus}",
        spec=get_stimulus_spec,
        display=dict(config["display"]),
        code_hash=MOTION_CODE["stimuli"],
    script:
        "../scripts/motion_stimuli.py"


rule motion_responses:
    input:
        stimulus="results/stimuli/{stimulus}.zarr",
    output:
        store=directory("results/responses/{model}/{stimulus}.zarr"),
    log:
        "logs/responses/{model}/{stimulus}.log",
    cache: True
    conda:
        "../envs/psybench.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        model=get_model_description,
        code_hash=get_model_code_hash,
    script:
        "../scripts/motion_responses.py"


rule motion_readouts:
    input:
        responses=get_model_responses,
    output:
        stores=directory(
            expand(
                "results/readouts/{{model}}/{stimulus}.zarr", stimulus=MOTION_STIMULI
            )
        ),
    log:
        "logs/readouts/{model}.log",
    conda:
        "../envs/psybench.yaml"
    params:
        lambda_ms=config["motion"]["readout"]["lambda_ms"],
        code_hash=MOTION_CODE["readouts"],
    script:
        "../scripts/motion_readouts.py"


rule motion_scores:
    input:
        readouts=get_model_readouts,
        literature=config["literature"],
    output:
        scores="results/scores/motion/{model}.csv",
        fits="results/fits/motion/{model}.csv",
    log:
        "logs/scores/motion/{model}.log",
    conda:
        "../envs/psybench.yaml"
    params:
        criteria=config["motion"]["criteria"],
        code_hash=MOTION_CODE["scores"],
    script:
        "../scripts/motion_scores.py"


rule motion_table1:
    input:
        scores=expand("results/scores/motion/{model}.csv", model=MOTION_MODELS),
    output:
        table=report(
            "results/aggregate/motion_table1.csv",
            caption="../report/motion_table1.rst",
            category="Motion",
            subcategory="Table 1",
        ),
        markdown="results/aggregate/motion_table1.md",
        pareto=report(
            "results/aggregate/motion_pareto.csv",
            caption="../report/motion_pareto.rst",
            category="Motion",
            subcategory="Pareto",
        ),
    log:
        "logs/aggregate/motion.log",
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=MOTION_CODE["table1"],
    script:
        "../scripts/motion_table1.py"


rule motion_figures_stimuli:
    input:
        stimuli=expand("results/stimuli/{stimulus}.zarr", stimulus=MOTION_STIMULI),
    output:
        report(
            "results/figures/motion/stimuli.png",
            caption="../report/motion_stimuli.rst",
            category="Motion",
            subcategory="Stimuli",
        ),
    log:
        "logs/figures/motion/stimuli.log",
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=MOTION_CODE["figures"],
    script:
        "../scripts/motion_figures_stimuli.py"


rule motion_figures_flow:
    input:
        responses=get_flow_figure_responses,
    output:
        report(
            "results/figures/motion/{model}_flow.png",
            caption="../report/motion_flow.rst",
            category="Motion",
            subcategory="Flow fields",
        ),
    log:
        "logs/figures/motion/{model}_flow.log",
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=MOTION_CODE["figures"],
    script:
        "../scripts/motion_figures_flow.py"


rule motion_figures_direction_error:
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
    log:
        "logs/figures/motion/{model}_direction_error.log",
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=MOTION_CODE["figures"],
    script:
        "../scripts/motion_figures_direction_error.py"


rule motion_figures_barberpole:
    input:
        scores=expand("results/scores/motion/{model}.csv", model=MOTION_MODELS),
    output:
        report(
            "results/figures/motion/barberpole_directions.png",
            caption="../report/motion_barberpole.rst",
            category="Motion",
            subcategory="Barber-pole",
        ),
    log:
        "logs/figures/motion/barberpole.log",
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=MOTION_CODE["figures"],
    script:
        "../scripts/motion_figures_barberpole.py"
