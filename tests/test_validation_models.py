"""User model outputs are checked and inputs passed read-only, in every track.

Each misbehaving function (a list instead of an array, an int64 array, NaN, a wrong
shape, a function that writes into its input frames) is refused with a
:class:`psybench.registry.ModelError` naming the model; a well-behaved function
with the same signature passes (the control).
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from psybench.attention.responses import feature_maps
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, list_movies
from psybench.intphys.responses import predict_shard
from psybench.io.store import ArraySpec, write_store
from psybench.model_checks import check_maps, read_only
from psybench.motion.display import Display
from psybench.motion.responses import run_motion_model
from psybench.registry import ModelError, resolve_model

MODULE = "psybench_test_misbehaving"
SOURCE = '''
import numpy as np
import pandas as pd

# motion, pair: f(frame0, frame1) -> (H, W, 2)
def good(frame0, frame1):
    return np.zeros(frame0.shape + (2,), np.float32)

# (a list, NaN and a wrong shape from a pair model: tests/test_motion_responses.py)
def as_int64(frame0, frame1):
    return np.zeros(frame0.shape + (2,), np.int64)

def in_place(frame0, frame1):
    frame1 -= frame0  # a temporal derivative computed into the input
    return np.zeros(frame0.shape + (2,), np.float32)

# motion, stream: f(chunks, *, display) -> iterator of {"flow": (t, H, W, 2)}
def stream_in_place(chunks, *, display):
    for chunk in chunks:
        chunk *= 2.0
        yield {"flow": np.zeros(chunk.shape + (2,), np.float32)}

def stream_list(chunks, *, display):
    for chunk in chunks:
        yield {"flow": np.zeros(chunk.shape + (2,)).tolist()}

# attention, saliency: f(frames (t, H, W)) -> (t, H, W, K)
def maps_good(frames):
    return np.asarray(frames, np.float32)[..., None]

def maps_list(frames):
    return np.asarray(frames)[..., None].tolist()

def maps_int64(frames):
    return np.zeros(frames.shape + (1,), np.int64)

def maps_nan(frames):
    return np.full(frames.shape + (1,), np.nan, np.float32)

def maps_wrong_shape(frames):
    return np.zeros(frames.shape, np.float32)

def maps_in_place(frames):
    frames[:] = 0.0
    return np.zeros(frames.shape + (1,), np.float32)

# intphys, plausibility: f(observation) -> pandas.Series movie -> P
def p_good(observation):
    return pd.Series(0.5, index=list(observation.movies))

def p_list(observation):
    return [0.5] * len(observation.movies)

def p_int64(observation):
    return pd.Series(1, index=list(observation.movies))

def p_nan(observation):
    return pd.Series(np.nan, index=list(observation.movies))

def p_in_place(observation):
    block = np.asarray(observation.scene[:1])
    block[...] = 0  # a fresh copy: what psybench reads next is unchanged
    return pd.Series(float(np.asarray(observation.scene[:1]).mean() > 0), index=list(observation.movies))
'''

T, H, W = 4, 12, 10


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("usermod")
    (path / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(path))
    yield MODULE
    sys.path.remove(str(path))
    sys.modules.pop(MODULE, None)


@pytest.fixture(scope="module")
def stimulus(tmp_path_factory):
    path = tmp_path_factory.mktemp("stim") / "s.zarr"
    frames = np.random.default_rng(0).random((T, H, W)).astype(np.float32)
    attrs = {"stage": "stimuli", "display": Display(width_px=W, height_px=H).to_attrs(), "stimulus": {}}
    write_store(path, {"frames": ArraySpec(frames, ("t", "y", "x"))}, attrs)
    return path


def test_read_only_leaves_the_original_writeable():
    a = np.zeros(3)
    v = read_only(a)
    with pytest.raises(ValueError, match="read-only"):
        v[0] = 1
    a[0] = 2  # the caller's own array is untouched
    assert v[0] == 2


@pytest.mark.parametrize("shape,bad", [((2, 3), (3, 2)), ((2, None), (2, 3, 1))])
def test_check_maps_shape_with_a_free_axis(shape, bad):
    assert check_maps("m", "maps", np.zeros((2, 3)), shape, "here") is not None
    with pytest.raises(ModelError, match=r"model 'm' returned 'maps' of shape"):
        check_maps("m", "maps", np.zeros(bad), shape, "here")


@pytest.mark.parametrize("function,kind,message", [
    ("as_int64", "pair", r"model 'bad' returned 'flow' of dtype int64 at frames 0-1, expected floating point"),
    ("in_place", "pair", r"model 'bad' raised ValueError on frames 0-1: .*read-only.*copy them"),
    ("stream_in_place", "stream", r"model 'bad' raised ValueError: .*read-only"),
    ("stream_list", "stream", r"model 'bad' returned list for 'flow' at the block from frame 0"),
])
def test_motion_model_outputs_and_inputs(user_module, stimulus, tmp_path, function, kind, message):
    spec = resolve_model({"name": "bad", "callable": f"{user_module}:{function}", "kind": kind}, track="motion")
    with pytest.raises(ModelError, match=message):
        run_motion_model(spec, stimulus, tmp_path / "r.zarr")
    assert not (tmp_path / "r.zarr").exists()
    good = resolve_model({"name": "good", "callable": f"{user_module}:good"}, track="motion")
    assert run_motion_model(good, stimulus, tmp_path / "g.zarr").exists()  # the control passes


@pytest.mark.parametrize("function,message", [
    ("maps_list", r"saliency model '.*:maps_list' returned list for 'maps'"),
    ("maps_int64", r"saliency model '.*:maps_int64' returned 'maps' of dtype int64"),
    ("maps_nan", r"saliency model '.*:maps_nan' returned 12 non-finite value\(s\)"),
    ("maps_wrong_shape", r"saliency model '.*:maps_wrong_shape' returned 'maps' of shape \(1, 3, 4\).*"
                         r"expected \(1, 3, 4, K\)"),
    ("maps_in_place", r"saliency model '.*:maps_in_place' raised ValueError.*read-only"),
])
def test_attention_model_outputs_and_inputs(user_module, function, message):
    frames = np.random.default_rng(1).random((3, 3, 4)).astype(np.float32)
    kept = frames.copy()
    with pytest.raises(ModelError, match=message):
        feature_maps(frames, model=f"{user_module}:{function}", chunk_frames=2).compute()
    np.testing.assert_array_equal(frames, kept)
    good = feature_maps(frames, model=f"{user_module}:maps_good", chunk_frames=2).compute()
    np.testing.assert_array_equal(good[..., 0], frames)


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    root = tmp_path_factory.mktemp("intphys")
    generate_intphys(root, "dev", n_frames=8, height=16, width=16, seed=3, blocks=("O1",), threads=1)
    n = len(list_movies(root, "dev"))
    ingest_shard(root, "dev", root / "s.zarr", root / "s.csv", shard=0, shard_size=n, threads=1)
    return root


@pytest.mark.parametrize("function,message", [
    ("p_list", r"model 'bad' returned list; expected a pandas\.Series"),
    ("p_int64", r"model 'bad' returned a Series of dtype int64; expected floating point"),
    ("p_nan", r"model 'bad' returned P = nan"),
])
def test_intphys_model_outputs_and_inputs(user_module, shard, tmp_path, function, message):
    entry = {"name": "bad", "callable": f"{user_module}:{function}"}
    with pytest.raises(ModelError, match=message):
        predict_shard(entry, shard / "s.zarr", shard / "s.csv", tmp_path / "p.csv")
    good = predict_shard({"name": "good", "callable": f"{user_module}:p_good"}, shard / "s.zarr",
                         shard / "s.csv", tmp_path / "g.csv")
    assert isinstance(good, pd.DataFrame) and (good["p"] == 0.5).all()


def test_intphys_model_writing_into_what_it_read_changes_nothing(user_module, shard, tmp_path):
    """IntPhys frames are Dask arrays: each read is a fresh array (predict_shard's comment)."""
    entry = {"name": "writer", "callable": f"{user_module}:p_in_place"}
    df = predict_shard(entry, shard / "s.zarr", shard / "s.csv", tmp_path / "w.csv")
    assert (df["p"] == 1.0).all()  # the second read still saw the frames, not the zeros
