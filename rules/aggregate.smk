# Aggregation (papers/001): Table 1, Pareto set and fronts next to average ranks.


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
    script:
        "../scripts/aggregate_motion.py"
