# Attention track (Shic & Scassellati 2007): stimuli -> gaze -> features -> Table 1 + metrics.
# Included by the main Snakefile; needs the `attention` config section
# (config/config.yaml, validated by config/schema.yaml). Outputs under results/attention/.

from functools import partial as _partial

from psybench.attention import workflow as _attention_wf
from psybench.provenance import code_hash as _attention_code_hash

_ATT = config.get("attention", {})
attention_targets = _partial(_attention_wf.rule_targets, _ATT)  # for the main `rule all`
_attention_movie_spec = _partial(_attention_wf.rule_movie_spec, _ATT)
_attention_feature_params = _partial(_attention_wf.rule_feature_params, _ATT)


wildcard_constraints:
    attention_movie="[A-Za-z0-9_-]+",
    attention_kind="raw|pyramid|itti",


rule attention_stimulus:
    cache: True
    output:
        store=directory("results/attention/stimuli/{attention_movie}.zarr"),
    log:
        "logs/attention/stimulus/{attention_movie}.log",
    params:
        spec=_attention_movie_spec,
        grid=_ATT.get("grid", [40, 30]),
        code=_attention_code_hash(["psybench.attention.stimuli", "psybench.io.store"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_stimulus.py"


rule attention_gaze:
    input:
        stimulus="results/attention/stimuli/{attention_movie}.zarr",
    output:
        table="results/attention/gaze/{attention_movie}.csv",
        parquet="results/attention/gaze/{attention_movie}.parquet",
    log:
        "logs/attention/gaze/{attention_movie}.log",
    params:
        spec=_attention_movie_spec,
        code=_attention_code_hash(["psybench.attention.gaze", "psybench.io.tables"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_gaze.py"


rule attention_features:
    cache: True
    input:
        stimulus="results/attention/stimuli/{attention_movie}.zarr",
    output:
        store=directory("results/attention/features/{attention_kind}/{attention_movie}.zarr"),
    log:
        "logs/attention/features/{attention_kind}/{attention_movie}.log",
    threads: 2
    resources:
        mem_mb=1000,
    params:
        kind="{attention_kind}",
        features=_attention_feature_params,
        chunk_frames=_ATT.get("chunk_frames", 64),
        lags_ms=_ATT.get("lags_ms", [100, 300]),
        code=_attention_code_hash(["psybench.attention.features", "psybench.io.store"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_features.py"


rule attention_evaluate:
    input:
        features=_attention_wf.rule_feature_paths(_ATT),
        gaze=_attention_wf.rule_gaze_paths(_ATT),
    output:
        table="results/attention/table1.csv",
        table_parquet="results/attention/table1.parquet",
        curves="results/attention/curves.csv",
        curves_parquet="results/attention/curves.parquet",
        figure=report(
            "results/attention/curves.png",
            caption="../report/attention_curves.rst",
            category="Attention",
            subcategory="Table 1",
        ),
    log:
        "logs/attention/evaluate.log",
    params:
        cfg={k: _ATT.get(k) for k in ("models", "pairs", "lags_ms", "evaluation")},
        feature_keys=_attention_wf.rule_feature_keys(_ATT),
        movies=_attention_wf.rule_movies(_ATT),
        code=_attention_code_hash(["psybench.attention.evaluate", "psybench.attention.gaze"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_evaluate.py"


rule attention_metrics:
    input:
        features=_attention_wf.rule_feature_paths(_ATT),
        gaze=_attention_wf.rule_gaze_paths(_ATT),
    output:
        table="results/attention/metrics.csv",
        parquet="results/attention/metrics.parquet",
    log:
        "logs/attention/metrics.log",
    params:
        cfg={k: _ATT.get(k) for k in ("models", "pairs", "lags_ms", "evaluation", "metrics")},
        feature_keys=_attention_wf.rule_feature_keys(_ATT),
        movies=_attention_wf.rule_movies(_ATT),
        code=_attention_code_hash(["psybench.attention.metrics", "psybench.attention.evaluate"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_metrics.py"


rule attention_all:
    input:
        attention_targets(),
