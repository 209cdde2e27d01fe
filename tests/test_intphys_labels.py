"""IntPhys labels are out of a model's reach: a model that searches all it is handed scores chance.

The labels (``possible``) and conditions sit in the ``shard_NNNN.csv`` beside each
ingest store; a model gets frames, depth, masks, mask names and movie ids
(Riochet et al. 2018, IntPhys V1.0, "Evaluation metric": a system returns P(x) per
test movie without knowing its condition). :data:`SEARCH_MODEL` follows every
reference from its observation (attributes, ``__dict__``, slots, closure cells,
containers: ``gc.get_referents`` to depth 12), collects every string or path-like
object that names an existing file or folder, and reads any table with ``movie`` and
``possible`` columns in or beside it. With the labels it returns P = possible
(L_R = L_A = 0, as it did when the observation held Dask arrays over the store);
without them P = 0.5 for every movie, which gives exactly chance: L_R = L_A = 0.5,
L_R_strict = 0 (all ties). Any label reached moves L_R below 0.5.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

import psybench
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard
from psybench.intphys.models.observation import Movies, map_movies, observe

SEARCH_MODEL = '''
"""A plausibility model that searches everything it is handed for the IntPhys labels."""
import gc
import json
import os
import sys
import types
from pathlib import Path

import pandas as pd

FOUND = {}


def reachable(root, *, depth=12, limit=500_000):
    """Objects reachable from ``root`` through ``gc.get_referents`` (attributes, ``__dict__``, slots, closure
    cells, containers, generator frames), not through modules, classes or a function's module globals (from
    which the whole interpreter is reachable, not only what the model was handed)."""
    module_dicts = {id(vars(m)) for m in list(sys.modules.values()) if m is not None}
    seen, frontier, out = {id(root)}, [root], [root]
    for _ in range(depth):
        nxt = []
        for obj in frontier:
            try:
                refs = gc.get_referents(obj)
            except Exception:
                continue
            for ref in refs:
                if id(ref) in seen or isinstance(ref, (types.ModuleType, type)) or id(ref) in module_dicts:
                    continue
                seen.add(id(ref))
                out.append(ref)
                nxt.append(ref)
                if len(out) >= limit:
                    return out
        frontier = nxt
    return out


def existing_paths(objects):
    """Every string, bytes or path-like object among ``objects`` that names an existing file or folder."""
    paths = set()
    for obj in objects:
        if not isinstance(obj, (str, bytes, os.PathLike)):
            continue
        try:
            s = os.fsdecode(os.fspath(obj))
            if s and len(s) < 4096 and os.path.exists(s):
                paths.add(os.path.abspath(s))
        except (OSError, TypeError, ValueError):
            pass
    return paths


def labels_near(paths):
    """``movie -> possible`` from every table in or beside the paths."""
    labels = {}
    for p in map(Path, paths):
        for folder in {p if p.is_dir() else p.parent, p.parent}:
            for table in sorted(folder.glob("*.csv")):
                try:
                    df = pd.read_csv(table)
                except Exception:
                    continue
                if {"movie", "possible"} <= set(df.columns):
                    labels.update(zip(df["movie"].astype(str), df["possible"].astype(str).str.lower()))
    return labels


def search(observation, *, record=""):
    objects = reachable(observation)
    paths = existing_paths(objects)
    labels = labels_near(paths)
    movies = list(observation.movies)
    kinds = sorted({type(o).__module__.partition(".")[0] for o in objects})
    FOUND.update(n_objects=len(objects), paths=sorted(paths), modules=kinds,
                 n_labels=FOUND.get("n_labels", 0) + sum(m in labels for m in movies))
    if record:
        Path(record).write_text(json.dumps(FOUND))
    p = [1.0 if labels.get(m) == "true" else 0.0 if m in labels else 0.5 for m in movies]
    return pd.Series(p, index=movies, dtype=float)
'''


@pytest.fixture(scope="module")
def search_module(tmp_path_factory):
    """:data:`SEARCH_MODEL` importable as ``label_search``."""
    path = tmp_path_factory.mktemp("searchmod")
    (path / "label_search.py").write_text(SEARCH_MODEL)
    sys.path.insert(0, str(path))
    import label_search

    yield label_search
    sys.path.remove(str(path))
    sys.modules.pop("label_search", None)


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    """One ingested shard of a small generated dev split: its store and the labelled table beside it."""
    root = tmp_path_factory.mktemp("tree")
    generate_intphys(root / "data", "dev", blocks=("O1",), height=24, width=24, n_frames=8, seed=0)
    store, table = root / "shard_0000.zarr", root / "shard_0000.csv"
    ingest_shard(root / "data", "dev", store, table, shard=0, shard_size=20)
    return store, table


def _overall(rows: pd.DataFrame) -> dict[str, float]:
    rows = rows[rows["experiment"] == "all/all/all/all"]
    return dict(zip(rows["metric"], rows["value"]))


def test_search_finds_labels_through_a_dask_array_over_the_store(search_module, shard):
    """The search is strong enough: handed a Dask array over the store (what a model got before), it finds
    every label of the shard in the table beside the store."""
    from psybench.io.store import open_store

    store, table = shard
    movies = tuple(open_store(store).attrs["movies"])
    leaky = dataclasses.make_dataclass("Leaky", ["movies", "scene"])(movies, open_store(store)["scene"])
    search_module.FOUND.clear()
    p = search_module.search(leaky)
    possible = pd.read_csv(table).set_index("movie")["possible"].reindex(list(movies))
    assert search_module.FOUND["n_labels"] == len(movies) == 20
    np.testing.assert_array_equal(p.to_numpy(), possible.astype(float).to_numpy())


def test_observation_reaches_no_path_store_or_graph(search_module, shard):
    store, table = shard
    obs = observe(store, table)
    objects = search_module.reachable(obs)
    assert search_module.existing_paths(objects) == set()
    modules = {type(o).__module__.partition(".")[0] for o in objects}
    assert not modules & {"zarr", "dask", "pathlib", "numcodecs", "fsspec"}, modules
    arrays = [o for o in objects if isinstance(o, np.ndarray)]
    assert not arrays  # nothing read yet: a Movies holds its shape, dtype and chunking only
    assert all(isinstance(o, (str, int, float, tuple, np.dtype, Movies, type(obs), dict, type(None)))
               for o in objects), {type(o) for o in objects}
    p = search_module.search(obs)
    assert (p == 0.5).all()


def test_movies_read_plain_arrays_equal_to_the_store(shard):
    from psybench.io.store import open_store

    store, table = shard
    obs, src = observe(store, table), open_store(store)
    for name in ("scene", "depth", "masks"):
        movies, want = getattr(obs, name), np.asarray(src[name])
        assert movies.shape == want.shape and movies.dtype == want.dtype and len(movies) == 20
        assert movies.chunks == src[name].chunks
        np.testing.assert_array_equal(np.asarray(movies), want)
        np.testing.assert_array_equal(np.asarray(movies, dtype=np.float64), want.astype(np.float64))
        np.testing.assert_array_equal(movies[3], want[3])
        np.testing.assert_array_equal(movies[2:5, 1], want[2:5, 1])
        read = movies[3]
        assert read.base is None and read.flags.writeable  # a fresh array: writing to it changes nothing read next
        read[...] = 0
        np.testing.assert_array_equal(movies[3], want[3])
        listed = list(movies)  # streamed, one storage chunk at a time, as read-only views of that chunk
        assert len(listed) == 20 and not any(m.flags.writeable for m in listed)
        np.testing.assert_array_equal(np.stack(listed), want)
        assert all(m.base.base is None for m in listed)  # views of a chunk read for them, owning its memory
    with pytest.raises(TypeError, match="cannot be pickled or copied: read the movies first"):
        pickle.dumps(obs.scene)
    scene = np.asarray(src["scene"])
    assert map_movies(lambda i, s: float(s.mean()), [obs.scene], 2) == [float(m.mean()) for m in scene]


def test_search_model_scores_chance_through_score(search_module):
    """``psybench.score`` on the default generated tree (216 dev movies, 54 quadruplets, 5 shards)."""
    search_module.FOUND.clear()
    rows = psybench.score("label_search:search", "intphys", overrides={"intphys": {"n_boot": 0}}, progress=False)
    assert search_module.FOUND["n_labels"] == 0 and search_module.FOUND["paths"] == []
    assert _overall(rows) == {"L_R": 0.5, "L_R_strict": 0.0, "L_A": 0.5}


@pytest.mark.workflow
def test_search_model_scores_chance_through_the_workflow(harness, tmp_path):
    """The same model as a user callable in the workflow, on the default generated tree."""
    base = yaml.safe_load((harness.root / "config" / "config.yaml").read_text())["intphys"]
    cfg = {**base, "n_boot": 0, "external_answers": {},
           "models": [{"name": "search", "callable": "label_search:search", "params": {"record": "found.json"}}]}
    harness.copy(tmp_path, {"tracks": ["intphys"], "intphys": cfg}, modules={"label_search.py": SEARCH_MODEL})
    r = harness.run(tmp_path, "--cores", "2", "intphys_all", check=False, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    found = json.loads((tmp_path / "found.json").read_text())
    assert found["n_labels"] == 0 and found["paths"] == [], found
    t = pd.read_csv(tmp_path / "results/intphys/scores/search/scores.csv")
    overall = t[(t[["block", "visibility", "motion", "n_objects"]] == "all").all(axis=1)]
    assert dict(zip(overall["metric"], overall["value"])) == {"L_R": 0.5, "L_R_strict": 0.0, "L_A": 0.5}
    assert overall["n_quadruplets"].iloc[0] == 54
