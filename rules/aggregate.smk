# Aggregation: every track's results as rows of the long score table, their
# concatenation, and the leaderboards (Pareto set and fronts next to average ranks,
# Cabezas & Trujillo 2011, A non-linear quantitative evaluation approach for disparity
# estimation, VISAPP, sec. 3); the HTML report renders them. Input and params
# functions are in aggregate_common.smk (snakemake --lint wants no functions next to rules).


include: "aggregate_common.smk"


rule aggregate_scores:
    input:
        tables=get_score_row_tables,
    output:
        table="results/aggregate/scores_long.csv",
        parquet="results/aggregate/scores_long.parquet",
    log:
        "logs/aggregate/scores.log",
    benchmark:
        "logs/benchmarks/aggregate_scores/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        algorithms=SCORE_ALGORITHMS,
        settings=SCORE_SETTINGS,
        code_hash=get_code_hash("aggregate_scores.py"),
    script:
        "../scripts/aggregate_scores.py"


rule aggregate_samples:
    input:
        tables=get_sample_tables,
    output:
        table="results/aggregate/samples_long.csv",
        parquet="results/aggregate/samples_long.parquet",
    log:
        "logs/aggregate/samples.log",
    benchmark:
        "logs/benchmarks/aggregate_samples/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        code_hash=get_code_hash("aggregate_samples.py"),
    script:
        "../scripts/aggregate_samples.py"


rule aggregate_leaderboards:
    input:
        scores="results/aggregate/scores_long.csv",
        samples="results/aggregate/samples_long.csv",
    output:
        tables=report(
            expand("results/aggregate/leaderboard_{name}.csv", name=LEADERBOARD_NAMES),
            caption="../report/leaderboards.rst",
            category="Leaderboards",
        ),
        pages="results/aggregate/leaderboards.json",
    log:
        "logs/aggregate/leaderboards.log",
    benchmark:
        "logs/benchmarks/aggregate_leaderboards/job.tsv"
    conda:
        "../envs/psybench.yaml"
    params:
        leaderboards=LEADERBOARDS,
        n_boot=config["aggregate"]["n_boot"],
        alpha=config["aggregate"]["alpha"],
        seed=config["aggregate"]["seed"],
        max_projections=config["aggregate"]["max_projections"],
        code_hash=get_code_hash("aggregate_leaderboards.py"),
    script:
        "../scripts/aggregate_leaderboards.py"


rule report_leaderboard:
    input:
        unpack(get_report_human_inputs),
        unpack(get_report_motion_inputs),
        pages="results/aggregate/leaderboards.json",
        tables=expand("results/aggregate/leaderboard_{name}.csv", name=LEADERBOARD_NAMES),
        scores="results/aggregate/scores_long.csv",
    output:
        report=directory("results/report"),
    log:
        "logs/report/leaderboard.log",
    benchmark:
        "logs/benchmarks/report_leaderboard/job.tsv"
    conda:
        "../envs/psybench.yaml"
    # the run's last job, alone on the machine: its figures are drawn in two processes
    threads: 2
    params:
        results_root=get_results_root,
        synthetic=SYNTHETIC_TRACKS,
        motion=get_report_motion_params,
        code_hash=get_report_code_hash(),
    script:
        "../scripts/report_leaderboard.py"
