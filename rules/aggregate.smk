# Aggregation: every track's results as rows of the long score table, their
# concatenation, and the leaderboards (Pareto set and fronts next to average ranks,
# Cabezas & Trujillo 2011, A non-linear quantitative evaluation approach for disparity
# estimation, VISAPP, sec. 3); the HTML report renders them. Input and params
# functions are in aggregate_common.smk (snakemake --lint wants no functions next to rules).


include: "aggregate_common.smk"


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
