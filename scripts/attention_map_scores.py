"""Snakemake script of rule attention_map_scores: a map-output model scored untuned on one test movie."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench._malloc import keep_freed_memory  # noqa: E402

keep_freed_memory()  # each batch's network and pooling temporaries reused, not page-faulted in again

from psybench.attention.pipeline import map_scores  # noqa: E402

settings = snakemake.params.settings  # noqa: F821
out = map_scores(
    snakemake.output.table,  # noqa: F821
    snakemake.params.model,  # noqa: F821
    snakemake.wildcards.attention_movie,  # noqa: F821
    snakemake.params.trains,  # noqa: F821
    snakemake.input.stimulus,  # noqa: F821
    snakemake.input.gaze,  # noqa: F821
    movie_file=snakemake.input.movie[0] if snakemake.input.movie else None,  # noqa: F821
    lags_ms=settings["lags_ms"],
    threads=snakemake.threads,  # noqa: F821
    density_sigma=settings["density_sigma"],
    n_splits=settings["n_splits"],
    seed=settings["evaluation"]["seed"],
    evaluation={k: v for k, v in settings["evaluation"].items() if k.startswith("split")},
)
print(f"map model {snakemake.wildcards.attention_map}: {out}", file=sys.stderr)  # noqa: F821
