# Attention track (Shic & Scassellati 2007): stimuli -> gaze -> features -> Table 1 + metrics.
# Included by the main Snakefile after rules/common.smk, which validates the config and
# fills the defaults of config/schema.yaml. Outputs under results/attention/.

from psybench.attention.models import pair_movies, saliency_models
from psybench.provenance import code_hash


# input and params functions
ATTENTION = config["attention"]
ATTENTION_ON = "attention" in config["tracks"]
# Resolved once, while the Snakefile is parsed: a bad model entry fails before any job.
ATTENTION_MODELS = saliency_models(config) if ATTENTION_ON else []
ATTENTION_MOVIES = pair_movies(ATTENTION) if ATTENTION_ON else []
# One feature store per (family, parameters), shared by every model that uses it.
ATTENTION_FEATURES = {m.features: m for m in ATTENTION_MODELS}


def attention_targets():
    """Final outputs of the attention track (for the main `rule all`)."""
    if not ATTENTION_ON:
        return []
    return [
        "results/attention/table1.csv",
        "results/attention/curves.csv",
        "results/attention/curves.png",
        "results/attention/metrics.csv",
    ]


def get_attention_movie_spec(wildcards):
    """`attention.movies[<movie>]` of a rule's wildcards."""
    try:
        return ATTENTION["movies"][wildcards.attention_movie]
    except KeyError:
        raise ValueError(f"attention.movies has no movie {wildcards.attention_movie!r}") from None


def get_attention_feature_family(wildcards):
    """Registered name or `package.module:function` of the feature store's saliency model."""
    return ATTENTION_FEATURES[wildcards.attention_features].family


def get_attention_feature_params(wildcards):
    """The saliency model's parameters, defaults filled."""
    return dict(ATTENTION_FEATURES[wildcards.attention_features].spec.params)


def get_attention_feature_code(wildcards):
    """Hash of the feature code and of the saliency model's own module (a user's too)."""
    model_module = ATTENTION_FEATURES[wildcards.attention_features].spec.algorithm.function.__module__
    return code_hash(["psybench.attention.features", "psybench.io.store", model_module])


def get_attention_feature_stores(wildcards=None):
    """{movie: {model name: feature store}} of every movie of the (train, test) pairs."""
    return {
        movie: {m.name: f"results/attention/features/{m.features}/{movie}.zarr" for m in ATTENTION_MODELS}
        for movie in ATTENTION_MOVIES
    }


def get_attention_feature_inputs(wildcards):
    return sorted({path for stores in get_attention_feature_stores().values() for path in stores.values()})


def get_attention_gaze_tables(wildcards=None):
    """{movie: gaze table} of every movie of the (train, test) pairs."""
    return {movie: f"results/attention/gaze/{movie}.csv" for movie in ATTENTION_MOVIES}


def get_attention_rows():
    """Table 1 rows, one per model and L: [{features: model name, L}]."""
    return [row for m in ATTENTION_MODELS for row in m.rows()]


def get_attention_metrics_settings():
    """The evaluation settings the metrics' tuning shares with Table 1, and the metrics' own."""
    ev = ATTENTION["evaluation"]
    shared = {k: ev[k] for k in ("n_negatives", "min_dist_frac", "seed", "in_memory_mb")}
    return {"lags_ms": ATTENTION["lags_ms"], **shared, **ATTENTION["metrics"]}


wildcard_constraints:
    attention_movie="[A-Za-z0-9_-]+",
    attention_features="[A-Za-z0-9_.-]+",


rule attention_stimulus:
    cache: True
    output:
        store=directory("results/attention/stimuli/{attention_movie}.zarr"),
    log:
        "logs/attention/stimulus/{attention_movie}.log",
    params:
        spec=get_attention_movie_spec,
        grid=ATTENTION["grid"],
        code=code_hash(["psybench.attention.stimuli", "psybench.io.store"]),
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
        spec=get_attention_movie_spec,
        code=code_hash(["psybench.attention.gaze", "psybench.io.tables"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_gaze.py"


rule attention_features:
    cache: True
    input:
        stimulus="results/attention/stimuli/{attention_movie}.zarr",
    output:
        store=directory("results/attention/features/{attention_features}/{attention_movie}.zarr"),
    log:
        "logs/attention/features/{attention_features}/{attention_movie}.log",
    threads: 2
    resources:
        mem_mb=1000,
    params:
        family=get_attention_feature_family,
        params=get_attention_feature_params,
        chunk_frames=ATTENTION["chunk_frames"],
        lags_ms=ATTENTION["lags_ms"],
        code=get_attention_feature_code,
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_features.py"


rule attention_evaluate:
    input:
        features=get_attention_feature_inputs,
        gaze=list(get_attention_gaze_tables().values()),
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
        feature_stores=get_attention_feature_stores(),
        gaze_tables=get_attention_gaze_tables(),
        models=get_attention_rows(),
        pairs=ATTENTION["pairs"],
        lags_ms=ATTENTION["lags_ms"],
        evaluation=ATTENTION["evaluation"],
        code=code_hash(
            [
                "psybench.attention.table1",
                "psybench.attention.evaluate",
                "psybench.attention.tuning",
                "psybench.attention.controls",
                "psybench.attention.movies",
                "psybench.attention.figures",
                "psybench.attention.gaze",
            ]
        ),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_evaluate.py"


rule attention_metrics:
    input:
        features=get_attention_feature_inputs,
        gaze=list(get_attention_gaze_tables().values()),
    output:
        table="results/attention/metrics.csv",
        parquet="results/attention/metrics.parquet",
    log:
        "logs/attention/metrics.log",
    params:
        feature_stores=get_attention_feature_stores(),
        gaze_tables=get_attention_gaze_tables(),
        models=get_attention_rows(),
        pairs=ATTENTION["pairs"],
        settings=get_attention_metrics_settings(),
        code=code_hash(["psybench.attention.metrics", "psybench.attention.tuning", "psybench.attention.movies"]),
    conda:
        "../envs/psybench.yaml"
    script:
        "../scripts/attention_metrics.py"


rule attention_all:
    input:
        attention_targets(),
