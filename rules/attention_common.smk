# Attention track: the resolved models and every input and params function of
# rules/attention.smk, from config["attention"] (validated and filled with the schema's
# defaults in rules/common.smk).
import dataclasses

from psybench.attention.data_kind import movie_data
from psybench.attention.models import map_models_of, metrics_settings, pair_movies, saliency_models
from psybench.handoff import describe_model, job_resource, job_threads

# input and params functions
ATTENTION = config["attention"]
ATTENTION_ON = "attention" in config["tracks"]
# Resolved once, while the Snakefile is parsed: a bad model entry fails before any job.
ATTENTION_MODELS = saliency_models(config, MODELS["attention"]) if ATTENTION_ON else []
# Map-output models (kind "map"): scored untuned on each pair's test movie, one job per model and test movie.
ATTENTION_MAP_MODELS = {m.name: m for m in map_models_of(config, MODELS["attention"])} if ATTENTION_ON else {}
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


def get_attention_movie_file(wildcards):
    """The movie file of a file-backed movie (an input, so an edited clip reruns and, with
    --cache, gets its own cache key: Snakemake hashes source inputs' content); none for a rendered one."""
    spec = get_attention_movie_spec(wildcards)
    return [spec["file"]] if "file" in spec else []


def get_attention_gaze_files(wildcards):
    """The movie's gaze recordings (inputs, so an edited or replaced recording reruns); none for observers."""
    gaze = get_attention_movie_spec(wildcards).get("gaze") or []
    return list(gaze) if isinstance(gaze, (list, tuple)) else [gaze]


# The feature stores of one feature family, one per movie, named store0, store1, ... in the order of
# ATTENTION_MOVIES (Snakemake's cache takes several outputs only when named; a movie name may hold a "-").
ATTENTION_RESPONSE_STORES = {
    f"store{i}": directory(f"results/attention/responses/{{attention_features}}/{movie}.zarr")
    for i, movie in enumerate(ATTENTION_MOVIES)
}


def get_attention_features_spec(wildcards):
    """The resolved model of a feature family's job (its feature key, psybench.attention.models.feature_key)."""
    try:
        return ATTENTION_FEATURES[wildcards.attention_features].spec
    except KeyError:
        raise ValueError(f"attention.models has no feature family {wildcards.attention_features!r}") from None


def get_attention_responses_inputs(wildcards):
    """Every movie's stimulus store and, for a file-backed movie, its file (the RGB frames of deep feature
    models are decoded again from it; an input, so an edited clip reruns)."""
    out = [f"results/attention/stimuli/{movie}.zarr" for movie in ATTENTION_MOVIES]
    return out + [ATTENTION["movies"][m]["file"] for m in ATTENTION_MOVIES if "file" in ATTENTION["movies"][m]]


def get_attention_feature_batch(wildcards):
    """The feature family's store of every movie: [{stimulus, movie_file, out, model (its description,
    psybench.handoff.describe_model), code_hash}], where code_hash covers the job's code and the saliency
    model's own module with its imports (a user's too)."""
    spec = get_attention_features_spec(wildcards)
    code = get_code_hash("attention_responses.py", modules=(spec.algorithm.function.__module__,))
    # named by its family: a store shared by models of equal family and parameters depends on no label
    model = describe_model(dataclasses.replace(spec, name=spec.algorithm.name))
    return [
        {
            "stimulus": f"results/attention/stimuli/{movie}.zarr",
            "movie_file": ATTENTION["movies"][movie].get("file"),
            "out": f"results/attention/responses/{wildcards.attention_features}/{movie}.zarr",
            "model": model,
            "code_hash": code,
        }
        for movie in ATTENTION_MOVIES
    ]


def get_attention_responses_threads(wildcards):
    """The feature family's resources.threads (default 1)."""
    return job_threads([get_attention_features_spec(wildcards)], 1)


def get_attention_responses_resource(key, default):
    """A resources function: the feature family's ``resources[key]``, else ``default``."""

    def resource(wildcards):
        return job_resource([get_attention_features_spec(wildcards)], key, default)

    return resource


def get_attention_feature_stores(wildcards=None):
    """{movie: {model name: feature store}} of every movie of the (train, test) pairs."""
    return {
        movie: {m.name: f"results/attention/responses/{m.features}/{movie}.zarr" for m in ATTENTION_MODELS}
        for movie in ATTENTION_MOVIES
    }


def get_attention_feature_inputs(wildcards):
    return sorted({path for stores in get_attention_feature_stores().values() for path in stores.values()})


def get_attention_gaze_tables(wildcards=None):
    """{movie: gaze table} of every movie of the (train, test) pairs."""
    return {movie: f"results/attention/gaze/{movie}.csv" for movie in ATTENTION_MOVIES}


def get_attention_gaze_counts(wildcards=None):
    """The sample counts of every recorded (not synthetic) movie of the pairs, shown in the report."""
    return [
        f"results/attention/gaze/{movie}.counts.csv"
        for movie in ATTENTION_MOVIES
        if "gaze" in ATTENTION["movies"][movie]
    ]


def get_attention_gaze_data():
    """{movie: 'recorded' or 'synthetic'} of every movie of the pairs: the tables' ``data`` column."""
    return movie_data({movie: ATTENTION["movies"][movie] for movie in ATTENTION_MOVIES})


def get_attention_rows():
    """Table 1 rows, one per model and L: [{features: model name, L}]."""
    return [row for m in ATTENTION_MODELS for row in m.rows()]


def get_attention_metrics_settings():
    """The evaluation settings the metrics' tuning shares with Table 1, and the metrics' own."""
    return metrics_settings(ATTENTION)


# "<model>/L<L>" folder of every Table 1 row: the parts a training movie's job writes.
ATTENTION_PART_DIRS = [f"{row['features']}/L{row['L']}" for row in get_attention_rows()]


def get_attention_parts():
    """The evaluation parts, one per Table 1 model row and training movie: [{features, L, train, table, curves}]."""
    trains = list(dict.fromkeys(tr for tr, _te in ATTENTION["pairs"])) if ATTENTION_ON else []
    out = []
    for row in get_attention_rows():
        for tr in trains:
            base = f"results/attention/evaluate/{row['features']}/L{row['L']}/{tr}"
            out.append({**row, "train": tr, "table": f"{base}/table.csv", "curves": f"{base}/curves.csv"})
    return out


def get_attention_train_parts(wildcards):
    """The parts of a training movie, one per Table 1 model row: [{features, L, table, curves}]."""
    return [p for p in get_attention_parts() if p["train"] == wildcards.attention_train]


def _attention_part_movies(wildcards):
    """The training movie of a part and the test movies paired with it."""
    tr = wildcards.attention_train
    return list(dict.fromkeys([tr, *(te for t, te in ATTENTION["pairs"] if t == tr)]))


def get_attention_train_stores(wildcards):
    """{model name: {movie: feature store}} of every model on a training movie and its test movies."""
    movies = _attention_part_movies(wildcards)
    return {
        m.name: {mv: f"results/attention/responses/{m.features}/{mv}.zarr" for mv in movies} for m in ATTENTION_MODELS
    }


def get_attention_train_features(wildcards):
    return sorted({p for stores in get_attention_train_stores(wildcards).values() for p in stores.values()})


def get_attention_part_gaze(wildcards):
    return [f"results/attention/gaze/{m}.csv" for m in _attention_part_movies(wildcards)]


def get_attention_metrics_part_stores(wildcards):
    """{movie: {model name: feature store}} of a training movie and its test movies (a metrics part)."""
    stores = get_attention_feature_stores()
    return {mv: stores[mv] for mv in _attention_part_movies(wildcards)}


def get_attention_metrics_parts():
    """{training movie: its metrics part}, the training movies in the order of the pairs."""
    trains = dict.fromkeys(tr for tr, _te in ATTENTION["pairs"]) if ATTENTION_ON else {}
    return {tr: f"results/attention/metrics/{tr}.csv" for tr in trains}


def get_attention_scanpath_features(wildcards):
    """One feature store of a training movie: its frame count, rate and gaze frame size."""
    return f"results/attention/responses/{ATTENTION_MODELS[0].features}/{wildcards.attention_movie}.zarr"


def get_attention_map_tests():
    """The test movies of the (train, test) pairs, in the order of the pairs."""
    return list(dict.fromkeys(te for _tr, te in ATTENTION["pairs"])) if ATTENTION_ON else []


def get_attention_map_tables(wildcards=None):
    """The map models' metrics rows, one table per map model and test movie (none without map models)."""
    return [
        f"results/attention/maps/{name}/{te}.csv" for name in ATTENTION_MAP_MODELS for te in get_attention_map_tests()
    ]


def get_attention_map_spec(wildcards):
    """The map model of a rule's wildcards."""
    try:
        return ATTENTION_MAP_MODELS[wildcards.attention_map]
    except KeyError:
        raise ValueError(f"attention.models has no map model {wildcards.attention_map!r}") from None


def get_attention_map_model(wildcards):
    """The description of a map model (psybench.handoff.describe_model: with its weights' digest)."""
    return describe_model(get_attention_map_spec(wildcards))


def get_attention_map_trains(wildcards):
    """The training movies paired with a test movie."""
    return list(dict.fromkeys(tr for tr, te in ATTENTION["pairs"] if te == wildcards.attention_movie))


def get_attention_map_code_hash(wildcards):
    """The job's code and the map model's own module with its imports (a user's too)."""
    own = get_attention_map_spec(wildcards).algorithm.function.__module__
    return get_code_hash("attention_map_scores.py", modules=(own,))


def get_attention_map_threads(wildcards):
    """The map model's resources.threads (default 1)."""
    return job_threads([get_attention_map_spec(wildcards)], 1)


def get_attention_map_resource(key, default):
    """A resources function: the map model's ``resources[key]``, else ``default``."""

    def resource(wildcards):
        return job_resource([get_attention_map_spec(wildcards)], key, default)

    return resource
