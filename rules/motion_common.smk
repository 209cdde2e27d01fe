# Motion track: the stimulus set, the resolved models, code hashes and every input and
# params function of rules/motion.smk, from config["motion"] (validated and filled with
# the schema's defaults in rules/common.smk). Built once while the Snakefile is parsed.
from psybench.config import ConfigError
from psybench.motion.display import Display
from psybench.motion.generalisation_set import generalisation_variants
from psybench.motion.stimuli import stimulus_set
from psybench.provenance import callable_modules, code_hash
from psybench.handoff import describe_model, job_resource, job_threads

# input and params functions

MOTION_ON = "motion" in config["tracks"]

# The stimulus set, built once; a stimulus that leaves the display fails here, before any job.
MOTION_STIMULI = {}
if MOTION_ON:
    try:
        MOTION_STIMULI = stimulus_set(config["motion"], display=Display.from_config(config["display"]))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None

# The generalisation runs (motion.generalisation): {variant: {nuisance, level, experiments,
# display, stimuli}}, each with its own display mapping; held out, never tuned on.
MOTION_GENERALISATION = {}
if MOTION_ON:
    try:
        MOTION_GENERALISATION = generalisation_variants(config)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None

# {name: ModelSpec}, resolved once in rules/common.smk; a job gets its description
# (psybench.handoff.describe_model: algorithm, kind, parameters with defaults, hash).
MOTION_MODELS = MODELS["motion"] if MOTION_ON else {}

# The readouts' own code, recorded in the readout stores that motion_readouts writes (each
# rule's code_hash param, get_code_hash in rules/common.smk, covers its whole job).
MOTION_READOUTS_CODE = code_hash(callable_modules("psybench.motion.readouts"))


def _model_code_hash(spec):
    """The responses job's code and the model's own module with every module that it imports."""
    return get_code_hash("motion_responses.py", modules=(spec.algorithm.function.__module__,))


MOTION_MODEL_CODE = {name: _model_code_hash(spec) for name, spec in MOTION_MODELS.items()}

# Batched jobs: one job per model writes every stimulus's store. Their outputs
# are named (stimulus, or run__stimulus) so that the between-workflow cache, which takes
# several outputs only when named, still stores each one separately.
MOTION_STIMULUS_STORES = {name: directory(f"results/motion/stimuli/{name}.zarr") for name in MOTION_STIMULI}
MOTION_GENERALISATION_STIMULUS_STORES = {
    f"{variant}__{name}": directory(f"results/motion/generalisation/{variant}/stimuli/{name}.zarr")
    for variant, run in MOTION_GENERALISATION.items()
    for name in run["stimuli"]
}
MOTION_RESPONSE_STORES = {name: directory(f"results/motion/responses/{{model}}/{name}.zarr") for name in MOTION_STIMULI}
MOTION_GENERALISATION_RESPONSE_STORES = {
    f"{variant}__{name}": directory(f"results/motion/generalisation/{variant}/responses/{{model}}/{name}.zarr")
    for variant, run in MOTION_GENERALISATION.items()
    for name in run["stimuli"]
}
MOTION_GENERALISATION_READOUT_DIRS = {
    variant: directory(f"results/motion/generalisation/{variant}/readouts/{{model}}")
    for variant in MOTION_GENERALISATION
}
MOTION_GENERALISATION_SCORE_TABLES = {
    f"{kind}_{variant}": f"results/motion/generalisation/{variant}/{kind}/{{model}}.csv"
    for variant in MOTION_GENERALISATION
    for kind in ("scores", "fits")
}


def motion_targets():
    """Final outputs of the motion track (for the main `rule all`)."""
    if not MOTION_ON:
        return []
    return [
        "results/aggregate/motion_table1.csv",
        "results/motion/motion_table1.md",
        "results/motion/motion_pareto.csv",
        "results/motion/figures/stimuli.png",
        "results/motion/figures/barberpole_directions.png",
        *expand("results/motion/figures/{model}_direction_error.png", model=MOTION_MODELS),
        *expand("results/motion/figures/{model}_flow.png", model=MOTION_MODELS),
        *expand("results/motion/scores/lambda_sensitivity/{model}.csv", model=MOTION_MODELS),
        *(["results/aggregate/motion_generalisation.csv"] if MOTION_GENERALISATION else []),
    ]


def get_motion_error_figure(wildcards):
    """Source of each motion Table 1 row: the model's direction-error figure (under results/)."""
    return "motion/figures/{model}_direction_error.png"


def get_motion_stimulus_batch(wildcards):
    """[name, spec, display] of every stimulus, in the order of MOTION_STIMULUS_STORES."""
    display = dict(config["display"])
    return [[name, spec, display] for name, spec in MOTION_STIMULI.items()]


def get_motion_model_description(wildcards):
    return describe_model(MOTION_MODELS[wildcards.model])


def get_motion_model_threads(wildcards):
    """The model entry's resources.threads (default 1): torch runs on the job's threads."""
    return job_threads([MOTION_MODELS[wildcards.model]], 1)


def get_motion_model_resource(key, default):
    """A resources function: the model entry's ``resources[key]``, else the rule's ``default``."""

    def resource(wildcards):
        return job_resource([MOTION_MODELS[wildcards.model]], key, default)

    return resource


def get_motion_model_code_hash(wildcards):
    return MOTION_MODEL_CODE[wildcards.model]


def get_motion_model_responses(wildcards):
    return expand("results/motion/responses/{model}/{stimulus}.zarr", model=wildcards.model, stimulus=MOTION_STIMULI)


def get_motion_model_readouts(wildcards):
    return expand("results/motion/readouts/{model}/{stimulus}.zarr", model=wildcards.model, stimulus=MOTION_STIMULI)


def get_motion_flow_figure_responses(wildcards):
    """One response per experiment family, for the flow-field figure."""
    firsts = {}
    for name, stimulus in MOTION_STIMULI.items():
        firsts.setdefault(stimulus["family"], name)
    return expand("results/motion/responses/{model}/{stimulus}.zarr", model=wildcards.model, stimulus=firsts.values())


# generalisation runs: results/motion/generalisation/{variant}/<stage>/...


def get_motion_generalisation_stimulus_batch(wildcards):
    """[name, spec, display] of every run's stimuli, in the order of MOTION_GENERALISATION_STIMULUS_STORES."""
    return [
        [name, spec, run["display"]] for run in MOTION_GENERALISATION.values() for name, spec in run["stimuli"].items()
    ]


def get_motion_generalisation_stimuli(wildcards):
    """Every run's stimulus stores, in the order of MOTION_GENERALISATION_RESPONSE_STORES."""
    return [
        f"results/motion/generalisation/{variant}/stimuli/{stimulus}.zarr"
        for variant, run in MOTION_GENERALISATION.items()
        for stimulus in run["stimuli"]
    ]


def get_motion_generalisation_responses(wildcards):
    """{variant: one model's response stores of that run} (unpacked into named inputs)."""
    return {
        variant: expand(
            "results/motion/generalisation/{variant}/responses/{model}/{stimulus}.zarr",
            variant=variant,
            model=wildcards.model,
            stimulus=run["stimuli"],
        )
        for variant, run in MOTION_GENERALISATION.items()
    }


def get_motion_generalisation_readouts(wildcards):
    """{variant: one model's readout folder of that run} (unpacked into named inputs)."""
    return {
        variant: f"results/motion/generalisation/{variant}/readouts/{wildcards.model}"
        for variant in MOTION_GENERALISATION
    }


def get_motion_generalisation_scores(wildcards):
    """Every variant's per-model score tables, {variant: [paths]} (a mapping for the table's params too)."""
    return {
        variant: expand(
            "results/motion/generalisation/{variant}/scores/{model}.csv", variant=variant, model=MOTION_MODELS
        )
        for variant in MOTION_GENERALISATION
    }


def get_motion_generalisation_score_files(wildcards):
    return [p for paths in get_motion_generalisation_scores(wildcards).values() for p in paths]


def get_motion_generalisation_config(wildcards):
    """What the generalisation table reads of the config: display and motion (levels, baselines)."""
    return {"display": dict(config["display"]), "motion": dict(config["motion"])}
