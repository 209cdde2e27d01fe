# Attention track: the resolved models and every input and params function of
# rules/attention.smk, from config["attention"] (validated and filled with the schema's
# defaults in rules/common.smk).
from psybench.attention.models import pair_movies, saliency_models
from psybench.provenance import callable_modules, code_hash

# input and params functions
ATTENTION = config["attention"]
ATTENTION_ON = "attention" in config["tracks"]
# Resolved once, while the Snakefile is parsed: a bad model entry fails before any job.
ATTENTION_MODELS = saliency_models(config, MODELS["attention"]) if ATTENTION_ON else []
ATTENTION_MOVIES = pair_movies(ATTENTION) if ATTENTION_ON else []
# One feature store per (family, parameters), shared by every model that uses it.
ATTENTION_FEATURES = {m.features: m for m in ATTENTION_MODELS}

# Snakemake does not see edits to imported library modules: each rule carries a code hash.
ATTENTION_CODE = {
    "stimuli": code_hash(["psybench.attention.stimuli", "psybench.attention.ingest", "psybench.io.store"]),
    "gaze": code_hash(["psybench.attention.gaze", "psybench.io.tables"]),
    "evaluate": code_hash(
        [
            "psybench.attention.table1",
            "psybench.attention.evaluate",
            "psybench.attention.tuning",
            "psybench.attention.controls",
            "psybench.attention.movies",
            "psybench.attention.figures",
            "psybench.attention.gaze",
            "psybench.attention.metrics",
        ]
    ),
    "metrics": code_hash(
        [
            "psybench.attention.metrics",
            "psybench.attention.map_metrics",
            "psybench.attention.tuning",
            "psybench.attention.movies",
        ]
    ),
    # the track's rows of the cross-track long score table
    "score_rows": code_hash(
        ["psybench.attention.score_rows", "psybench.attention.metrics", "psybench.aggregate", "psybench.io"]
    ),
}


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


def get_attention_movie_file(wildcards):
    """The movie file of a file-backed movie (an input, so an edited clip reruns and, with
    --cache, gets its own cache key: Snakemake hashes source inputs' content); none for a rendered one."""
    spec = get_attention_movie_spec(wildcards)
    return [spec["file"]] if "file" in spec else []


def get_attention_gaze_files(wildcards):
    """The movie's gaze recordings (inputs, so an edited or replaced recording reruns); none for observers."""
    gaze = get_attention_movie_spec(wildcards).get("gaze") or []
    return list(gaze) if isinstance(gaze, (list, tuple)) else [gaze]


def get_attention_feature_family(wildcards):
    """Registered name or `package.module:function` of the feature store's saliency model."""
    return ATTENTION_FEATURES[wildcards.attention_features].family


def get_attention_feature_params(wildcards):
    """The saliency model's parameters, defaults filled."""
    return dict(ATTENTION_FEATURES[wildcards.attention_features].spec.params)


def get_attention_feature_code(wildcards):
    """Hash of the feature code and of the saliency model's own module (a user's too)."""
    model_module = ATTENTION_FEATURES[wildcards.attention_features].spec.algorithm.function.__module__
    return code_hash(["psybench.attention.features", "psybench.io.store", *callable_modules(model_module)])


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
