# Aggregation: the constants, code hashes and every input and params function of
# rules/aggregate.smk (snakemake --lint wants no functions next to rules), from the
# config validated and filled with the schema's defaults in rules/common.smk.
from pathlib import Path

from psybench.provenance import PACKAGE_ROOT

# input and params functions

SCORE_ROW_TRACKS = ["motion", "attention", "intphys"]
# Each track's converter and what it reads (its hash reruns that track's rows only).
SCORE_ROWS_CODE = {
    "motion": code_hash(["psybench.motion.score_rows", "psybench.aggregate", "psybench.io"]),
    "attention": code_hash(
        ["psybench.attention.score_rows", "psybench.attention.metrics", "psybench.aggregate", "psybench.io"]
    ),
    "intphys": code_hash(
        ["psybench.intphys.score_rows", "psybench.intphys.metrics", "psybench.aggregate", "psybench.io"]
    ),
}
# Leaderboards of the HTML report: configured, or overall + one per track.
LEADERBOARDS = config["aggregate"]["leaderboards"] or [{"name": "overall", "track": None}] + [
    {"name": t, "track": t} for t in config["tracks"]
]
LEADERBOARD_NAMES = [lb["name"] for lb in LEADERBOARDS]


def get_score_row_tables(wildcards):
    """Every configured track's score rows (Parquet: read back bit for bit)."""
    return [f"results/aggregate/scores_{t}.parquet" for t in SCORE_ROW_TRACKS if t in config["tracks"]]


def get_sample_tables(wildcards):
    """Per-item samples behind the tied ranks: IntPhys quadruplets."""
    return ["results/aggregate/samples_intphys.parquet"] if "intphys" in config["tracks"] else []


def get_results_root(wildcards, output):
    """The results folder (the first part of the outputs' paths): score sources are relative to it."""
    return Path(output[0]).parts[0]


def get_motion_error_figure(wildcards):
    """Source of each motion Table 1 row: the model's direction-error figure (under results/)."""
    return "figures/motion/{model}_direction_error.png"


def get_intphys_score_row_inputs(wildcards):
    split = config["intphys"]["eval_split"]
    return {
        "scores": expand("results/intphys/{model}/scores.csv", model=intphys_model_names()),
        "answers": expand("results/intphys/{model}/answer.txt", model=intphys_model_names()),
        "metadata": f"results/intphys/metadata/{split}.csv",
    }


def get_report_code_hash():
    """The report's code and its page templates (not Python, so code_hash alone misses them)."""
    templates = sorted((PACKAGE_ROOT / "report" / "templates").glob("*"))
    code = code_hash(["psybench.aggregate.leaderboard", "psybench.report.site", "psybench.report.figures"])
    return f"{code}-{params_hash({p.name: p.read_text() for p in templates})}"
