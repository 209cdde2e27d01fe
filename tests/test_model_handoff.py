"""One model hand-off for every track: the description a job receives, how it is rebuilt, and bounds.

The workflow resolves each model once, while the Snakefile is parsed, and gives
every model-calling job (motion responses, attention features, IntPhys
predictions) the same JSON description (:func:`psybench.handoff.describe_model`);
the job rebuilds the model with :func:`psybench.handoff.model_from_description`
and calls it through :func:`psybench.model_checks.call_model`.
"""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest

from psybench.attention.responses import write_feature_store, write_feature_stores
from psybench.attention.stimuli import write_popout_store
from psybench.handoff import as_model, describe_model, model_from_description
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, list_movies
from psybench.intphys.responses import predict_shard, predict_shards
from psybench.io.store import ArraySpec, open_store, write_store
from psybench.motion.display import Display
from psybench.motion.responses import run_motion_model_batch
from psybench.registry import ModelError, resolve_model

MODULE = "psybench_test_handoff_models"
SOURCE = '''
import numpy as np
import pandas as pd

def flow(frame0, frame1, *, gain=1.0):
    out = np.zeros(frame0.shape + (2,), np.float32)
    out[..., 0] = gain * (frame1 - frame0)
    return out

def maps(frames, *, gain=1.0):
    return gain * np.asarray(frames, np.float32)[..., None]

def plausibility(observation, *, value=0.5):
    return pd.Series(value, index=list(observation.movies))
'''
# One built-in and one user model per track: (track, config entry).
ENTRIES = [
    ("motion", {"name": "hs", "algorithm": "horn_schunck", "params": {"n_iter": 20}}),
    ("motion", {"name": "mine", "callable": f"{MODULE}:flow", "params": {"gain": 2.0}}),
    ("attention", {"name": "pyr", "algorithm": "pyramid", "params": {"levels": 2}}),
    ("attention", {"name": "sal", "callable": f"{MODULE}:maps", "kind": "saliency", "params": {"gain": 3.0}}),
    ("intphys", {"name": "rnd", "algorithm": "random", "params": {"seed": 4}}),
    ("intphys", {"name": "p", "callable": f"{MODULE}:plausibility", "kind": "plausibility",
                 "params": {"value": 0.25}}),
]
DESCRIPTION_KEYS = ["algorithm", "kind", "name", "params", "params_hash", "source"]


@pytest.fixture(scope="module", autouse=True)
def user_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("handoff")
    (path / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(path))
    yield MODULE
    sys.path.remove(str(path))
    sys.modules.pop(MODULE, None)


@pytest.mark.parametrize("track,entry", ENTRIES, ids=[e["name"] for _t, e in ENTRIES])
def test_every_track_hands_its_jobs_the_same_description_and_rebuilds_the_same_model(track, entry):
    spec = resolve_model(entry, track=track)
    description = describe_model(spec)
    # the same shape in every track, through JSON (a rule's param) unchanged
    assert sorted(description) == DESCRIPTION_KEYS
    sent = json.loads(json.dumps(description))
    assert sent == description
    again = model_from_description(sent)
    assert again.track == track and again.kind == spec.kind
    assert again.algorithm.function is spec.algorithm.function  # the same function, imported again
    assert dict(again.params) == dict(spec.params) and again.params_hash == spec.params_hash
    assert describe_model(again) == description
    # every job's entry takes the description, the spec, or the config entry alike
    for given in (description, spec, entry):
        assert describe_model(as_model(given, track=track)) == description
    other = next(t for t in ("motion", "attention", "intphys") if t != track)
    with pytest.raises(ModelError, match=rf"model '{spec.name}' belongs to track '{track}', not '{other}'"):
        as_model(description, track=other)


def test_a_description_whose_defaults_moved_is_refused():
    description = describe_model(resolve_model({"name": "hs", "algorithm": "horn_schunck"}))
    stale = {**description, "params": {**description["params"], "alpha": 123.0}}
    with pytest.raises(ModelError, match=r"model 'hs': its parameters hash to .*, not "):
        model_from_description(stale)
    with pytest.raises(ModelError, match=r"lacks \['params'\]"):
        model_from_description({k: v for k, v in description.items() if k != "params"})


def test_motion_job_given_the_description_writes_the_specs_store(tmp_path):
    frames = np.random.default_rng(0).random((4, 12, 16)).astype(np.float32)
    stim = tmp_path / "stimuli" / "s.zarr"
    attrs = {"stage": "stimuli", "display": Display(width_px=16, height_px=12).to_attrs(), "stimulus": {}}
    write_store(stim, {"frames": ArraySpec(frames, ("t", "y", "x"))}, attrs)
    spec = resolve_model(ENTRIES[1][1], track="motion")
    a, = run_motion_model_batch(describe_model(spec), [stim], [tmp_path / "a" / "s.zarr"])
    b, = run_motion_model_batch(spec, [stim], [tmp_path / "b" / "s.zarr"])
    sa, sb = open_store(a), open_store(b)
    np.testing.assert_array_equal(sa["flow"][...], sb["flow"][...])
    assert float(np.asarray(sa["flow"][1])[..., 0].max()) > 0  # gain * (frame1 - frame0): not all zero
    assert sa.attrs["model"] == sb.attrs["model"] == describe_model(spec)


def test_attention_job_given_descriptions_writes_the_stores_written_alone(tmp_path):
    stim = write_popout_store(tmp_path / "s.zarr", n_frames=6, seed=0)
    specs = [resolve_model(e, track="attention") for t, e in ENTRIES if t == "attention"]
    stores = [{"out": tmp_path / "job" / f"{s.name}.zarr", "model": describe_model(s), "code_hash": "h"}
              for s in specs]
    write_feature_stores(stim, stores, chunk_frames=4)
    for s, spec in zip(stores, specs):
        alone = open_store(write_feature_store(stim, tmp_path / f"{spec.name}.zarr", model=spec.algorithm.name,
                                               chunk_frames=4, code_hash="h", **spec.params))
        job = open_store(s["out"])
        np.testing.assert_array_equal(job["maps"][...], alone["maps"][...])
        assert job.attrs["features"] == alone.attrs["features"]
        assert job.attrs["features"]["model"] == spec.algorithm.name
        assert job.attrs["features"]["params"] == dict(spec.params)


def test_intphys_job_given_the_description_writes_the_entrys_table(tmp_path):
    generate_intphys(tmp_path, "dev", n_frames=8, height=16, width=16, seed=3, blocks=("O1",), threads=1)
    n = len(list_movies(tmp_path, "dev"))
    ingest_shard(tmp_path, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard=0, shard_size=n, threads=1)
    for _track, entry in [e for e in ENTRIES if e[0] == "intphys"]:
        spec = resolve_model(entry, track="intphys")
        job = tmp_path / "job" / "s.csv"
        predict_shards(describe_model(spec), [tmp_path / "s.zarr"], [tmp_path / "s.csv"], [job])
        df = predict_shard(entry, tmp_path / "s.zarr", tmp_path / "s.csv", tmp_path / "entry.csv")
        assert job.read_bytes() == (tmp_path / "entry.csv").read_bytes()
        assert len(df) == n and df["p"].between(0, 1).all()
