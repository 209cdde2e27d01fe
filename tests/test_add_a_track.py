"""The architecture doc's "add a track" list, followed for a toy track, takes it through every core step.

A toy track (counting dots) is written as a package in a temporary folder and added
exactly where docs/architecture.md ("A track.") says; it must then pass config
validation (schema and its own checks), the registry (its model and benchmark), the
labels and the leaderboard criteria check (its declared metrics), its score rows into
the long table, and a leaderboard. The list's places are checked against the doc.
"""

from __future__ import annotations

import functools
import re
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import psybench.api
import psybench.model_params
import psybench.registry as registry
import psybench.tracks
from psybench._yaml import safe_load
from psybench.aggregate.labels import criterion_label, criterion_problem, criterion_unit
from psybench.aggregate.table import leaderboard, write_scores
from psybench.benchmarks import benchmarks
from psybench.config import SCHEMA_PATH, ConfigError, check_schema, prepare_workflow

ROOT = Path(__file__).resolve().parents[1]

TOY = {
    "__init__.py": '''
        """Toy track: count the dots of an image (a test of the "add a track" list)."""
        from psybench.tracks import Metric

        TITLE = "Toy"
        BENCHMARK = "toy_dots"
        PAPER = "A toy paper (2026)"
        BIBTEX = "@misc{toy}"
        EXPERIMENTS = ("dots",)
        METRICS = (Metric("count_error", "absolute count error", "dots", "lower"),)
        ''',
    "stimuli.py": '''
        import numpy as np

        def render(n_images, size, seed):
            """Images with k = 1..n_images dots at random cells, and k."""
            rng = np.random.default_rng(seed)
            images = np.zeros((n_images, size, size), np.float32)
            for k in range(1, n_images + 1):
                images[k - 1].flat[rng.choice(size * size, k, replace=False)] = 1.0
            return images, np.arange(1, n_images + 1)
        ''',
    "models.py": '''
        from psybench.registry import register

        @register("toy_threshold", track="toy", kind="counter")
        def threshold(images, *, level=0.5):
            """Cells brighter than ``level``."""
            return (images > level).sum(axis=(1, 2))
        ''',
    "score_rows.py": '''
        import numpy as np
        from psybench.aggregate.table import score_frame

        def score_rows(counts, truth):
            """One row per model: the mean absolute count error."""
            names = sorted(counts)
            n = len(names)
            return score_frame({"model": names, "track": ["toy"] * n, "experiment": ["dots"] * n,
                                "metric": ["count_error"] * n, "direction": ["lower"] * n,
                                "value": [float(np.abs(counts[m] - truth).mean()) for m in names]}, n)
        ''',
    "responses.py": '''
        def responses(images, spec):
            """The model's count of each image."""
            return spec.algorithm.function(images, **spec.params)
        ''',
    "pipeline.py": '''
        from psybench._lazy import lazy_exports

        STAGES = {"stimuli": "toytrack.stimuli:render", "responses": "toytrack.responses:responses",
                  "score_rows": "toytrack.score_rows:score_rows"}
        __getattr__, __dir__ = lazy_exports(__name__, STAGES)

        def score(entry, spec, cfg, experiment, work, *, given_stimuli=None, given_gaze=None, threads=1, progress):
            from toytrack import pipeline as stage

            progress.start(total=len(STAGES))
            images, truth = stage.stimuli(cfg["toy"]["n_images"], cfg["toy"]["size"], seed=0)
            progress.step("stimuli")
            counts = {spec.name: stage.responses(images, spec)}
            progress.step("responses")
            rows = stage.score_rows(counts, truth)
            progress.step("score rows")
            return rows
        ''',
    "config_checks.py": '''
        from psybench.config_checks import config_error

        def check_config(config, models):
            section = config["toy"]
            if section["n_images"] > section["size"] ** 2:
                raise config_error("toy.n_images", f"{section['n_images']} dots do not fit {section['size']}^2 cells")
        ''',
}


@pytest.fixture()
def toy_track(tmp_path, monkeypatch):
    """The toy track added where the architecture doc says; returns the schema path."""
    pkg = tmp_path / "toytrack"
    pkg.mkdir()
    for name, text in TOY.items():
        (pkg / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    # psybench/registry.py: TRACKS, TRACK_KINDS (+ its kinds), _BUILTIN_MODULES
    old = registry.TRACKS
    tracks = (*old, "toy")
    for mod in list(sys.modules.values()):  # the modules that read the constant (as if edited in place)
        if getattr(mod, "__name__", "").startswith("psybench") and getattr(mod, "TRACKS", None) is old:
            monkeypatch.setattr(mod, "TRACKS", tracks)
    monkeypatch.setitem(registry.TRACK_KINDS, "toy", ("counter",))
    monkeypatch.setitem(registry.DEFAULT_KIND, "toy", "counter")
    monkeypatch.setitem(registry._BUILTIN_MODULES, "toy", ("toytrack.models",))
    # psybench/model_params.py: the new kind's data arguments
    monkeypatch.setitem(psybench.model_params.DATA_ARGUMENTS, "counter", ("images",))
    # a track outside psybench/ names its package (one inside is psybench.<track>)
    monkeypatch.setitem(psybench.tracks.TRACK_PACKAGES, "toy", "toytrack")
    # config/schema.yaml: the tracks enum and the track's section
    schema = safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema["properties"]["tracks"]["items"]["enum"].append("toy")
    schema["properties"]["toy"] = {
        "type": "object", "additionalProperties": False, "default": {},
        "properties": {"n_images": {"type": "integer", "minimum": 1, "default": 5},
                       "size": {"type": "integer", "minimum": 2, "default": 8},
                       "models": {"type": "array", "default": [], "items": {"$ref": "#/$defs/model"}}}}
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(schema))
    yield path
    for name in [m for m in sys.modules if m == "toytrack" or m.startswith("toytrack.")]:
        sys.modules.pop(name)
    registry._ALGORITHMS.pop("toy_threshold", None)
    registry._LOADED.discard("toy")


def test_a_toy_track_passes_every_step(toy_track):
    config = {"tracks": ["toy"], "toy": {"models": [{"name": "bright", "algorithm": "toy_threshold"},
                                                    {"name": "dim", "algorithm": "toy_threshold",
                                                     "params": {"level": 1.0}}]},
              "aggregate": {"leaderboards": [{"name": "toy", "track": "toy", "criteria": ["toy/dots/count_error"],
                                              "model": "bright"}]}}
    # validation: the schema fills the section's defaults, the models resolve through the registry
    models = prepare_workflow(config, schema_path=toy_track)
    assert config["toy"]["n_images"] == 5 and sorted(models["toy"]) == ["bright", "dim"]
    assert models["toy"]["dim"].params == {"level": 1.0}
    # the track's own check runs, naming its key
    bad = {"tracks": ["toy"], "toy": {"n_images": 10, "size": 3}}
    with pytest.raises(ConfigError, match=r"toy\.n_images"):
        prepare_workflow(bad, schema_path=toy_track)
    # registry: its model and its benchmark
    assert [r["name"] for r in registry.list_models("toy")] == ["toy_threshold"]
    assert next(b for b in benchmarks() if b.track == "toy").metrics == ("count_error",)
    # the stages, from its pipeline: stimuli -> responses of each configured model -> score rows -> long table
    from toytrack import pipeline

    images, truth = pipeline.stimuli(config["toy"]["n_images"], config["toy"]["size"], seed=0)
    counts = {name: pipeline.responses(images, spec) for name, spec in models["toy"].items()}
    assert counts["bright"].tolist() == truth.tolist()  # counts every dot
    assert counts["dim"].tolist() == [0] * 5  # no cell is above 1
    long_df = write_scores([pipeline.score_rows(counts, truth)], toy_track.parent / "scores_long.csv")
    assert long_df.set_index("model")["value"].to_dict() == {"bright": 0.0, "dim": 3.0}
    # labels and the leaderboard criteria check read the declaration
    assert criterion_label("toy/dots/count_error") == "Toy dots: absolute count error (dots)"
    assert criterion_unit("toy/dots/count_error") == "dots"
    assert criterion_problem("toy/dots/count_error", tracks=["toy"]) is None
    assert "does not write" in criterion_problem("toy/dots/error", tracks=["toy"])
    # a leaderboard: the exact counter dominates
    lb = leaderboard(long_df, track="toy", criteria=["toy/dots/count_error"])
    assert lb["entry"].tolist() == ["bright", "dim"] and lb["front"].tolist() == [1, 2]


def test_psybench_score_runs_the_toy_tracks_pipeline(toy_track, monkeypatch):
    """psybench.score on the toy track: its pipeline's chain, the workflow's rows for the model."""
    monkeypatch.setattr(psybench.api, "check_schema", functools.partial(check_schema, schema_path=toy_track))
    config = {"tracks": ["toy"], "toy": {"n_images": 4}}
    rows = psybench.score("toy_threshold", "toy", name="dim", params={"level": 1.0}, config=config, progress=False)
    assert rows[["model", "experiment", "metric"]].values.tolist() == [["dim", "dots", "count_error"]]
    assert rows["value"].tolist() == [2.5]  # counts 0 of 1..4 dots
    assert (rows["source"] == "psybench.score(toy)").all()


def _track_list() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return text.split("**A track.**", 1)[1].split("\n## ", 1)[0]


def test_the_doc_lists_every_place_the_toy_track_touched():
    listed = _track_list()
    places = [
        "psybench/<track>/__init__.py", "TITLE", "BENCHMARK", "PAPER", "BIBTEX", "EXPERIMENTS", "METRICS",
        "psybench.tracks.Metric", "psybench/<track>/config_checks.py", "check_config", "criterion_experiments",
        "psybench/<track>/score_rows.py", "psybench/<track>/pipeline.py", "STAGES", "SCORABLE_TRACKS",
        "TRACKS", "TRACK_KINDS", "_BUILTIN_MODULES", "DATA_ARGUMENTS",
        "config/schema.yaml", "rules/<track>.smk", "rules/<track>_common.smk", "Snakefile",
        "get_all_targets", "<track>_score_rows", "scripts/<track>_<stage>.py", "HUMAN_REFERENCES",
        "config/README.md", "README.md",
    ]
    missing = [p for p in places if p not in listed]
    assert not missing, f"docs/architecture.md 'A track.' does not name {missing}"


@pytest.mark.parametrize("track", registry.TRACKS)
def test_each_track_follows_the_list(track):
    """What the list asks of a track, checked on the three there are."""
    snakefile = (ROOT / "Snakefile").read_text(encoding="utf-8")
    assert f'include: "rules/{track}.smk"' in snakefile
    rules = (ROOT / "rules" / f"{track}.smk").read_text(encoding="utf-8")
    assert re.search(rf"^rule {track}_score_rows:", rules, re.M)
    assert (ROOT / "psybench" / track / "score_rows.py").is_file()
    assert (ROOT / "psybench" / track / "config_checks.py").is_file()
    assert (ROOT / "psybench" / track / "pipeline.py").is_file() and track in psybench.api.SCORABLE_TRACKS
    schema = safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert track in schema["properties"]["tracks"]["items"]["enum"] and track in schema["properties"]
    assert psybench.tracks.track_metrics(track)
    assert track in registry.TRACK_KINDS and track in registry._BUILTIN_MODULES
