"""Deep attention models: CNN feature family and untuned map-output models.

Known answers: torchvision's own feature extractor on the same frames and weights
(bit for bit on CPU), OpenCV's INTER_AREA and a block mean for the area pooling,
the MIT metrics computed directly on the same maps.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from psybench.attention.deep_models import (  # noqa: E402
    IMAGENET_MEAN,
    IMAGENET_STD,
    CNNFeatures,
    area_resize,
    area_weights,
)
from psybench.attention.evaluate import rank_percentiles  # noqa: E402
from psybench.attention.map_models import centre_bias, maps_to_grid, untuned_map_scores  # noqa: E402
from psybench.attention.metrics import centre_baseline, score_frames  # noqa: E402


def _frames(n=3, h=48, w=64, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=(n, h, w, 3), dtype=np.uint8)


def _reference_features(net, frames, layers, size=None, memory_format=torch.channels_last):
    """torchvision's documented pipeline, written out independently of psybench.

    In channels-last memory (PyTorch's layout for fast convolutions, which psybench
    uses), or in ``torch.contiguous_format`` (NCHW).
    """
    from torchvision.models.feature_extraction import create_feature_extractor
    from torchvision.transforms import v2

    steps = [v2.ToDtype(torch.float32, scale=True)]
    if size is not None:
        steps.append(v2.Resize(size, antialias=True))
    steps.append(v2.Normalize(IMAGENET_MEAN, IMAGENET_STD))
    x = v2.Compose(steps)(torch.from_numpy(frames).permute(0, 3, 1, 2).contiguous())
    ext = create_feature_extractor(net.eval(), return_nodes=layers).to(memory_format=memory_format)
    with torch.inference_mode():
        out = ext(x.contiguous(memory_format=memory_format))
    return {k: v.numpy() for k, v in out.items()}


@pytest.mark.parametrize(("arch", "layers", "resolution"), [
    ("resnet18", ["layer1", "layer2"], "native"),
    ("vgg11", ["features.5"], [40, 32]),
    ("resnet18", ["layer1.0.add", "layer2"], "native"),  # a graph node that is no module
])
def test_cnn_features_equal_torchvision_extractor(arch, layers, resolution):
    torch.set_num_threads(1)
    model = CNNFeatures(arch=arch, layers=layers, resolution=resolution, seed=3)
    net = getattr(torchvision.models, arch)(weights=None)
    net.load_state_dict(model.extractor.state_dict(), strict=False)
    for k, v in model.extractor.state_dict().items():  # the extractor keeps the net's parameter names
        assert torch.equal(net.state_dict()[k], v)
    frames = _frames()
    size = None if resolution == "native" else [resolution[1], resolution[0]]
    ref = _reference_features(net, frames, layers, size)
    got = model.features(frames)
    assert list(got) == layers
    nchw = _reference_features(net, frames, layers, size, memory_format=torch.contiguous_format)
    for name in layers:
        np.testing.assert_array_equal(got[name], ref[name])  # bit for bit on CPU
        np.testing.assert_allclose(got[name], nchw[name], rtol=1e-4, atol=1e-5)  # the layout: float rounding


@pytest.mark.parametrize(("arch", "layer"), [("resnet18", "layer2"), ("vgg11", "features.5")])
def test_cnn_features_from_a_weights_file_equal_the_network_with_those_weights(arch, layer, tmp_path):
    """Built from a weights file (no random draw first), every tensor is the file's: bit for bit."""
    torch.set_num_threads(1)
    torch.manual_seed(5)
    net = getattr(torchvision.models, arch)(weights=None).eval()
    torch.save(net.state_dict(), tmp_path / "w.pt")
    model = CNNFeatures(arch=arch, layers=[layer], weights=str(tmp_path / "w.pt"), seed=1)
    kept = model.extractor.state_dict()
    assert kept and all(torch.equal(v, net.state_dict()[k]) for k, v in kept.items())
    assert all(not t.is_meta for t in model.extractor.state_dict().values())
    frames = _frames()
    np.testing.assert_array_equal(model.features(frames)[layer], _reference_features(net, frames, [layer])[layer])


def test_cnn_maps_are_layers_area_pooled_to_the_finest():
    torch.set_num_threads(1)
    model = CNNFeatures(arch="resnet18", layers=["layer2", "layer3"], seed=1)
    frames = _frames(n=2, h=64, w=96)
    feats = model.features(frames)
    maps = model(frames)
    c2, c3 = feats["layer2"].shape[1], feats["layer3"].shape[1]
    assert maps.shape == (2, 8, 12, c2 + c3) and maps.dtype == np.float32
    assert model.channels[0] == "layer2:0" and model.channels[-1] == f"layer3:{c3 - 1}"
    np.testing.assert_array_equal(maps[..., :c2], feats["layer2"].transpose(0, 2, 3, 1))
    # layer3 (4 x 6) enlarged by 2: each cell repeated over a 2 x 2 block
    up = feats["layer3"].transpose(0, 2, 3, 1).repeat(2, axis=1).repeat(2, axis=2)
    np.testing.assert_allclose(maps[..., c2:], up, rtol=1e-6, atol=1e-6)


def test_cnn_maps_pooled_straight_to_the_grid():
    """Each layer area-pooled to the grid: the finest stack pooled there, where the sizes divide; else OpenCV's."""
    import cv2

    torch.set_num_threads(1)
    model = CNNFeatures(arch="resnet18", layers=["layer1", "layer2"], seed=2)
    frames = _frames(n=2, h=64, w=96)  # layer1 16 x 24, layer2 8 x 12
    np.testing.assert_array_equal(model.to_grid(frames, (4, 6)), area_resize(model(frames), (4, 6)))
    np.testing.assert_array_equal(model.to_grid(frames, None), model(frames))
    feats = model.features(frames)
    got = model.to_grid(frames, (5, 7))  # no size divides: each layer alone, as INTER_AREA pools it
    ref = np.concatenate([np.stack([np.stack([cv2.resize(np.ascontiguousarray(f[b, c]), (7, 5),
                                                         interpolation=cv2.INTER_AREA)
                                              for c in range(f.shape[1])], -1) for b in range(2)])
                          for f in feats.values()], -1)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_cnn_batch_of_n_equals_n_single_calls():
    torch.set_num_threads(1)
    model = CNNFeatures(arch="resnet18", layers=["layer2"], resolution=[64, 48], seed=2)
    frames = _frames(n=4)
    batch = model(frames)
    singles = np.concatenate([model(frames[i : i + 1]) for i in range(4)])
    # not bit for bit: CPU convolutions sum in a batch-size-dependent order (float32 rounding, ~1e-6 here)
    np.testing.assert_allclose(batch, singles, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("src", "dst"), [((30, 40), (15, 20)), ((28, 28), (10, 12)), ((37, 53), (30, 40))])
def test_area_resize_equals_opencv_inter_area(src, dst):
    cv2 = pytest.importorskip("cv2")
    a = np.random.default_rng(5).random((2, *src, 3)).astype(np.float32)
    got = area_resize(a, dst)
    for b in range(2):
        ref = cv2.resize(a[b], (dst[1], dst[0]), interpolation=cv2.INTER_AREA)
        np.testing.assert_allclose(got[b], ref, rtol=1e-5, atol=1e-6)


def test_area_resize_is_a_block_mean_at_an_integer_factor():
    a = np.random.default_rng(6).random((1, 6, 9)).astype(np.float32)
    block = a.reshape(1, 2, 3, 3, 3).mean(axis=(2, 4))
    np.testing.assert_allclose(area_resize(a, (2, 3)), block, rtol=1e-6)
    assert np.allclose(area_weights(5, 3).sum(1), 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8])
@pytest.mark.parametrize(("src", "dst"), [((30, 40), (30, 40)), ((15, 20), (30, 40)), ((60, 80), (30, 40)),
                                          ((37, 53), (30, 40)), ((30, 53), (30, 40)), ((10, 80), (30, 40)),
                                          ((1, 1), (3, 2)), ((7, 5), (1, 1))])
def test_area_resize_axis_by_axis_equals_the_weights_over_both_axes(src, dst, dtype):
    """The pooling one axis at a time (kept, block mean, repeat or product) equals the separable weights
    applied over both axes at once, as the pooling was first written; bit for bit where no cell is averaged."""
    rng = np.random.default_rng(8)
    for shape in ((3, *src), (3, *src, 5)):
        a = (rng.random(shape) * 255).astype(dtype)
        sub = "byx" if a.ndim == 3 else "byxk"
        ref = np.einsum(f"Yy,{sub},Xx->{sub.replace('y', 'Y').replace('x', 'X')}", area_weights(src[0], dst[0]),
                        np.asarray(a, np.float64), area_weights(src[1], dst[1])).astype(np.float32)
        got = area_resize(a, dst)
        assert got.dtype == np.float32 and got.shape == ref.shape and got.flags.c_contiguous
        if all(d % s == 0 for s, d in zip(src, dst)):
            np.testing.assert_array_equal(got, ref)
        else:
            np.testing.assert_allclose(got, ref, rtol=2e-7, atol=1e-12)
    view = np.random.default_rng(9).random((2, 5, 30, 40)).astype(np.float32).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(area_resize(view, (30, 40)), view)  # a torch layout's view: kept, copied


def test_cnn_features_bad_entries_name_the_key():
    from psybench.registry import ModelError

    with pytest.raises(ModelError, match="arch 'alexnet'"):
        CNNFeatures(arch="alexnet")
    with pytest.raises(ModelError, match="layer9"):
        CNNFeatures(arch="resnet18", layers=["layer9"])
    with pytest.raises(ModelError, match="resolution"):
        CNNFeatures(arch="resnet18", resolution=[224])


def _gaze_counts(T=12, H=30, W=40, N=4, seed=0):
    rng = np.random.default_rng(seed)
    oc = np.zeros((N, T, H, W))
    for o in range(N):
        for t in range(T):
            if rng.random() < 0.9:
                oc[o, t, rng.integers(8, 22), rng.integers(10, 30)] += 1
    return oc


class _DeepMap:
    """A user's deep map model: a small conv net's log-density, batched."""

    def __init__(self):
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 5, padding=2), torch.nn.ReLU(),
                                       torch.nn.Conv2d(4, 1, 3, padding=1))

    def __call__(self, frames):
        x = torch.from_numpy(frames).permute(0, 3, 1, 2).float() / 255
        with torch.inference_mode():
            y = self.net(x)[:, 0]
        return torch.log_softmax(y.flatten(1), 1).reshape(y.shape).numpy()


def test_map_model_scores_equal_the_metrics_on_its_maps():
    T, H, W = 12, 30, 40
    frames = _frames(n=T, h=60, w=80, seed=4)
    model = _DeepMap()
    raw = model(frames)
    grid = maps_to_grid(raw, (H, W), output="log_density")
    # independently: the density pooled over 2 x 2 blocks is each cell's mass
    dens = np.exp(raw.astype(np.float64))
    dens /= dens.sum((1, 2), keepdims=True)
    mass = dens.reshape(T, H, 2, W, 2).sum((2, 4))
    np.testing.assert_allclose(grid, mass, rtol=1e-5, atol=1e-9)
    oc = _gaze_counts(T, H, W)
    got = untuned_map_scores(grid, oc)
    direct = score_frames(mass, oc.sum(0))
    for k, v in direct.items():
        assert got[k] == pytest.approx(v, rel=1e-4, abs=1e-6), k
    meds = []
    for o in range(len(oc)):
        ok = oc[o].sum((1, 2)) > 0
        cells = np.array([np.flatnonzero(oc[o, t])[0] for t in np.flatnonzero(ok)])
        meds.append(np.median(rank_percentiles(mass[ok].reshape(ok.sum(), -1), cells)) * 100)
    assert got["rank_percentile"] == pytest.approx(np.mean(meds), rel=1e-9)


def test_centre_bias_is_the_log_centre_prior_and_ranks_central_gaze_high():
    frames = _frames(n=2, h=30, w=40)
    lp = centre_bias(frames)
    assert lp.shape == (2, 30, 40)
    np.testing.assert_allclose(np.exp(lp[1]), centre_baseline((30, 40)), rtol=1e-5)
    oc = np.zeros((2, 2, 30, 40))
    oc[:, :, 15, 20] = 1  # everyone at the centre: the maximum, tied with the 3 other central cells (mid-rank)
    s = untuned_map_scores(maps_to_grid(lp, (30, 40), output="log_density"), oc)
    assert s["rank_percentile"] == pytest.approx((1196 + 1.5) / (1200 - 1) * 100)
    oc[:, :, 0, 0], oc[:, :, 15, 20] = 1, 0  # everyone in a corner: the minimum (tied with 3 corners)
    s = untuned_map_scores(maps_to_grid(lp, (30, 40), output="log_density"), oc)
    assert s["rank_percentile"] == pytest.approx(1.5 / (1200 - 1) * 100)


def _write_avi(path, n=10, size=(160, 120), fps=10.0):
    import cv2

    w, h = size
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    assert vw.isOpened()
    rng = np.random.default_rng(7)
    for i in range(n):
        img = np.zeros((h, w, 3), np.uint8)
        img[:, : w // 2, 2] = 200  # red left half (BGR)
        img[h // 3 :, w // 2 :, 1] = 40 * (i % 5)  # a green block that changes
        img[rng.integers(0, h), :] = 255
        vw.write(img)
    vw.release()


def test_rgb_feature_store_from_the_movie_file_equals_the_cnn_pooled(tmp_path):
    import cv2

    from psybench.attention.deep_models import write_rgb_feature_store
    from psybench.attention.responses import write_feature_store
    from psybench.attention.stimuli import ingest_movie
    from psybench.io.store import open_store

    torch.set_num_threads(1)
    movie = tmp_path / "clip.avi"
    _write_avi(movie)
    stim = ingest_movie(movie, tmp_path / "clip.zarr", grid=(40, 30))
    model = CNNFeatures(arch="resnet18", layers=["layer2", "layer3"], resolution=[128, 96], seed=0)
    out = write_rgb_feature_store(stim, tmp_path / "cnn.zarr", model=model, movie_file=movie, batch_size=4,
                                  description={"model": "cnn", "params": {"arch": "resnet18"}})
    store = open_store(out)
    got = np.asarray(store["maps"])
    # independently: every frame decoded by OpenCV, in RGB, through the network, then INTER_AREA to the grid
    cap = cv2.VideoCapture(str(movie))
    frames = []
    while (r := cap.read())[0]:
        frames.append(cv2.cvtColor(r[1], cv2.COLOR_BGR2RGB))
    cap.release()
    maps = model(np.stack(frames))  # (10, 12, 16, K)
    ref = np.stack([np.stack([cv2.resize(m[..., k], (40, 30), interpolation=cv2.INTER_AREA)
                              for k in range(m.shape[-1])], -1) for m in maps])
    assert got.shape == ref.shape == (10, 30, 40, 128 + 256)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert store.attrs["features"]["input"] == [160, 120]
    assert store.attrs["features"]["channels"][:1] == ["layer2:0"]
    raw = open_store(write_feature_store(stim, tmp_path / "raw.zarr", model="raw"))
    assert set(raw.attrs) <= set(store.attrs) and store.dims["maps"] == raw.dims["maps"]


def test_rgb_feature_store_of_a_model_that_reuses_its_output_buffer(tmp_path):
    """A user's model may return the same array every batch, refilled: each batch is stored as it was returned."""
    from psybench.attention.deep_models import write_rgb_feature_store
    from psybench.attention.stimuli import ingest_movie
    from psybench.io.store import open_store

    movie = tmp_path / "clip.avi"
    _write_avi(movie, n=40)
    stim = ingest_movie(movie, tmp_path / "clip.zarr", grid=(40, 30))

    class Reusing:  # maps already on the grid, written into one buffer: frame t's maps are all t
        def __init__(self):
            self.buf, self.t = np.empty((2, 30, 40, 64), np.float32), 0

        def __call__(self, frames):
            out = self.buf[: len(frames)]
            out[:] = (self.t + np.arange(len(frames), dtype=np.float32))[:, None, None, None]
            self.t += len(frames)
            return out

    out = write_rgb_feature_store(stim, tmp_path / "f.zarr", model=Reusing(), movie_file=movie, batch_size=2,
                                  description={"model": "reusing", "params": {}})
    maps = np.asarray(open_store(out, deep=True)["maps"])
    np.testing.assert_array_equal(maps, np.broadcast_to(np.arange(40, dtype=np.float32)[:, None, None, None],
                                                        maps.shape))


def test_rgb_batches_of_a_rendered_scene_are_its_grey_grid(tmp_path):
    from psybench.attention.deep_models import rgb_batches
    from psybench.attention.stimuli import write_popout_store
    from psybench.io.store import open_store

    stim = write_popout_store(tmp_path / "popout.zarr", n_frames=7, seed=1)
    batches = list(rgb_batches(stim, batch_size=3))
    assert [len(b) for b in batches] == [3, 3, 1]
    rgb = np.concatenate(batches)
    grey = np.asarray(open_store(stim)["frames"])
    assert rgb.dtype == np.uint8 and rgb.shape == (*grey.shape, 3)
    np.testing.assert_array_equal(rgb[..., 1], np.rint(grey * 255).astype(np.uint8))
    assert (rgb[..., 0] == rgb[..., 2]).all()


def test_rgb_batches_check_the_movie_file(tmp_path):
    from psybench.attention.deep_models import rgb_batches
    from psybench.attention.stimuli import MovieReadError, ingest_movie

    movie = tmp_path / "clip.avi"
    _write_avi(movie)
    stim = ingest_movie(movie, tmp_path / "clip.zarr", grid=(40, 30))
    with pytest.raises(MovieReadError, match="needs the movie file"):
        next(rgb_batches(stim))
    other = tmp_path / "other.avi"
    _write_avi(other)
    with pytest.raises(MovieReadError, match="'clip.avi'"):
        next(rgb_batches(stim, movie_file=other))


def test_docs_deep_map_recipe_runs_as_written(tmp_path, monkeypatch):
    """docs/real_tasks.md, "Attention: your own deep model": the module and the Python block, as written."""
    import re
    import sys
    from pathlib import Path

    import yaml

    from psybench.attention.stimuli import write_popout_store

    page = (Path(__file__).resolve().parent.parent / "docs/real_tasks.md").read_text()
    start = page.index("### Attention: your own deep model")
    section = page[start : page.find("\n##", start + 10)]
    module, script = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    entries = yaml.safe_load(re.findall(r"```yaml\n(.*?)```", section, flags=re.S)[0])["attention"]["models"]
    from psybench.api import score_config

    assert {"raw", "cnn", "centre_bias"} <= {e.get("algorithm") for e in entries}
    score_config(None, {"tracks": ["attention"], "attention": {"models": entries}})  # passes the schema
    pkg = tmp_path / "mypackage"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "deepsal.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in [m for m in list(sys.modules) if m == "mypackage" or m.startswith("mypackage.")]:
        monkeypatch.delitem(sys.modules, mod)
    torch.manual_seed(0)
    stimulus = write_popout_store(tmp_path / "A.zarr", n_frames=6, n_distractors=4)
    counts = _gaze_counts(T=6)
    scope = {"stimulus": stimulus, "movie": None, "counts": counts}
    exec(compile(script, "real_tasks.md", "exec"), scope)
    scores = scope["scores"]
    assert 0 <= scores["rank_percentile"] <= 100 and np.isfinite(scores["NSS"])
    # the weights path: a state dict written here loads with strict keys and gives the same maps
    from mypackage.deepsal import build

    torch.manual_seed(1)
    first = build()
    net_file = tmp_path / "deepsal.pt"
    frames = _frames(n=2, h=30, w=40)
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, padding=2), torch.nn.ReLU(), torch.nn.Conv2d(8, 1, 3, padding=1))
    torch.save(net.state_dict(), net_file)
    with torch.inference_mode():
        np.testing.assert_array_equal(build(weights=str(net_file))(frames), first(frames))


def test_cnn_entry_through_the_feature_stage_with_a_weights_file(tmp_path):
    """A config entry of the cnn family with weights written here: the workflow's feature stage equals the
    network with those weights run directly, and the store records the weights digest and torch."""
    from psybench.attention.responses import write_feature_store
    from psybench.attention.stimuli import write_popout_store
    from psybench.deep import weights_digest
    from psybench.handoff import describe_model
    from psybench.io.store import open_store
    from psybench.registry import resolve_model

    torch.manual_seed(11)
    net = torchvision.models.resnet18(weights=None)
    torch.save(net.state_dict(), tmp_path / "r18.pt")
    entry = {"name": "resnet", "algorithm": "cnn", "weights": str(tmp_path / "r18.pt"), "batch_size": 4,
             "params": {"arch": "resnet18", "layers": ["layer1"], "resolution": [80, 60]}}
    spec = resolve_model(entry, track="attention")
    stim = write_popout_store(tmp_path / "A.zarr", n_frames=6, seed=1)
    out = write_feature_store(stim, tmp_path / "f.zarr", model=describe_model(spec))
    store = open_store(out)
    got = np.asarray(store["maps"])
    torch.set_num_threads(1)
    direct = CNNFeatures(arch="resnet18", layers=["layer1"], resolution=[80, 60], seed=99)
    direct.extractor.load_state_dict({k: v for k, v in net.state_dict().items()
                                      if k in direct.extractor.state_dict()})
    grey = np.asarray(open_store(stim)["frames"])
    rgb = np.repeat(np.rint(grey * 255).astype(np.uint8)[..., None], 3, axis=-1)
    ref = area_resize(direct(rgb), (30, 40))  # layer1 of 60 x 80 is 15 x 20: each cell to 2 x 2
    assert got.shape == (6, 30, 40, 64)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert store.attrs["features"]["weights_digest"] == weights_digest(tmp_path / "r18.pt")
    env = store.attrs["torch_environment"]
    assert env["torch"] == torch.__version__ and env["device"] == "cpu"
    assert env["determinism"]["tf32_matmul"] is False


@pytest.mark.workflow
def test_workflow_puts_a_resnet_feature_family_on_table1(harness, tmp_path):
    """The tiny attention config plus a ResNet feature family with a weights file: Table 1 and the
    metrics get its rows; a rewritten weights file replans its feature stores (a dry run shows it)."""
    import pandas as pd

    wd = tmp_path / "wf"
    harness.copy(wd, harness.tiny_attention_config(models=[
        {"name": "raw", "algorithm": "raw", "L": 1},
        {"name": "resnet", "algorithm": "cnn", "weights": "weights/r18.pt", "batch_size": 16,
         "params": {"arch": "resnet18", "layers": ["layer2"], "resolution": [160, 120]}, "L": 1},
    ]))
    (wd / "weights").mkdir()
    torch.manual_seed(0)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), wd / "weights/r18.pt")
    harness.run(wd, "--cores", "2", "attention_all", timeout=600)
    table = pd.read_csv(wd / "results/attention/table1.csv")
    assert set(table["features"]) == {"raw", "resnet"}
    resnet = table[table["features"] == "resnet"]
    assert len(resnet) == 2 * 7 and (resnet["ND"] == 128 * 1 * 2).all() and resnet["median"].notna().all()
    metrics = pd.read_csv(wd / "results/attention/metrics.csv")
    assert metrics["model"].str.startswith("resnet").any()
    stores = sorted(p.name for p in (wd / "results/attention/responses").iterdir())  # cnn-<8 hex>, raw
    assert len(stores) == 2 and stores[0].startswith("cnn-") and stores[1] == "raw"
    torch.manual_seed(1)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), wd / "weights/r18.pt")
    dry = harness.run(wd, "--cores", "2", "attention_all", "-n", timeout=300)
    out = dry.stdout + dry.stderr
    import re

    # the feature job reruns, into a store named by the new digest
    assert "rule attention_responses:" in out
    assert set(re.findall(r"responses/(cnn-[0-9a-f]{8})/", out)) - {stores[0]}


def test_a_map_model_in_the_workflow_config_is_scored_untuned_not_tuned():
    from psybench.attention.models import map_models_of, saliency_models
    from psybench.registry import resolve_model

    entries = [{"name": "raw", "algorithm": "raw", "L": 1}, {"name": "centre", "algorithm": "centre_bias"}]
    specs = {e["name"]: resolve_model(e, track="attention") for e in entries}
    config = {"attention": {"models": entries}}
    assert [m.name for m in saliency_models(config, specs)] == ["raw"]
    assert [s.name for s in map_models_of(config, specs)] == ["centre"]


def test_map_model_scores_on_a_movie_equal_the_metrics_on_its_lagged_maps(tmp_path):
    """A user's deep map factory scored on a movie file through psybench = the MIT metrics, the rank percentile
    and the ceiling computed here on its own maps of the frames 100 ms before each test frame."""
    import pandas as pd

    from psybench.attention.map_models import map_model_scores
    from psybench.attention.metrics import loo_ceiling
    from psybench.attention.stimuli import ingest_movie
    from psybench.registry import resolve_model

    movie = tmp_path / "clip.avi"
    _write_avi(movie, n=12)  # 160 x 120 at 10 frames/s
    stim = ingest_movie(movie, tmp_path / "clip.zarr", grid=(40, 30))
    mod = tmp_path / "deepmap_user.py"
    mod.write_text(
        "import numpy as np\n"
        "def build(*, weights=None, device='cpu', output='log_density'):\n"
        "    def predict(frames):\n"
        "        g = frames.astype(np.float32).mean(-1) / 255\n"
        "        return g - np.log(np.exp(g).sum((1, 2), keepdims=True))\n"
        "    return predict\n")
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        spec = resolve_model({"name": "deepmap", "callable": "deepmap_user:build", "kind": "map", "factory": True,
                              "batch_size": 5, "params": {"output": "log_density"}}, track="attention")
        rng = np.random.default_rng(3)
        rows = [{"subject": s, "movie": "clip", "frame": f, "t_ms": f * 100.0, "x": rng.uniform(0, 160),
                 "y": rng.uniform(0, 120), "valid": True} for s in ("s1", "s2", "s3") for f in range(12)]
        gaze = pd.DataFrame(rows)
        got = map_model_scores(spec, stim, gaze, movie_file=movie, same_movie=False, lags_ms=[100, 300])
    finally:
        sys.path.remove(str(tmp_path))
    # independently: decode, the log-density's mass per 4 x 4 block, frames 3..11 scored by maps 2..10
    import cv2

    cap = cv2.VideoCapture(str(movie))
    frames = []
    while (r := cap.read())[0]:
        frames.append(cv2.cvtColor(r[1], cv2.COLOR_BGR2RGB))
    cap.release()
    g = np.stack(frames).astype(np.float64).mean(-1) / 255
    p = np.exp(g) / np.exp(g).sum((1, 2), keepdims=True)
    mass = p.reshape(12, 30, 4, 40, 4).sum((2, 4))
    test = np.arange(3, 12)
    oc = np.zeros((3, len(test), 30, 40))
    for o, s in enumerate(("s1", "s2", "s3")):
        for i, f in enumerate(test):
            row = gaze[(gaze["subject"] == s) & (gaze["frame"] == f)].iloc[0]
            oc[o, i, int(row["y"] * 30 / 120), int(row["x"] * 40 / 160)] += 1
    want = untuned_map_scores(mass[test - 1], oc)
    for k, v in want.items():
        assert got["scores"][k] == pytest.approx(v, rel=1e-5, abs=1e-7), k
    assert got["ceiling"] == pytest.approx(loo_ceiling(oc), nan_ok=True)
