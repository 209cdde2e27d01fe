# Aggregation (papers/001): Table 1, Pareto set and fronts next to average ranks.


rule aggregate_scores:
    input:
        unpack(get_track_score_inputs),
    output:
        table="results/aggregate/scores_long.csv",
        parquet="results/aggregate/scores_long.parquet",
    params:
        attention_figure=get_attention_figure(),
        code_hash=CODE["aggregate"],
    log:
        "logs/aggregate/scores.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/aggregate_scores.py"


rule aggregate_samples:
    input:
        unpack(get_sample_inputs),
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


rule report_leaderboard:
    input:
        scores="results/aggregate/scores_long.csv",
        samples="results/aggregate/samples_long.csv",
    output:
        report=directory("results/report"),
        tables=expand("results/aggregate/leaderboard_{name}.csv", name=LEADERBOARD_NAMES),
    params:
        leaderboards=LEADERBOARDS,
        n_boot=config["aggregate"]["n_boot"],
        alpha=config["aggregate"]["alpha"],
        seed=config["aggregate"]["seed"],
        max_projections=config["aggregate"]["max_projections"],
        code_hash=CODE["report"],
    log:
        "logs/report/leaderboard.log",
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/report_leaderboard.py"
