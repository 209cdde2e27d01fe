"""Streamed IntPhys models: batches of one movie, the training hook, the representation surprise."""
import gc
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, list_movies
from psybench.intphys.models import observe
from psybench.intphys.models.stream import MovieStream, fit_streams, movie_streams, stream_scores
from psybench.intphys.models.surprise import RepresentationSurprise, representation_surprise, window_surprises

torch = pytest.importorskip("torch")

ENCODER = textwrap.dedent("""
    import torch

    def build():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.Tanh(),
                                   torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(2), torch.nn.Flatten(1))

    def tokens():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Conv2d(3, 6, 5, stride=4), torch.nn.Tanh(), torch.nn.Flatten(2))
""")


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    root = tmp_path_factory.mktemp("stream")
    generate_intphys(root, "dev", n_frames=20, height=48, width=48, seed=5, blocks=("O1",), threads=2)
    n = len(list_movies(root, "dev"))
    ingest_shard(root, "dev", root / "s.zarr", root / "s.csv", shard=0, shard_size=n, threads=2)
    return root


@pytest.fixture()
def encoder_module(tmp_path, monkeypatch):
    (tmp_path / "phys_encoder.py").write_text(ENCODER)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("phys_encoder", None)
    yield "phys_encoder"
    sys.modules.pop("phys_encoder", None)


def test_batches_concatenate_to_the_movie_and_stay_within_batch_size(shard):
    obs = observe(shard / "s.zarr", shard / "s.csv")
    whole = np.asarray(obs.scene)
    for b in (1, 7, 100):
        for i, movie in zip(range(4), movie_streams(obs, b)):
            batches = list(movie)
            assert all(len(f.scene) <= b and not f.scene.flags.writeable for f in batches)
            assert len(batches) == len(movie) == -(-20 // b)
            np.testing.assert_array_equal(np.concatenate([f.scene for f in batches]), whole[i])
            np.testing.assert_array_equal(np.concatenate([f.masks for f in batches]), np.asarray(obs.masks[i]))
            assert movie.movie == obs.movies[i] and movie.masks_grayscale == obs.masks_grayscale[i]


def test_largest_array_handed_to_a_model_is_one_batch(shard):
    obs = observe(shard / "s.zarr", shard / "s.csv")
    seen = []

    def model(movie):
        for f in movie:
            seen.append(max(a.nbytes for a in f if a is not None))
        return 0.0

    p = stream_scores(model, obs, batch_size=4)
    assert list(p.index) == list(obs.movies) and (p == 1.0).all()
    assert max(seen) == 4 * 48 * 48 * 4  # float32 depth of 4 frames; scene is 4 * 48 * 48 * 3 uint8
    assert len(seen) == len(obs.movies) * 5


def test_each_array_of_a_movie_is_read_once_per_pass_and_only_if_used(shard, monkeypatch):
    """The shard's chunks hold whole movies: a batch-by-batch read decoded them again for every batch."""
    import pickle

    from psybench.intphys.models import observation as observation_module

    obs = observe(shard / "s.zarr", shard / "s.csv")
    names = {id(obs.scene): "scene", id(obs.depth): "depth", id(obs.masks): "masks"}
    reads = []
    real = observation_module.Movies.__getitem__
    monkeypatch.setattr(observation_module.Movies, "__getitem__",
                        lambda self, key: reads.append(names[id(self)]) or real(self, key))
    movies = list(zip(range(3), movie_streams(obs, 4)))  # 5 batches a movie
    for _, movie in movies:
        assert sum(f.scene.sum() >= 0 for f in movie) == 5
    assert reads == ["scene"] * 3  # once a movie; depth and masks never asked for, never read
    reads.clear()
    batches = list(movies[0][1])
    assert [f.masks.shape[0] for f in batches] == [4] * 5 and reads == ["masks"]
    whole = np.asarray(obs.scene[0])
    f = pickle.loads(pickle.dumps(batches[1]))
    np.testing.assert_array_equal(f.scene, whole[4:8])
    scene, depth, masks = batches[1]
    assert depth.shape == (4, 48, 48) and masks is batches[1][2] and not scene.flags.writeable


def test_movies_read_with_zarr_equal_numpy_indexing_and_build_no_dask_graph(shard, monkeypatch):
    """A movie is read by Zarr itself: a Dask graph built, optimised and scheduled for every read cost
    more than decoding a small movie. Keys Zarr does not read (new axes, negative steps, lists) still
    follow NumPy's basic and Dask's indexing, and ``chunks`` stay the storage chunking as Dask gave it."""
    import dask.array as da

    from psybench.io.store import open_store

    obs = observe(shard / "s.zarr", shard / "s.csv")
    stored = open_store(shard / "s.zarr")
    whole = stored["scene"].compute()
    assert obs.scene.chunks == stored["scene"].chunks and obs.depth.chunks == stored["depth"].chunks
    keys = [3, -1, np.int64(2), slice(1, 3), slice(None, None, 2), (0, slice(4, 9)), (Ellipsis, 1), (1, Ellipsis, 0),
            (slice(-3, None), 2), (None, 0), slice(None, None, -1), (0, slice(None, None, -2)), [2, 0]]
    for key in keys:
        np.testing.assert_array_equal(obs.scene[key], whole[key], err_msg=repr(key))
    graphs = []
    real = da.Array.__array__
    monkeypatch.setattr(da.Array, "__array__", lambda self, *a, **k: graphs.append(self) or real(self, *a, **k))
    movie = next(movie_streams(obs, 4))
    np.testing.assert_array_equal(np.concatenate([f.scene for f in movie]), whole[0])
    assert np.asarray(obs.scene).shape == whole.shape and obs.masks[1, 2:4].shape == (2, 48, 48)
    assert graphs == []
    obs.scene[None, 0]  # a key Zarr does not read: Dask reads it
    assert len(graphs) == 1


def test_a_stream_leads_to_no_labels_or_paths(shard):
    obs = observe(shard / "s.zarr", shard / "s.csv")
    movie = next(movie_streams(obs, 2))
    todo, seen = [movie], set()
    while todo:
        x = todo.pop()
        if id(x) in seen or isinstance(x, type):
            continue
        seen.add(id(x))
        assert not isinstance(x, str) or ("s.zarr" not in x and "s.csv" not in x and "possible" not in x), x
        assert type(x).__module__.split(".")[0] not in ("zarr", "dask", "pandas"), type(x)
        todo.extend(gc.get_referents(x))
    with pytest.raises(TypeError, match="cannot be pickled"):
        __import__("pickle").dumps(movie)


def test_fit_hook_streams_every_train_movie_twice_if_asked(shard):
    obs = observe(shard / "s.zarr", shard / "s.csv")

    class Model:
        def fit(self, movies):
            self.passes = [[m.movie for m in movies] for _ in range(2)]
            self.frames = sum(len(f.scene) for m in movies for f in m)

    m = Model()
    fit_streams(m, [obs, obs], batch_size=6)
    assert m.passes[0] == m.passes[1] == list(obs.movies) * 2
    assert m.frames == 2 * 20 * len(obs.movies)
    with pytest.raises(TypeError, match="fit"):
        fit_streams(object(), [obs])


def _ln(x):
    x = np.asarray(x, dtype=np.float64)
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("factory", ["build", "tokens"])
@pytest.mark.parametrize("predictor", ["last", "linear"])
def test_surprise_equals_numpy_recomputation_for_any_batching(shard, encoder_module, factory, predictor):
    obs = observe(shard / "s.zarr", shard / "s.csv")
    model = representation_surprise(encoder=f"{encoder_module}:{factory}", window=8, stride=3, context=5,
                                    predictor=predictor)
    net = __import__(encoder_module).__dict__[factory]()
    for i in range(3):
        frames = np.asarray(obs.scene[i])
        with torch.no_grad():
            feats = net(torch.from_numpy(frames).permute(0, 3, 1, 2).float() / 255).numpy()
        # windows start at 0, 3, ..., 12: five windows of 8 frames in 20
        expected = window_surprises(_ln(feats), window=8, stride=3, context=5, predictor=predictor)
        assert len(expected) == 5
        for b in (1, 3, 20):
            got = model(MovieStream(obs, i, b))
            assert got == pytest.approx(expected.max(), rel=1e-5)
    # hand-computed: one window, 'last' predictor, context 1 -> mean |z1 - z0|
    z = np.array([[0.0, 1.0], [2.0, 5.0], [1.0, 1.0]])
    assert window_surprises(z, window=3, stride=1, context=1) == pytest.approx([(2 + 4 + 1 + 0) / 4])
    assert window_surprises(z, window=3, stride=1, context=2, predictor="linear") == pytest.approx([(3 + 8) / 2])


@pytest.mark.parametrize(("window", "stride", "context", "predictor"),
                         [(8, 3, 5, "last"), (6, 2, 3, "linear"), (16, 1, 8, "linear"), (5, 5, 4, "last")])
def test_windows_scored_per_batch_equal_the_window_by_window_loop(window, stride, context, predictor):
    """Windows scored together when their batch ends equal the former frame-by-frame loop (a deque of the
    last ``window`` representations, one window at a time), for any batching, reduced by max or mean."""
    from collections import deque

    from psybench.intphys.models.stream import Frames

    torch.manual_seed(2)
    encoder = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.Tanh(), torch.nn.Flatten(2))
    scene = np.random.default_rng(4).integers(0, 256, (23, 12, 12, 3), dtype=np.uint8)
    model = RepresentationSurprise(encoder, "cpu", window=window, stride=stride, context=context,
                                   predictor=predictor)
    def former(b):  # the windows of the former loop, the frames encoded in the same batches
        buffer, out, t = deque(maxlen=window), [], 0
        for a in range(0, 23, b):
            for z in model.encode(scene[a : a + b]):
                buffer.append(z)
                t += 1
                if t >= window and (t - window) % stride == 0:
                    zs = torch.stack(list(buffer))
                    last = zs[context - 1]
                    if predictor == "linear":
                        k = torch.arange(1, window - context + 1, dtype=zs.dtype).reshape((-1,) + (1,) * last.ndim)
                        pred = last + k * (last - zs[context - 2])
                    else:
                        pred = last.expand_as(zs[context:])
                    out.append(float((pred - zs[context:]).abs().to(torch.float64).mean()))
        return out

    for b in (1, 2, 3, 7, 23):
        with torch.inference_mode():
            expected = former(b)
        assert len(expected) == (23 - window) // stride + 1
        batches = [Frames(scene[a : a + b]) for a in range(0, 23, b)]
        assert model(batches) == pytest.approx(max(expected), rel=1e-12)
        model.reduce = "mean"
        assert model(batches) == pytest.approx(np.mean(expected), rel=1e-12)
        model.reduce = "max"


def test_weights_load_strictly_and_change_the_result(shard, encoder_module, tmp_path):
    obs = observe(shard / "s.zarr", shard / "s.csv")
    net = __import__(encoder_module).build()
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.5, generator=torch.Generator().manual_seed(3))
    torch.save(net.state_dict(), tmp_path / "w.pt")
    a = stream_scores(representation_surprise(encoder=f"{encoder_module}:build", window=8, context=4), obs)
    b = stream_scores(representation_surprise(encoder=f"{encoder_module}:build", window=8, context=4,
                                              weights=str(tmp_path / "w.pt")), obs)
    assert ((a > 0) & (a <= 1)).all() and not np.allclose(a, b)
    # on CPU, two jobs write byte-identical tables
    from psybench.intphys.responses import predict_shard
    entry = {"name": "rs", "algorithm": "representation_surprise", "weights": str(tmp_path / "w.pt"),
             "batch_size": 3, "params": {"encoder": f"{encoder_module}:build", "window": 8, "context": 4}}
    for out in ("1.csv", "2.csv"):
        predict_shard(entry, shard / "s.zarr", shard / "s.csv", tmp_path / out)
    assert (tmp_path / "1.csv").read_bytes() == (tmp_path / "2.csv").read_bytes()
    np.testing.assert_allclose(pd.read_csv(tmp_path / "1.csv")["p"], b, rtol=1e-6)
    torch.save({"0.weight": net.state_dict()["0.weight"]}, tmp_path / "bad.pt")
    with pytest.raises(Exception, match="bad.pt"):
        representation_surprise(encoder=f"{encoder_module}:build", weights=str(tmp_path / "bad.pt"))


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="package.module:factory"):
        representation_surprise(encoder="nocolon")
    with pytest.raises(ValueError, match="context < window"):
        RepresentationSurprise(None, "cpu", window=4, context=4)
    with pytest.raises(ValueError, match="predictor"):
        RepresentationSurprise(None, "cpu", predictor="learned")


class _MeanModel:
    """A factory's model: surprise = |mean luminance of the movie - mean of the train movies| (fit streams)."""

    def __init__(self, batches):
        self.batches, self.mean = batches, 0.0

    def fit(self, movies):
        frames = [f.scene for m in movies for f in m]
        self.mean = float(np.mean(np.concatenate(frames)))

    def __call__(self, movie):
        frames = list(movie)
        self.batches.append(max(len(f.scene) for f in frames))
        return abs(float(np.mean(np.concatenate([f.scene for f in frames]))) - self.mean) / 255


BUILT = []


def build_mean(*, weights, device):
    BUILT.append(_MeanModel([]))
    return BUILT[-1]


def test_predict_shards_builds_once_fits_on_train_and_writes_exp_minus_surprise(shard, tmp_path):
    from psybench.intphys.responses import predict_shards
    BUILT.clear()
    entry = {"name": "mean", "callable": f"{__name__}:build_mean", "kind": "stream", "factory": True,
             "batch_size": 6}
    outs = [tmp_path / "a" / "s.csv", tmp_path / "b" / "s.csv"]
    for o in outs:
        o.parent.mkdir()
    tables = predict_shards(entry, [shard / "s.zarr"] * 2, [shard / "s.csv"] * 2, outs,
                            train_stores=[shard / "s.zarr"], train_tables=[shard / "s.csv"])
    assert len(BUILT) == 1 and BUILT[0].batches and max(BUILT[0].batches) == 6
    scene = np.asarray(observe(shard / "s.zarr", shard / "s.csv").scene)
    expected = np.exp(-np.abs(scene.reshape(len(scene), -1).mean(1) - scene.mean()) / 255)
    for t, o in zip(tables, outs):
        np.testing.assert_allclose(t["p"], expected, rtol=1e-6)
        assert pd.read_csv(o)["movie"].tolist() == t["movie"].tolist()


def test_a_stream_model_that_fails_is_named_with_its_shard(shard, tmp_path):
    from psybench.intphys.responses import predict_shard
    from psybench.registry import ModelError
    with pytest.raises(ModelError, match=r"model 'neg'.*shard s.zarr.*surprise must be"):
        predict_shard({"name": "neg", "callable": f"{__name__}:negative", "kind": "stream"},
                      shard / "s.zarr", shard / "s.csv", tmp_path / "s.csv")


def negative(movie):
    return -1.0


def test_train_key_belongs_to_intphys_stream_models_and_is_described_only_when_set():
    from psybench.handoff import describe_model, model_from_description
    from psybench.registry import ModelError, resolve_model
    entry = {"name": "mean", "callable": f"{__name__}:build_mean", "kind": "stream", "factory": True}
    plain = describe_model(resolve_model(entry, track="intphys"))
    assert "train" not in plain
    assert describe_model(resolve_model({**entry, "train": False}, track="intphys")) == plain
    trained = describe_model(resolve_model({**entry, "train": True}, track="intphys"))
    assert trained == {**plain, "train": True}
    assert model_from_description(trained).train and not model_from_description(plain).train
    with pytest.raises(ModelError, match=r"model 'c'.*'train' applies to an intphys 'stream' model"):
        resolve_model({"name": "c", "algorithm": "constant", "train": True}, track="intphys")
    with pytest.raises(ModelError, match=r"'train' applies"):
        resolve_model({"name": "f", "algorithm": "farneback", "train": True}, track="motion")
    with pytest.raises(ModelError, match=r"'train' must be true or false"):
        resolve_model({**entry, "train": "yes"}, track="intphys")
