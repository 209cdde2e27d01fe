"""Tests of psybench.motion.responses (streaming a stimulus store through a model) and psybench.registry."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from psybench.handoff import describe_model, model_from_description
from psybench.io.store import ArraySpec, open_store, write_store
from psybench.motion.display import Display
from psybench.motion.models import flow
from psybench.motion.responses import motion_response_blocks, run_motion_model
from psybench.registry import (
    ModelError,
    ModelSpec,
    get_algorithm,
    list_models,
    load_callable,
    resolve_model,
)

T, H, W = 8, 48, 40
VELOCITY = (0.4, -0.3)

USER_MODULE = '''
import numpy as np

def constant(frame0, frame1, *, u=0.5, v=0.0):
    """Uniform flow (u, v)."""
    return np.full(frame0.shape + (2,), (u, v), np.float32)

def wrong_shape(frame0, frame1):
    return np.zeros(frame0.shape + (3,), np.float32)

def nan_flow(frame0, frame1):
    out = np.zeros(frame0.shape + (2,), np.float32)
    out[0, 0, 0] = np.nan
    return out

def as_list(frame0, frame1):
    return np.zeros(frame0.shape + (2,)).tolist()

def complex_flow(frame0, frame1):
    return np.zeros(frame0.shape + (2,), complex)

def broken(frame0, frame1):
    raise RuntimeError("boom")

def anything(frame0, frame1, **params):
    return np.zeros(frame0.shape + (2,), np.float32)

class Holder:
    @staticmethod
    def method(frame0, frame1, *, gain=1.0):
        return np.zeros(frame0.shape + (2,), np.float32)

def stream(chunks, *, display, gain=1.0):
    """A causal stream model: flow = gain * frame index, p = one-hot on velocity 1."""
    t0 = 0
    for chunk in chunks:
        t = chunk.shape[0]
        idx = np.arange(t0, t0 + t, dtype=np.float32)[:, None, None, None]
        flow = np.broadcast_to(gain * idx, chunk.shape + (2,)).astype(np.float32)
        p = np.zeros(chunk.shape + (3,), np.float32)
        p[..., 1] = 1.0
        t0 += t
        yield {"flow": flow, "p": p}

stream.velocities = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]

def stream_short(chunks, *, display):
    for chunk in chunks:
        yield {"flow": np.zeros(chunk.shape[:1] + (5, 5, 2), np.float32)}

def stream_3d(chunks, *, display):
    for chunk in chunks:
        yield {"flow": np.zeros(chunk.shape, np.float32)}

def stream_not_dict(chunks, *, display):
    for chunk in chunks:
        yield np.zeros(chunk.shape + (2,), np.float32)

not_callable = 3
'''


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("usermod")
    (path / "psybench_test_user_models.py").write_text(textwrap.dedent(USER_MODULE))
    return path


@pytest.fixture
def user_path(user_module, monkeypatch):
    monkeypatch.syspath_prepend(str(user_module))
    return "psybench_test_user_models"


def translating_frames(n_t=T, velocity=VELOCITY, seed=0):
    """(T, H, W) float32: a smooth periodic texture shifted exactly by t * velocity."""
    rng = np.random.default_rng(seed)
    ky = np.fft.fftfreq(H)[:, None]
    kx = np.fft.fftfreq(W)[None, :]
    spec = np.fft.fft2(rng.standard_normal((H, W))) * np.exp(-2 * np.pi**2 * 9.0 * (kx**2 + ky**2))
    frames = [np.fft.ifft2(spec * np.exp(-2j * np.pi * t * (kx * velocity[0] + ky * velocity[1]))).real
              for t in range(n_t)]
    frames = np.stack(frames)
    return ((frames - frames.mean()) * 0.1 / frames.std() + 0.5).astype(np.float32)


@pytest.fixture
def stimulus(tmp_path):
    display = Display(width_px=W, height_px=H)
    frames = translating_frames()
    attrs = {
        "stage": "stimuli",
        "display": display.to_attrs(),
        "stimulus": {"name": "texture", "truth": {"velocity_px_per_frame": list(VELOCITY)}},
    }
    path = tmp_path / "stimuli" / "texture.zarr"
    write_store(path, {"frames": ArraySpec(frames, ("t", "y", "x"), chunks=(3, H, W))}, attrs)
    return path, frames


# ------------------------------------------------------------------------------ runner
@pytest.mark.parametrize("threads,block_frames", [(1, 16), (2, 3), (2, 1)])
def test_pair_model_streams_every_pair_in_order(stimulus, tmp_path, threads, block_frames):
    path, frames = stimulus
    spec = resolve_model({"name": "lk_test", "algorithm": "lucas_kanade", "params": {"n_warps": 3}})
    out = run_motion_model(spec, path, tmp_path / "resp.zarr", code_hash="abc", threads=threads,
                           block_frames=block_frames)
    store = open_store(out)
    got = store["flow"].compute()
    assert got.shape == (T, H, W, 2) and got.dtype == np.float32
    assert store.dims["flow"] == ("t", "y", "x", "component")
    assert np.all(got[0] == 0)  # nothing seen before frame 0
    for t in range(1, T):  # flow[t] is the motion from frame t-1 to frame t, whatever the blocks
        np.testing.assert_array_equal(got[t], flow.lucas_kanade(frames[t - 1], frames[t], n_warps=3))
    mean = got[1:, 8:-8, 8:-8].reshape(-1, 2).mean(0)
    np.testing.assert_allclose(mean, VELOCITY, atol=0.02)
    assert store.attrs["model"]["name"] == "lk_test"
    assert store.attrs["model"]["params"]["n_warps"] == 3
    assert store.attrs["model"]["params"]["window_sigma"] == get_algorithm("lucas_kanade").defaults["window_sigma"]
    assert store.attrs["stimulus"]["name"] == "texture"
    assert store.attrs["code_hash"] == "abc"
    assert store.array_attrs["flow"]["units"] == "px/frame"


def test_motion_response_blocks_accepts_plain_arrays():
    frames = translating_frames(n_t=5)
    spec = resolve_model({"name": "c", "algorithm": "farneback"})
    blocks = list(motion_response_blocks(spec, frames, Display(width_px=W, height_px=H), block_frames=2))
    assert [b["flow"].shape[0] for b in blocks] == [2, 2, 1]
    flows = np.concatenate([b["flow"] for b in blocks])
    np.testing.assert_array_equal(flows[3], flow.farneback(frames[2], frames[3]))


def test_single_frame_stimulus_gives_zero_flow():
    spec = resolve_model({"name": "hs", "algorithm": "horn_schunck"})
    blocks = list(motion_response_blocks(spec, translating_frames(n_t=1), Display(width_px=W, height_px=H)))
    assert len(blocks) == 1 and blocks[0]["flow"].shape == (1, H, W, 2) and not blocks[0]["flow"].any()


def test_user_pair_model_runs_with_params(stimulus, tmp_path, user_path):
    path, _ = stimulus
    spec = resolve_model({"name": "mine", "callable": f"{user_path}:constant", "kind": "pair",
                          "params": {"u": -1.5}})
    assert spec.params == {"u": -1.5, "v": 0.0}
    assert spec.algorithm.source == "user"
    store = open_store(run_motion_model(spec, path, tmp_path / "mine.zarr"))
    got = store["flow"].compute()
    assert np.all(got[1:, ..., 0] == -1.5) and np.all(got[1:, ..., 1] == 0) and np.all(got[0] == 0)
    assert store.attrs["model"]["source"] == "user"


def test_model_description_round_trips(stimulus, tmp_path, user_path):
    """The workflow hands a job the model's description; the job rebuilds the same model."""
    path, _ = stimulus
    for entry in ({"name": "hs3", "algorithm": "horn_schunck", "params": {"alpha": 3.0}},
                  {"name": "mine", "callable": f"{user_path}:constant", "kind": "pair", "params": {"u": -1.5}}):
        spec = resolve_model(entry, track="motion")
        again = model_from_description(describe_model(spec))
        assert describe_model(again) == describe_model(spec)
        assert again.algorithm.function is spec.algorithm.function
    # run_motion_model takes the description as it takes the spec
    a = open_store(run_motion_model(spec, path, tmp_path / "a.zarr"))
    b = open_store(run_motion_model(describe_model(spec), path, tmp_path / "b.zarr"))
    assert a.attrs == b.attrs
    np.testing.assert_array_equal(a["flow"].compute(), b["flow"].compute())


@pytest.mark.parametrize("function,message", [
    ("wrong_shape", r"model 'bad' returned 'flow' of shape \(48, 40, 3\) at frames 0-1, expected \(48, 40, 2\)"),
    ("nan_flow", r"model 'bad' returned 1 non-finite value\(s\) \(NaN/inf\) in 'flow'"),
    ("complex_flow", r"model 'bad' returned 'flow' of dtype complex128"),
    ("broken", r"model 'bad' raised RuntimeError on frames 0-1: boom"),
])
def test_misbehaving_user_pair_model_fails_naming_it(stimulus, tmp_path, user_path, function, message):
    path, _ = stimulus
    spec = resolve_model({"name": "bad", "callable": f"{user_path}:{function}"})
    out = tmp_path / "bad.zarr"
    with pytest.raises(ModelError, match=message):
        run_motion_model(spec, path, out, threads=2)
    assert not out.exists()
    assert not list(tmp_path.glob("bad.zarr.tmp-*"))  # no half-written store left behind


def test_user_model_returning_a_list_is_refused(stimulus, tmp_path, user_path):
    # a list is not silently converted (tests/test_validation_models.py has the other cases)
    path, _ = stimulus
    spec = resolve_model({"name": "lst", "callable": f"{user_path}:as_list"})
    with pytest.raises(ModelError, match=r"model 'lst' returned list for 'flow' at frames 0-1"):
        run_motion_model(spec, path, tmp_path / "lst.zarr")


def test_user_stream_model_with_distributed_representation(stimulus, tmp_path, user_path):
    path, _ = stimulus
    spec = resolve_model({"name": "st", "callable": f"{user_path}:stream", "kind": "stream", "params": {"gain": 2.0}})
    assert "display" not in spec.params
    store = open_store(run_motion_model(spec, path, tmp_path / "st.zarr", block_frames=3))
    got = store["flow"].compute()
    np.testing.assert_array_equal(got[:, 0, 0, 0], 2.0 * np.arange(T))
    assert store["p"].shape == (T, H, W, 3)
    assert store.array_attrs["p"]["velocities"] == [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("function,message", [
    ("stream_short",
     r"model 'bad_stream' returned 'flow' of shape \(3, 5, 5, 2\) at frames 0-2, expected \(3, 48, 40, 2\)"),
    ("stream_3d",
     r"model 'bad_stream' yielded 'flow' of shape \(3, 48, 40\) from frame 0, expected \(t,\) \+ \(48, 40, 2\)"),
    ("stream_not_dict", r"model 'bad_stream' yielded ndarray"),
])
def test_misbehaving_stream_model_fails_naming_it(stimulus, tmp_path, user_path, function, message):
    path, _ = stimulus
    spec = resolve_model({"name": "bad_stream", "callable": f"{user_path}:{function}", "kind": "stream"})
    with pytest.raises(ModelError, match=message):
        run_motion_model(spec, path, tmp_path / "bs.zarr", block_frames=3)


def test_non_motion_kind_is_rejected(stimulus, tmp_path, user_path):
    path, _ = stimulus
    # refused when the entry is resolved (the registry knows each track's kinds) ...
    message = r"model 'sal': kind must be one of \('pair', 'stream', 'pairs'\) for track 'motion'"
    with pytest.raises(ModelError, match=message):
        resolve_model({"name": "sal", "callable": f"{user_path}:constant", "kind": "saliency"})
    # ... and by the runner, should a saliency model reach it anyway (a one-frame-argument function: as a
    # saliency model, constant's frame1 would be a parameter without default, refused when resolved)
    spec = resolve_model({"name": "sal", "callable": f"{user_path}:stream", "kind": "saliency"}, track="attention")
    with pytest.raises(ModelError, match=r"model 'sal' belongs to track 'attention', not 'motion'"):
        run_motion_model(spec, path, tmp_path / "sal.zarr")


# ------------------------------------------------------------------------------ registry
def test_builtin_flow_models_are_listed():
    rows = {r["name"]: r for r in list_models()}
    for name in ("horn_schunck", "lucas_kanade", "farneback", "dis"):
        assert rows[name]["track"] == "motion" and rows[name]["kind"] == "pair" and rows[name]["source"] == "builtin"


def test_same_algorithm_twice_with_different_params():
    a = resolve_model({"name": "hs_smooth", "algorithm": "horn_schunck", "params": {"alpha": 0.1}})
    b = resolve_model({"name": "hs_sharp", "algorithm": "horn_schunck", "params": {"alpha": 0.005}})
    c = resolve_model({"name": "hs_sharp2", "algorithm": "horn_schunck", "params": {"alpha": 0.005}})
    assert a.algorithm is b.algorithm
    assert a.params["alpha"] == 0.1 and a.params["n_iter"] == get_algorithm("horn_schunck").defaults["n_iter"]
    assert a.params_hash != b.params_hash and b.params_hash == c.params_hash
    assert isinstance(a, ModelSpec) and describe_model(a) == describe_model(resolve_model(
        {"name": "hs_smooth", "algorithm": "horn_schunck", "params": {"alpha": 0.1}}))


@pytest.mark.parametrize("entry,message", [
    ({"name": "m", "algorithm": "horn_schunck", "params": {"lambda": 1.0}},
     r"model 'm': unknown parameter\(s\) \['lambda'\] for algorithm 'horn_schunck'; accepted: \['alpha'"),
    ({"name": "m", "algorithm": "horn_shunck"}, r"model 'm': unknown algorithm 'horn_shunck'; known: \["),
    ({"name": "m", "algorithm": "dis", "callable": "x:y"}, r"model 'm': give 'algorithm' or 'callable', not both"),
    ({"name": "m"}, r"model 'm': needs 'algorithm'"),
    ({"algorithm": "dis"}, r"has no 'name'"),
    ({"name": "m", "algorithm": "dis", "params": [1, 2]}, r"model 'm': 'params' must be a mapping"),
    ({"name": "m", "algorithm": "dis"}, None),
])
def test_resolve_model_errors_name_the_model(entry, message):
    if message is None:
        assert resolve_model(entry, track="motion").name == "m"
        return
    with pytest.raises(ModelError, match=message):
        resolve_model(entry)


def test_track_mismatch_is_rejected():
    with pytest.raises(ModelError, match=r"model 'm': algorithm 'dis' belongs to track 'motion', not 'attention'"):
        resolve_model({"name": "m", "algorithm": "dis"}, track="attention")


def test_user_callable_unknown_params_and_kwargs(user_path):
    with pytest.raises(ModelError, match=r"model 'u': unknown parameter\(s\) \['w'\].*accepted: \['u', 'v'\]"):
        resolve_model({"name": "u", "callable": f"{user_path}:constant", "params": {"w": 1}})
    spec = resolve_model({"name": "k", "callable": f"{user_path}:anything", "params": {"whatever": 1}})
    assert spec.params == {"whatever": 1}
    with pytest.raises(ModelError, match=r"model 'k': kind must be one of"):  # an attention kind
        resolve_model({"name": "k", "callable": f"{user_path}:anything", "kind": "features"})


@pytest.mark.parametrize("path,message", [
    ("psybench_test_user_models.constant", r"model 'x': callable must look like 'package.module:function'"),
    ("no_such_module_psybench:f", r"model 'x': cannot import module 'no_such_module_psybench'"),
    ("psybench_test_user_models:nope", r"model 'x': module 'psybench_test_user_models' has no attribute 'nope'"),
    ("psybench_test_user_models:not_callable", r"model 'x': 'psybench_test_user_models:not_callable' is not callable"),
])
def test_load_callable_errors_name_the_model(user_path, path, message):
    with pytest.raises(ModelError, match=message):
        load_callable(path, model="x")


def test_load_callable_dotted_attribute(user_path):
    func = load_callable(f"{user_path}:Holder.method", model="x")
    assert func(np.zeros((2, 2)), np.zeros((2, 2))).shape == (2, 2, 2)
    spec = resolve_model({"name": "h", "callable": f"{user_path}:Holder.method"})
    assert spec.params == {"gain": 1.0} and spec.kind == "pair" and spec.track == "motion"


# ------------------------------------------------------------------------------ batches
def test_batch_writes_the_stores_that_single_runs_write(stimulus, tmp_path):
    """One process for many stimuli: each store byte-identical to the store of a run alone."""
    import shutil

    from psybench.motion.responses import run_motion_model_batch

    path, _ = stimulus
    other = tmp_path / "stimuli" / "texture2.zarr"
    shutil.copytree(path, other)
    spec = resolve_model({"name": "hs_b", "algorithm": "horn_schunck"})
    alone = [run_motion_model(spec, p, tmp_path / "alone" / p.name, code_hash="h") for p in (path, other)]
    batch = run_motion_model_batch(describe_model(spec), [path, other],
                                   [tmp_path / "batch" / p.name for p in (path, other)], code_hash="h")
    for a, b in zip(alone, batch):
        files = sorted(f.relative_to(a) for f in a.rglob("*") if f.is_file())
        assert files == sorted(f.relative_to(b) for f in b.rglob("*") if f.is_file())
        assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    with pytest.raises(ValueError, match="texture2.zarr does not match response output .*texture.zarr"):
        run_motion_model_batch(spec, [other], [tmp_path / "x" / "texture.zarr"])
    with pytest.raises(ValueError, match="2 stimulus stores but 1 response outputs"):
        run_motion_model_batch(spec, [path, other], [tmp_path / "x" / "texture.zarr"])


def test_population_is_written_only_when_asked(stimulus, tmp_path, user_path):
    """write_population=False drops p from the store; the flow is the same array either way."""
    path, _ = stimulus
    spec = resolve_model({"name": "st", "callable": f"{user_path}:stream", "kind": "stream"})
    with_p = open_store(run_motion_model(spec, path, tmp_path / "p.zarr", write_population=True))
    without = open_store(run_motion_model(spec, path, tmp_path / "nop.zarr", write_population=False))
    assert "p" in with_p.arrays and "p" not in without.arrays
    np.testing.assert_array_equal(with_p["flow"].compute(), without["flow"].compute())


@pytest.mark.parametrize("algorithm", ["tlapale_v1mt", "simoncelli_heeger"])
def test_builtin_bio_models_skip_p_and_keep_the_same_flow(stimulus, tmp_path, algorithm):
    """The bio-inspired models (velocity grid in physical units, a callable of the display) run
    with and without their population: p is stored only when asked, as a grid labelled in
    deg/s, and the flow is bit-identical (return_p=False is a run-time switch)."""
    path, _ = stimulus
    spec = resolve_model({"name": algorithm, "algorithm": algorithm})
    with_p = open_store(run_motion_model(spec, path, tmp_path / "p.zarr", write_population=True))
    without = open_store(run_motion_model(spec, path, tmp_path / "nop.zarr", write_population=False))
    assert "p" in with_p.arrays and "p" not in without.arrays
    np.testing.assert_array_equal(with_p["flow"].compute(), without["flow"].compute())


def test_a_response_job_reads_its_stimulus_without_dask(stimulus, tmp_path):
    """The frames are read with Zarr: a response job's process imports no Dask (about 0.9 s of its start-up),
    and the flow is the one read through a Dask array (the frames' values are the same)."""
    import subprocess
    import sys

    path, frames = stimulus
    out = tmp_path / "job" / "texture.zarr"
    code = ("import sys\nfrom psybench.motion.responses import run_motion_model\n"
            f"run_motion_model({{'name': 'dis', 'algorithm': 'dis', 'params': {{}}}}, {str(path)!r}, {str(out)!r})\n"
            "print(sorted(m for m in ('dask', 'xarray') if m in sys.modules))")
    job = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert job.stdout.strip() == "[]", job.stdout + job.stderr
    spec = resolve_model({"name": "dis", "algorithm": "dis"})
    blocks = motion_response_blocks(spec, open_store(path)["frames"], Display(width_px=W, height_px=H))
    np.testing.assert_array_equal(np.asarray(open_store(out)["flow"]), np.concatenate([b["flow"] for b in blocks]))


# ------------------------------------------------------------------------------ mean flow and codec
def test_response_store_holds_the_domain_mean_of_its_flow_and_compresses_it_with_lz4(stimulus, tmp_path, user_path):
    """mean_flow is the readouts' domain mean of the stored float32 flow, to the bit (the stream model's
    flow crosses block and chunk boundaries: 3-frame blocks); flow and p are Blosc-LZ4 with byte shuffle."""
    from psybench.io.integrity import open_group
    from psybench.motion.readouts import _stored_mean_flow

    path, _ = stimulus
    spec = resolve_model({"name": "st", "callable": f"{user_path}:stream", "kind": "stream", "params": {"gain": 0.1}})
    out = run_motion_model(spec, path, tmp_path / "st.zarr", block_frames=3, write_population=True)
    group = open_group(out)
    stored = group["mean_flow"][...]
    assert stored.dtype == np.float64 and stored.shape == (T, 2)
    assert np.array_equal(stored, _stored_mean_flow(group["flow"]))
    assert np.array_equal(stored[:, 0], (0.1 * np.arange(T, dtype=np.float32)).astype(np.float64))
    for name in ("flow", "p"):
        (codec,) = group[name].metadata.codecs[1:]
        assert (codec.to_dict()["name"], codec.cname.value, codec.shuffle.value, codec.typesize) == (
            "blosc", "lz4", "shuffle", 4)


def test_a_model_yielding_mean_flow_is_refused(stimulus, tmp_path, user_path):
    path, _ = stimulus
    spec = resolve_model({"name": "st", "callable": f"{user_path}:stream", "kind": "stream"})
    blocks = ({**b, "mean_flow": np.zeros((len(b["flow"]), 2))} for b in spec.algorithm.function(
        iter([np.zeros((T, H, W), np.float32)]), display=Display(width_px=W, height_px=H)))
    from psybench.motion import responses

    with pytest.raises(ModelError, match="model 'st' yielded 'mean_flow'"):
        list(responses._with_mean_flow(spec, blocks))
