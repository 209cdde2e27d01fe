"""The attention track's chain: each stage's function, named once, for the workflow and for ``psybench.score``.

``scripts/attention_<stage>.py`` call these names, one per rule of
``rules/attention.smk``, and :func:`score` calls the same functions in the rules'
order for one saliency model in one process, with the same settings from the
``attention`` config section, so its rows equal the workflow's rows for that model
(Shic & Scassellati 2007, sec. 4-5):

1. ``stimuli``: each movie of the (train, test) pairs rendered or ingested
   (:func:`psybench.attention.stimuli.write_movie_store`), or an in-memory movie
   ingested frame by frame (:func:`psybench.attention.ingest.ingest_frames`);
2. ``gaze``: synthetic observers or recordings resampled to frames
   (:func:`psybench.attention.gaze.write_gaze_table`);
3. ``responses``: the models' base maps of a movie
   (:func:`psybench.attention.responses.write_feature_stores`);
4. Table 1: ``controls``, the random controls' trajectories per training movie
   (:func:`psybench.attention.table1.run_control_scanpaths`), then ``evaluate_part``,
   per training movie, for each L, the Fisher filters of people and controls trained
   and tested (:func:`~psybench.attention.table1.run_evaluation_parts`), joined in
   configured order by ``evaluate`` (:func:`~psybench.attention.table1.gather_evaluation`);
5. ``metrics_part``: the saliency metrics of the untuned and tuned maps with their
   leave-one-observer-out ceiling per training movie
   (:func:`psybench.attention.metrics.run_metrics`), joined by ``metrics``
   (:func:`~psybench.attention.metrics.gather_metrics`);
6. ``score_rows`` (:func:`psybench.attention.score_rows.score_rows`).

Each name is loaded on first use (:mod:`psybench._lazy`), so a job imports, and its
rule's code hash covers (:func:`psybench.provenance.rule_code_hash`), its own stage only.

Every draw is seeded by the config, and none depends on the other models of a run
(the workflow's job per training movie trains each model row on its own, with the same
draws, and the metrics' random negatives depend on the fixations only), so one model
scored alone gets the workflow's numbers.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psybench._lazy import lazy_exports

if TYPE_CHECKING:
    import pandas as pd

    from psybench.registry import ModelSpec

#: The stages in the order the rules and :func:`score` run them: name -> ``module:function``.
STAGES = {
    "stimuli": "psybench.attention.stimuli:write_movie_store",
    "gaze": "psybench.attention.gaze.movie_table:write_gaze_table",
    "responses": "psybench.attention.responses:write_feature_stores",
    "controls": "psybench.attention.table1:run_control_scanpaths",
    "evaluate_part": "psybench.attention.table1:run_evaluation_parts",
    "evaluate": "psybench.attention.table1:gather_evaluation",
    "metrics_part": "psybench.attention.metrics:run_metrics",
    "metrics": "psybench.attention.metrics:gather_metrics",
    "score_rows": "psybench.attention.score_rows:score_rows",
}
# The untuned map-output models' scores, one job per map model and test movie, beside the chain.
OTHER_STAGES = {"map_scores": "psybench.attention.map_models:write_map_model_rows"}

__all__ = ["STAGES", "OTHER_STAGES", *STAGES, *OTHER_STAGES, "score", "attention_model"]
__getattr__, __dir__ = lazy_exports(__name__, {**STAGES, **OTHER_STAGES})

#: ``source`` of the Table 1 rows, as the workflow writes it (relative to the results folder).
TABLE1_FIGURE = "attention/curves.png"


def attention_model(entry: Mapping[str, Any], spec: ModelSpec, section: Mapping[str, Any]):
    """The :class:`~psybench.attention.models.SaliencyModel` of a :func:`psybench.score` call.

    ``L`` (the neighbourhood side(s) of the feature vector, sec. 5.2) comes from the
    entry; without one, from the ``attention.models`` entry of the same name (so
    ``score("raw", "attention")`` scores the configured rows of ``raw``), else 1.
    """
    from psybench.attention.models import saliency_models
    from psybench.config import ConfigError

    L = entry.get("L")
    if L is None:
        L = next((m.get("L") for m in section.get("models") or [] if m.get("name") == spec.name), 1)
    try:
        (model,) = saliency_models({"attention": {"models": [{"name": spec.name, "L": L}]}}, {spec.name: spec})
    except ConfigError:
        raise ValueError(f"psybench.score: attention model {spec.name!r}: L={L!r} is not a positive odd integer "
                         "or a list of them (the side of the L x L neighbourhood of a feature vector)") from None
    return model


def _movie_specs(section: Mapping[str, Any], stimuli, gaze, inputs: Path) -> dict[str, dict[str, Any]]:
    """The config entries of the pairs' movies, in-memory gaze written to ``inputs`` as CSV recordings."""
    import pandas as pd

    from psybench.attention.models import pair_movies
    from psybench.config import ConfigError
    from psybench.io.tables import write_table

    movies = {name: dict(spec or {}) for name, spec in (section.get("movies") or {}).items()}
    extra = [m for m in (stimuli if isinstance(stimuli, Mapping) else {}) if m not in movies]
    movies.update({m: {} for m in extra})
    names = pair_movies({**section, "movies": movies})
    if not names:
        raise ConfigError("config key attention.pairs: no (train, test) pair to score")
    for what, given in (("stimuli", stimuli), ("gaze", gaze)):
        unused = [m for m in (given if isinstance(given, Mapping) else {}) if m not in names]
        if unused:
            raise ValueError(f"psybench.score: movie(s) {unused} of {what}= are in no (train, test) pair of "
                             f"attention.pairs {section['pairs']}; e.g. overrides={{'attention': {{'pairs': "
                             f"[[{unused[0]!r}, {unused[0]!r}]]}}}}")
    for movie, recording in (gaze or {}).items():
        spec = {k: v for k, v in movies[movie].items() if k not in ("observers", "gaze_columns")}
        if isinstance(recording, pd.DataFrame):
            missing = [c for c in ("subject", "t", "x", "y") if c not in recording.columns]
            if missing:
                raise ValueError(f"psybench.score: gaze of movie {movie!r} lacks column(s) {missing}; expected "
                                 "subject, t (ms from movie onset), x, y (movie pixels), optional valid")
            path = write_table(recording, inputs / f"{movie}_gaze.csv")
            spec.update(gaze=str(path), gaze_format="csv")
        else:
            spec["gaze"] = [os.fspath(p) for p in recording] if isinstance(recording, (list, tuple)) else os.fspath(
                recording)
        movies[movie] = spec
    for movie in names:
        spec = movies[movie]
        if not ({"observers", "gaze"} & set(spec)):
            raise ValueError(f"psybench.score: movie {movie!r} has no gaze: give gaze={{{movie!r}: <file or "
                             f"DataFrame of subject, t (ms), x, y>}} or attention.movies.{movie}.gaze")
        recordings = spec.get("gaze") or []
        for path in recordings if isinstance(recordings, list) else [recordings]:
            if not Path(path).is_file():
                raise FileNotFoundError(f"attention.movies.{movie}.gaze: gaze file {path} does not exist")
    return {m: movies[m] for m in names}


def _stimulus(movie: str, spec: Mapping[str, Any], given_stimuli, out: Path, grid: Sequence[int]) -> Path:
    """The stimulus store of ``movie``: given (a store, a folder of them, frames) or rendered/ingested to ``out``."""
    from psybench.attention.ingest import ingest_frames

    given = given_stimuli.get(movie) if isinstance(given_stimuli, Mapping) else None
    if given_stimuli is not None and not isinstance(given_stimuli, Mapping):
        path = Path(given_stimuli) / f"{movie}.zarr"
        if not path.exists():
            raise FileNotFoundError(f"stimulus store {path} is missing (stimuli={os.fspath(given_stimuli)!r} must "
                                    f"hold a store of every movie of attention.pairs)")
        return path
    if isinstance(given, (str, os.PathLike)):
        if not Path(given).exists():
            raise FileNotFoundError(f"stimulus store {given} of movie {movie!r} does not exist")
        return Path(given)
    if given is not None:
        frames, info = (given.get("frames"), given) if isinstance(given, Mapping) else (given, {})
        return ingest_frames(frames, out, frames_per_s=info.get("frames_per_s", spec.get("frames_per_s")),
                             grid=tuple(grid), px_per_deg=info.get("px_per_deg", spec.get("px_per_deg")), name=movie)
    from psybench.attention import pipeline as stage

    return stage.stimuli(movie, spec, out, grid=grid)


def score(
    entry: Mapping[str, Any],
    spec: ModelSpec,
    cfg: Mapping[str, Any],
    experiment: str | None,
    work: Path,
    *,
    given_stimuli=None,
    given_gaze: Mapping[str, Any] | None = None,
    threads: int = 1,
    progress,
) -> pd.DataFrame:
    """Score one saliency model through :data:`STAGES`; its rows of ``results/aggregate/scores_attention.csv``.

    Parameters
    ----------
    entry : mapping
        The model's entry (``name``, ``algorithm`` or ``callable``, ``params``, optional ``L``).
    spec : ModelSpec
        ``entry`` resolved (:func:`psybench.registry.resolve_model`, track attention).
    cfg : mapping
        A validated config with its defaults filled; its ``attention`` section gives
        the movies, pairs and settings.
    experiment : {None, 'table1', 'saliency_metrics'}
        Only the Table 1 rows, or only the saliency metrics' rows (the other stage is skipped).
    work : Path
        Where the stores and tables are written.
    given_stimuli : path or mapping, optional
        A folder of stimulus stores (a run's ``results/attention/stimuli``), or per
        movie a store path, an array of frames, shape (T, H, W) or (T, H, W, 3)
        (frame rate from ``attention.movies.<movie>.frames_per_s``), or a mapping
        ``{"frames": array, "frames_per_s": fps, "px_per_deg": ppd}``. Movies not in
        the config are added (name them in ``attention.pairs``).
    given_gaze : mapping, optional
        Per movie, recordings replacing its configured gaze: a file or list of files
        (read with its ``gaze_format``), or a DataFrame of raw samples with columns
        ``subject, t`` (ms from movie onset), ``x, y`` (movie pixels) and optional ``valid``.
    threads : int
        Workers of the feature computation (results do not depend on it).
    progress : psybench.api._Steps
        Counts the stages.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`psybench.aggregate.table.SCORE_COLUMNS`: the Table 1 rows
        (model = the model's name, metric ``median_rp_<group>``) and the metrics rows
        (model ``"<name> L=<L> untuned|tuned"``), experiment ``<train>_on_<test>``.
    """
    from psybench.attention import EXPERIMENTS
    from psybench.attention import pipeline as stage
    from psybench.attention.data_kind import movie_data
    from psybench.attention.defaults import EvaluationSettings
    from psybench.attention.models import feature_key, metrics_settings

    if experiment is not None and experiment not in EXPERIMENTS:
        raise ValueError(f"unknown attention experiment {experiment!r}; known: {list(EXPERIMENTS)}")
    section = copy.deepcopy(dict(cfg["attention"]))
    if spec.kind == "map":
        return _score_map_model(entry, spec, section, experiment, work, given_stimuli=given_stimuli,
                                given_gaze=given_gaze, threads=threads, progress=progress)
    model = attention_model(entry, spec, section)
    specs = _movie_specs(section, given_stimuli, given_gaze, work / "inputs")
    pairs = [tuple(p) for p in section["pairs"]]
    trains = list(dict.fromkeys(tr for tr, _te in pairs))
    ev = EvaluationSettings.from_config(section["evaluation"])
    with_table1, with_metrics = experiment in (None, "table1"), experiment in (None, "saliency_metrics")
    progress.start(total=3 * len(specs) + with_table1 * (len(trains) * 2 + 1) + with_metrics * (len(trains) + 1) + 1)
    key = feature_key(spec)
    features, tables = {}, {}
    for movie, movie_spec in specs.items():
        store = _stimulus(movie, movie_spec, given_stimuli, work / "stimuli" / f"{movie}.zarr", section["grid"])
        progress.step(f"stimulus {movie}")
        tables[movie] = work / "gaze" / f"{movie}.csv"
        stage.gaze(movie, movie_spec, store, tables[movie])
        progress.step(f"gaze {movie}")
        features[movie] = work / "responses" / key / f"{movie}.zarr"
        stage.responses(store, [{"out": features[movie], "model": spec}], chunk_frames=section["chunk_frames"],
                        lags_ms=section["lags_ms"], num_workers=threads)
        progress.step(f"{spec.name} features on {movie}")
    files = {}
    if with_table1:
        parts = []
        for tr in trains:
            scanpaths = work / "controls" / f"{tr}.csv"
            stage.controls(tr, features[tr], tables[tr], out=scanpaths, evaluation=ev)
            scanpaths = scanpaths.with_suffix(".parquet")  # reads the Parquet sibling, as rules/attention.smk does
            progress.step(f"control scanpaths of {tr}")
            movies = list(dict.fromkeys([tr, *(te for t, te in pairs if t == tr)]))
            rows = []
            for row in model.rows():
                base = work / "evaluate" / model.name / f"L{row['L']}" / tr
                rows.append({**row, "train": tr, "table": base / "table.csv", "curves": base / "curves.csv"})
            # every row of the training movie in one call, as the rule's job does
            stage.evaluate_part({model.name: {m: features[m] for m in movies}}, tables, scanpaths=scanpaths,
                                parts=rows, train=tr, pairs=pairs, lags_ms=section["lags_ms"], evaluation=ev)
            parts.extend(rows)
            progress.step(f"Table 1 of {model.name} trained on {tr}")
        files["table1"] = work / "attention" / "table1.csv"
        stage.evaluate(parts, models=model.rows(), pairs=pairs, table_path=files["table1"],
                       curves_path=work / "attention" / "curves.csv", figure_path=work / TABLE1_FIGURE,
                       data=movie_data(specs))
        progress.step("Table 1")
    if with_metrics:
        metric_parts = {}
        for tr in trains:  # one part per training movie, as the rule's jobs do
            metric_parts[tr] = work / "metrics" / f"{tr}.csv"
            stage.metrics_part({m: {model.name: features[m]} for m in specs}, tables, models=model.rows(),
                               pairs=pairs, out=metric_parts[tr], train=tr, **metrics_settings(section))
            progress.step(f"saliency metrics trained on {tr}")
        files["metrics"] = work / "attention" / "metrics.csv"
        stage.metrics(metric_parts, models=model.rows(), pairs=pairs, out=files["metrics"], data=movie_data(specs))
        progress.step("saliency metrics")
    rows = stage.score_rows(**files, table1_figure=TABLE1_FIGURE if with_table1 else None, results_root=work)
    progress.step("score rows")
    return rows.reset_index(drop=True)


def _score_map_model(entry, spec, section, experiment, work, *, given_stimuli, given_gaze, threads, progress):
    """:func:`score` of a map-output model (kind ``map``): its untuned rows, as the workflow's
    ``attention_map_scores`` jobs and the metrics join give them (no Table 1: nothing is tuned)."""
    from psybench.attention import pipeline as stage
    from psybench.attention.models import metrics_settings

    if experiment == "table1":
        raise ValueError(f"psybench.score: {spec.name!r} is a map-output model (kind map), scored untuned by the "
                         "saliency metrics; it has no Table 1 rows (benchmark 'attention/saliency_metrics')")
    if entry.get("L") is not None:
        raise ValueError(f"psybench.score: {spec.name!r} is a map-output model (kind map): its maps are scored as "
                         f"given, without the Fisher tuning that L sets; drop L={entry['L']!r}")
    specs = _movie_specs(section, given_stimuli, given_gaze, work / "inputs")
    pairs = [tuple(p) for p in section["pairs"]]
    tests = list(dict.fromkeys(te for _tr, te in pairs))
    settings = metrics_settings(section)
    progress.start(total=2 * len(specs) + len(tests) + 2)
    stores, tables = {}, {}
    for movie, movie_spec in specs.items():
        stores[movie] = _stimulus(movie, movie_spec, given_stimuli, work / "stimuli" / f"{movie}.zarr",
                                  section["grid"])
        progress.step(f"stimulus {movie}")
        tables[movie] = work / "gaze" / f"{movie}.csv"
        stage.gaze(movie, movie_spec, stores[movie], tables[movie])
        progress.step(f"gaze {movie}")
    maps = []
    for te in tests:  # one table per test movie, as the rule's jobs write them
        maps.append(work / "maps" / spec.name / f"{te}.csv")
        stage.map_scores(maps[-1], spec, te, list(dict.fromkeys(tr for tr, t in pairs if t == te)), stores[te],
                         tables[te], movie_file=specs[te].get("file"), lags_ms=settings["lags_ms"], threads=threads,
                         density_sigma=settings["density_sigma"], n_splits=settings["n_splits"],
                         seed=settings["evaluation"]["seed"])
        progress.step(f"{spec.name} maps scored on {te}")
    metrics = work / "attention" / "metrics.csv"
    stage.metrics({}, models=[], pairs=pairs, out=metrics, maps=maps)
    progress.step("saliency metrics")
    rows = stage.score_rows(metrics=metrics, results_root=work)
    progress.step("score rows")
    return rows.reset_index(drop=True)
