"""Each track's chain is written once, in ``psybench/<track>/pipeline.py``.

The workflow's scripts import their stage from it, ``psybench.score`` calls the same
functions in the rules' order through it, and a script's code hash covers its own
stage's modules, not the other stages of its track.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pandas as pd
import pytest

import psybench
import psybench.tracks
from psybench.provenance import script_modules
from psybench.registry import TRACKS
from psybench.tracks import track_pipeline

ROOT = Path(__file__).resolve().parents[1]
# psybench imports a script may make besides its stage: memory settings and the long-table writers
HELPERS = {"psybench._malloc", "psybench.aggregate.table"}


def _psybench_imports(script: Path) -> list[tuple[str, list[str]]]:
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return [(node.module, [a.name for a in node.names]) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("psybench")]


@pytest.mark.parametrize("track", TRACKS)
def test_every_stage_names_a_library_function(track):
    pipeline = track_pipeline(track)
    stages = {**pipeline.STAGES, **getattr(pipeline, "OTHER_STAGES", {})}
    for name, target in stages.items():
        module, _, function = target.partition(":")
        assert getattr(pipeline, name) is getattr(importlib.import_module(module), function), name
    assert list(pipeline.STAGES)[-1] == "score_rows" and callable(pipeline.score)


@pytest.mark.parametrize("script", sorted(p.name for t in TRACKS for p in (ROOT / "scripts").glob(f"{t}_*.py")))
def test_each_script_takes_its_stage_from_its_tracks_pipeline(script):
    track = script.partition("_")[0]
    pipeline = track_pipeline(track)
    stages = {**pipeline.STAGES, **getattr(pipeline, "OTHER_STAGES", {})}
    imports = _psybench_imports(ROOT / "scripts" / script)
    own = [names for module, names in imports if module == f"psybench.{track}.pipeline"]
    assert own, f"scripts/{script} does not import its stage from psybench.{track}.pipeline"
    assert set(sum(own, [])) <= set(stages)
    others = [module for module, _ in imports if module != f"psybench.{track}.pipeline" and module not in HELPERS]
    assert not others, f"scripts/{script} calls the library past the pipeline: {others}"


def test_a_scripts_code_hash_covers_its_stage_and_not_the_others():
    """From the pipeline the closure follows the imported stage's module only (psybench._lazy)."""
    stimuli = set(script_modules(ROOT / "scripts" / "motion_stimuli.py"))
    readouts = set(script_modules(ROOT / "scripts" / "motion_readouts.py"))
    assert {"psybench.motion.pipeline", "psybench.motion.stimuli.store"} <= stimuli
    assert "psybench.motion.readouts" in readouts
    later = {f"psybench.motion.{m}" for m in ("responses", "scores", "table1", "score_rows")}
    assert not ({"psybench.motion.readouts"} | later) & stimuli
    assert not ({"psybench.motion.stimuli.store"} | later - {"psybench.motion.responses"}) & readouts


INTPHYS = {"tracks": ["intphys"], "intphys": {
    "generator": {"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 4, "height": 16, "width": 16,
                  "n_frames": 8},
    "shard_size": 40, "n_boot": 20}}


def test_score_calls_the_pipelines_stages_in_the_rules_order(monkeypatch):
    """psybench.score goes through the names the scripts call, in STAGES order (no training: constant)."""
    pipeline = track_pipeline("intphys")
    called = []
    for name in pipeline.STAGES:
        function = getattr(pipeline, name)

        def spy(*args, _name=name, _function=function, **kwargs):
            called.append(_name)
            return _function(*args, **kwargs)

        monkeypatch.setattr(pipeline, name, spy)
    rows = psybench.score("constant", "intphys", overrides=INTPHYS, progress=False)
    assert isinstance(rows, pd.DataFrame) and len(rows)
    assert list(dict.fromkeys(called)) == ["generate", "ingest", "metadata", "responses", "scores", "score_rows"]


def test_a_track_without_a_pipeline_is_named(monkeypatch):
    monkeypatch.setitem(psybench.tracks.TRACK_PACKAGES, "motion", "psybench.io")  # a package with no pipeline
    with pytest.raises(ValueError, match=r"track 'motion' has no module psybench\.io\.pipeline"):
        track_pipeline("motion")
