# Config validation, wildcard constraints, code hashes and every input/params function.
from psybench.config import track_models, validate_config
from psybench.io.store import quarantine_damaged
from psybench.provenance import code_hash, params_hash
from psybench.stimuli.motion import stimulus_set

# Fails before any job, naming the offending key (psybench.config.ConfigError).
validate_config(config)

# Snakemake sees a directory output as up to date whatever it holds: move damaged
# stores aside so that they, and everything downstream, are rebuilt.
if config["verify_stores"] == "structural":
    for _store, _why in quarantine_damaged("results"):
        logger.warning(f"psybench: moved damaged store {_store} to results/.damaged/ to rebuild it: {_why}")

MOTION_ON = "motion" in config["tracks"]
MOTION_STIMULI = stimulus_set(config["motion"]) if MOTION_ON else {}  # validated (incl. fit in frame) above
MOTION_MODELS = track_models(config, "motion") if MOTION_ON else {}
MOTION_EXPERIMENTS = ["barberpole", "diamonds", "dashed_bars", "grating_size"]


wildcard_constraints:
    stimulus="[a-z0-9_]+",
    model="[A-Za-z0-9_]+",


# Snakemake does not notice edits to imported library modules: each rule carries a
# hash of the code it runs as a param, so editing one stage reruns that stage only.
CODE = {
    "stimuli": code_hash(["psybench.stimuli", "psybench.display", "psybench.io"]),
    "readouts": code_hash(["psybench.readouts", "psybench.population", "psybench.display", "psybench.io"]),
    "scores": code_hash(["psybench.scores", "psybench.fits", "psybench.io"]),
    "aggregate": code_hash(["psybench.aggregate", "psybench.io"]),
    "figures": code_hash(["psybench.report.motion"]),
}

def get_all_targets():
    targets = []
    if MOTION_ON:
        targets += [
            "results/aggregate/motion_table1.csv",
            "results/aggregate/motion_table1.md",
            "results/aggregate/motion_pareto.csv",
            "results/figures/motion/stimuli.png",
            "results/figures/motion/barberpole_directions.png",
        ]
        targets += expand("results/figures/motion/{model}_direction_error.png", model=MOTION_MODELS)
        targets += expand("results/figures/motion/{model}_flow.png", model=MOTION_MODELS)
    if "attention" in config["tracks"]:
        targets += attention_targets()
    if "intphys" in config["tracks"]:
        targets += IP.outputs()
    targets += ["results/aggregate/scores_long.csv", "results/report"]
    return targets


def intphys_model_names():
    return list(config["intphys"]["models"]) + list(config["intphys"].get("external_answers", {}))


def get_display():
    return dict(config["display"])


def get_stimulus_spec(wildcards):
    return MOTION_STIMULI[wildcards.stimulus]


def get_model_entry(wildcards):
    """The model's resolved description (algorithm, kind, parameters with defaults)."""
    spec = MOTION_MODELS[wildcards.model]
    entry = {k: v for k, v in _model_config(wildcards.model).items() if k != "params"}
    entry["params"] = dict(spec.params)
    return entry


def _model_config(name):
    return next(m for m in config["motion"]["models"] if m["name"] == name)


def get_model_code_hash(wildcards):
    spec = MOTION_MODELS[wildcards.model]
    model_module = spec.algorithm.function.__module__
    return code_hash(["psybench.models.run", "psybench.registry", "psybench.population", "psybench.io", model_module])


def get_model_responses(wildcards):
    return expand("results/responses/{model}/{stimulus}.zarr", model=wildcards.model, stimulus=MOTION_STIMULI)


def get_model_readouts(wildcards):
    return expand("results/readouts/{model}/{stimulus}.zarr", model=wildcards.model, stimulus=MOTION_STIMULI)


def get_flow_figure_responses(wildcards):
    """One response per experiment family, for the flow-field figure."""
    firsts = {}
    for name, spec in MOTION_STIMULI.items():
        firsts.setdefault(spec["family"], name)
    return expand("results/responses/{model}/{stimulus}.zarr", model=wildcards.model, stimulus=firsts.values())
