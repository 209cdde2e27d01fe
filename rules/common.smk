# Config validation, damaged-store quarantine, wildcard constraints, the code hashes of
# the shared stages and the shared input functions; each track's own input and params
# functions are in rules/<track>_common.smk.
from psybench.config import prepare_workflow
from psybench.io.integrity import quarantine_damaged
from psybench.provenance import code_hash, params_hash

# Validated once (schema defaults filled in place) and every track's models resolved
# once: a bad value fails before any job, naming its key (psybench.config.ConfigError).
MODELS = prepare_workflow(config)

# Snakemake sees a directory output as up to date whatever it holds: move damaged
# stores aside so that they, and everything downstream, are rebuilt.
if config["verify_stores"] == "structural":
    for _store, _why in quarantine_damaged("results"):
        logger.warning(f"psybench: moved damaged store {_store} to results/.damaged/ to rebuild it: {_why}")


wildcard_constraints:
    stimulus="[a-z0-9_]+",
    model="[A-Za-z0-9_]+",


# Snakemake does not notice edits to imported library modules: each rule carries a
# hash of the code it runs as a param, so editing one stage reruns that stage only.
# The motion stages' hashes are MOTION_CODE in rules/motion.smk.
CODE = {
    "aggregate": code_hash(["psybench.aggregate", "psybench.io"]),
    "report": code_hash(["psybench.aggregate", "psybench.report.leaderboard", "psybench.io"]),
}

# Leaderboards of the HTML report: configured, or overall + one per track.
LEADERBOARDS = config["aggregate"]["leaderboards"] or [{"name": "overall", "track": None}] + [
    {"name": t, "track": t} for t in config["tracks"]
]
LEADERBOARD_NAMES = [lb["name"] for lb in LEADERBOARDS]


def get_all_targets():
    targets = []
    targets += motion_targets()
    if "attention" in config["tracks"]:
        targets += attention_targets()
    if "intphys" in config["tracks"]:
        targets += intphys_targets()
    targets += ["results/aggregate/scores_long.csv", "results/report"]
    return targets


def get_track_score_inputs(wildcards):
    """Every track's result files, by the names scripts/aggregate_scores.py reads."""
    inputs = {}
    if MOTION_ON:
        inputs.update(motion_score_inputs())
    if "intphys" in config["tracks"]:
        inputs["intphys_scores"] = expand("results/intphys/{model}/scores.csv", model=intphys_model_names())
    if "attention" in config["tracks"]:
        inputs["attention_metrics"] = "results/attention/metrics.csv"
        inputs["attention_table1"] = "results/attention/table1.csv"
    return inputs


def get_sample_inputs(wildcards):
    """Per-item results behind the tied ranks: IntPhys answers and metadata."""
    if "intphys" not in config["tracks"]:
        return {}
    split = config["intphys"]["eval_split"]
    return {
        "intphys_answers": expand("results/intphys/{model}/answer.txt", model=intphys_model_names()),
        "intphys_metadata": f"results/intphys/metadata/{split}.csv",
    }


def get_attention_figure():
    return "attention/curves.png" if "attention" in config["tracks"] else ""
