# Aggregation: every track's results as rows of the long score table, their
# concatenation, and the leaderboards (Pareto set and fronts next to average ranks,
# Cabezas & Trujillo 2011, A non-linear quantitative evaluation approach for disparity
# estimation, VISAPP, sec. 3); the HTML report renders them.
#
# input and params functions
from pathlib import Path

from psybench.provenance import PACKAGE_ROOT

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


rule aggregate_motion:
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
    params:
        experiments=MOTION_EXPERIMENTS,
        code_hash=CODE["aggregate"],
    log:
        "logs/aggregate/motion.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/aggregate_motion.py"


rule motion_score_rows:
    input:
        table1="results/aggregate/motion_table1.csv",
        fits=expand("results/fits/motion/{model}.csv", model=MOTION_MODELS),
    output:
        table="results/aggregate/scores_motion.csv",
        parquet="results/aggregate/scores_motion.parquet",
    params:
        figure=get_motion_error_figure,
        results_root=get_results_root,
        code_hash=SCORE_ROWS_CODE["motion"],
    log:
        "logs/motion/score_rows.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/motion_score_rows.py"


rule attention_score_rows:
    input:
        metrics="results/attention/metrics.csv",
        table1="results/attention/table1.csv",
    output:
        table="results/aggregate/scores_attention.csv",
        parquet="results/aggregate/scores_attention.parquet",
    params:
        table1_figure="attention/curves.png",
        results_root=get_results_root,
        code_hash=SCORE_ROWS_CODE["attention"],
    log:
        "logs/attention/score_rows.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_score_rows.py"


rule intphys_score_rows:
    input:
        unpack(get_intphys_score_row_inputs),
    output:
        table="results/aggregate/scores_intphys.csv",
        parquet="results/aggregate/scores_intphys.parquet",
        samples="results/aggregate/samples_intphys.csv",
        samples_parquet="results/aggregate/samples_intphys.parquet",
    params:
        results_root=get_results_root,
        code_hash=SCORE_ROWS_CODE["intphys"],
    log:
        "logs/intphys/score_rows.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/intphys_score_rows.py"


rule aggregate_scores:
    input:
        tables=get_score_row_tables,
    output:
        table="results/aggregate/scores_long.csv",
        parquet="results/aggregate/scores_long.parquet",
    params:
        code_hash=CODE["aggregate"],
    log:
        "logs/aggregate/scores.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/aggregate_scores.py"


rule aggregate_samples:
    input:
        tables=get_sample_tables,
    output:
        table="results/aggregate/samples_long.csv",
        parquet="results/aggregate/samples_long.parquet",
    params:
        code_hash=CODE["aggregate"],
    log:
        "logs/aggregate/samples.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/aggregate_samples.py"


rule aggregate_leaderboards:
    input:
        scores="results/aggregate/scores_long.csv",
        samples="results/aggregate/samples_long.csv",
    output:
        tables=expand("results/aggregate/leaderboard_{name}.csv", name=LEADERBOARD_NAMES),
        pages="results/aggregate/leaderboards.json",
    params:
        leaderboards=LEADERBOARDS,
        n_boot=config["aggregate"]["n_boot"],
        alpha=config["aggregate"]["alpha"],
        seed=config["aggregate"]["seed"],
        max_projections=config["aggregate"]["max_projections"],
        code_hash=CODE["aggregate"],
    log:
        "logs/aggregate/leaderboards.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/aggregate_leaderboards.py"


rule report_leaderboard:
    input:
        pages="results/aggregate/leaderboards.json",
        tables=expand("results/aggregate/leaderboard_{name}.csv", name=LEADERBOARD_NAMES),
    output:
        report=directory("results/report"),
    params:
        results_root=get_results_root,
        code_hash=get_report_code_hash(),
    log:
        "logs/report/leaderboard.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/report_leaderboard.py"
