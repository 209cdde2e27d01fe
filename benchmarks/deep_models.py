"""Deep models through psybench against the same network called directly: speed and memory.

Every case runs one network with random weights written to a local file (nothing is
downloaded), on one torch thread, on the CPU. "direct" is what a user writes without
psybench: the same network built and loaded from the same weights file, its input read
from the same file (the movie file decoded with OpenCV, the stimulus store or each movie
of the shard read with zarr), called on the same batches; "direct_memory" is that network
already built, called on the batches already in memory. All run in the same process,
interleaved, best of ``--repeats``; the ratio psybench / direct is the figure (target
>= 0.95), and each case also prints its ratio to direct_memory and psybench's overhead
in CPU ms per frame, which does not depend on the network. Each case checks that every
path gives the same result, prints the CPU seconds of building the model once (a job's
constant) and runs its psybench stage in a fresh process at two movie lengths to report
the peak RSS (``VmHWM``; the batches are read one at a time, so it should be flat). The
process keeps freed memory for reuse, as the motion and attention jobs' scripts do.

``motion`` -- RAFT-small (Teed & Deng 2020): frame pairs per second of ``raft_small``
  through the response stage (:func:`psybench.motion.responses.run_motion_model`: the entry
  resolved with its weights file, the model built once, the frames read from a stimulus
  store in batches, converted, padded, the flow cropped, checked and written to the
  response store) and through the batched pair stage alone
  (:func:`psybench.motion.responses.batched_pair_blocks`), against torchvision's RAFT on
  the same batches (its ``OpticalFlow`` preset).
``cnn`` -- the ResNet-18 feature family (He et al. 2016; ``cnn`` of
  :mod:`psybench.attention.deep_models`): frames per second of the attention feature stage
  (:func:`psybench.attention.responses.write_feature_store`: the movie file decoded, RGB
  batches through the network, the layers area-pooled and written as a feature store on
  the grid) and of the built model alone on the decoded batches (``CNNFeatures``: input
  conversion, layers pooled to the finest), against torchvision's ResNet-18 truncated
  after the deepest chosen layer, on the same normalised batches. ``--cnn-size`` sets the
  movie's frame size (the network runs at it: ``resolution: native``).
``map`` -- a user's torch map-output model (a DeepGaze-style readout on ResNet-18 features
  giving a log-density, Kummerer, Wallis & Bethge 2016; kind ``map``,
  :mod:`psybench.attention.map_models`): frames per second of the map-scores stage
  (:func:`psybench.attention.map_models.map_model_rows`: decoded, through the network, put
  on the grid as a density and scored by the MIT metrics, the rank percentile and the
  ceiling) and of its maps alone (without the scoring), against the network on the same
  batches.
``stream`` -- an IntPhys stream model: ``representation_surprise`` (Garrido et al. 2025,
  Sec. 2-3; :mod:`psybench.intphys.models.surprise`) around a user's frame encoder
  (``--stream-encoder``: ``resnet18``, torchvision's ResNet-18 cut after ``layer2`` and
  average-pooled, He et al. 2016, a realistic per-frame video-encoder cost; or ``small``, a
  3-layer conv net): frames per second of the responses stage
  (:func:`psybench.intphys.responses.predict_shards`: the shard observed, each movie
  streamed in batches, encoded, windowed, P written) against what a user writes without
  psybench ("direct": the encoder built and its weights file loaded, each movie read from
  the shard with zarr, encoded in the same batches, LayerNorm, the windowed prediction
  error, the maximum over windows) and that loop on the movies already in memory
  ("direct_memory"); also psybench's overhead in CPU ms a frame (any encoder adds its own
  cost to both paths).

Run: ``.venv/bin/python benchmarks/deep_models.py [--cases motion cnn map stream]
[--repeats 3]`` (``--help`` lists each case's sizes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

CASES = ("motion", "cnn", "map", "stream")

#: A user's module, as a user writes it: a map-output factory and a frame encoder (torch).
USER_MODULE = textwrap.dedent('''
    """Benchmark models of a user: a DeepGaze-style log-density network and two frame encoders."""
    import numpy as np
    import torch
    import torchvision

    from psybench.deep import load_weights

    MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


    class SaliencyNet(torch.nn.Module):
        """ResNet-18 up to layer2, a 1 x 1 readout, a log-softmax over space: (b, 3, H, W) -> (b, H/8, W/8)."""

        def __init__(self):
            super().__init__()
            r = torchvision.models.resnet18(weights=None)
            self.features = torch.nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2)
            self.readout = torch.nn.Sequential(torch.nn.Conv2d(128, 16, 1), torch.nn.ReLU(), torch.nn.Conv2d(16, 1, 1))

        def forward(self, x):
            z = self.readout(self.features(x))[:, 0]
            return torch.log_softmax(z.flatten(1), 1).view_as(z)


    def preprocess(frames, device="cpu"):
        x = torch.from_numpy(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2).float() / 255
        return (x - MEAN.to(device)) / STD.to(device)


    def saliency_net():
        torch.manual_seed(0)
        return SaliencyNet().eval()


    def build_map(*, weights=None, device="cpu", output="log_density"):
        net = saliency_net()
        if weights is not None:
            load_weights(net, weights, model="saliency_net")
        net = net.to(device)

        def predict(frames):
            return net(preprocess(frames, device)).cpu().numpy()
        return predict


    def resnet_encoder():
        """torchvision's ResNet-18 cut after layer2, average-pooled: (b, 3, H, W) in [0, 1] -> (b, 128)."""
        torch.manual_seed(0)
        r = torchvision.models.resnet18(weights=None)
        return torch.nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2,
                                   torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(1))


    def encoder():
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 5, stride=2, padding=2), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(6), torch.nn.Flatten(1))
''')

_GAZE_SUBJECTS = 4


def hwm_mb() -> float:
    """VmHWM: peak resident set of this process (reset by exec, unlike ``ru_maxrss``)."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return -1.0


# ---------------------------------------------------------------- data ------------------------------------------------


def movie(n_t: int, size: int, seed: int = 0) -> np.ndarray:
    """A smooth random texture drifting by (0.8, -0.5) px/frame, float32 in [0, 1]."""
    rng = np.random.default_rng(seed)
    k = np.fft.fftfreq(size)
    spec = np.fft.fft2(rng.standard_normal((size, size))) * np.exp(-2 * np.pi**2 * 9 * (k[:, None]**2 + k**2))
    out = []
    for t in range(n_t):
        shift = np.exp(-2j * np.pi * (k[None, :] * 0.8 * t - k[:, None] * 0.5 * t))
        out.append(np.fft.ifft2(spec * shift).real)
    out = np.stack(out)
    return ((out - out.min()) / (out.max() - out.min())).astype(np.float32)


def write_movie(path: Path, frames: np.ndarray) -> None:
    """A stimulus store as the workflow writes it: ``frames`` (t, y, x) in chunks of 16 frames."""
    from psybench.io.store import ArraySpec, write_store
    from psybench.motion.display import Display

    n_t, height, width = frames.shape
    attrs = {"stage": "stimuli", "display": Display(width_px=width, height_px=height).to_attrs(), "stimulus": {}}
    write_store(path, {"frames": ArraySpec(frames, ("t", "y", "x"), chunks=(16, height, width))}, attrs)


def write_avi(path: Path, n_t: int, width: int, height: int, seed: int = 0) -> Path:
    """An MJPG movie file of a drifting colour texture at 10 frames/s (the attention track's input)."""
    import cv2

    grey = movie(n_t, max(width, height), seed)[:, :height, :width]
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (width, height))
    for t, g in enumerate(grey):
        rgb = np.stack([g, np.roll(g, 7 + t, axis=1), 1 - g], -1)
        vw.write(np.rint(rgb * 255).astype(np.uint8))
    vw.release()
    return path


def decoded(path: Path) -> np.ndarray:
    """Every frame of a movie file, RGB uint8 (t, H, W, 3), as psybench's attention stage decodes it."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    frames = []
    while (r := cap.read())[0]:
        frames.append(cv2.cvtColor(r[1], cv2.COLOR_BGR2RGB))
    cap.release()
    return np.stack(frames)


def gaze_table(n_t: int, width: int, height: int):
    """Fixations of a few observers on every frame, as the attention track's gaze table holds them."""
    import pandas as pd

    rng = np.random.default_rng(3)
    return pd.DataFrame([{"subject": f"s{s}", "movie": "clip", "frame": f, "t_ms": f * 100.0,
                          "x": rng.uniform(0, width), "y": rng.uniform(0, height), "valid": True}
                         for s in range(_GAZE_SUBJECTS) for f in range(n_t)])


def intphys_shard(root: Path, n_frames: int, size: int) -> tuple[Path, Path]:
    """One ingested dev shard of generated IntPhys movies (block O1, one quadruplet per condition)."""
    from psybench.intphys.generate import generate_intphys
    from psybench.intphys.ingest import ingest_shard, list_movies

    generate_intphys(root, "dev", n_frames=n_frames, height=size, width=size, seed=5, blocks=("O1",), threads=1)
    n = len(list_movies(root, "dev"))
    ingest_shard(root, "dev", root / "shard_0000.zarr", root / "shard_0000.csv", shard=0, shard_size=n, threads=1)
    return root / "shard_0000.zarr", root / "shard_0000.csv"


# ---------------------------------------------------------------- entries ---------------------------------------------


def raft_entry(weights: Path, batch: int, updates: int) -> dict:
    return {"name": "raft_small", "algorithm": "raft_small", "weights": str(weights), "batch_size": batch,
            "params": {"num_flow_updates": updates}}


def cnn_entry(weights: Path, batch: int, layers: list[str], resolution) -> dict:
    return {"name": "resnet", "algorithm": "cnn", "weights": str(weights), "batch_size": batch,
            "params": {"arch": "resnet18", "layers": list(layers), "resolution": resolution}}


def map_entry(weights: Path, batch: int) -> dict:
    return {"name": "saliency_net", "callable": "psybench_bench_user:build_map", "kind": "map", "factory": True,
            "weights": str(weights), "batch_size": batch, "params": {"output": "log_density"}}


#: ``--stream-encoder`` -> the factory of USER_MODULE.
STREAM_ENCODERS = {"resnet18": "resnet_encoder", "small": "encoder"}


def stream_entry(weights: Path, batch: int, window: int, stride: int, context: int, factory: str = "encoder") -> dict:
    return {"name": "surprise", "algorithm": "representation_surprise", "weights": str(weights), "batch_size": batch,
            "params": {"encoder": f"psybench_bench_user:{factory}", "window": window, "stride": stride,
                       "context": context}}


def write_user_module(folder: Path) -> None:
    (folder / "psybench_bench_user.py").write_text(USER_MODULE)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


# ---------------------------------------------------------------- psybench's stages (also run by the child) -----------


def motion_stage(spec, stim: Path, out: Path) -> Path:
    from psybench.motion.responses import run_motion_model

    return run_motion_model(spec, stim, out, threads=1, show_progress=False)


def cnn_stage(spec, stim: Path, out: Path, movie_file: Path) -> Path:
    from psybench.attention.responses import write_feature_store
    from psybench.handoff import describe_model

    return write_feature_store(stim, out, model=describe_model(spec), movie_file=movie_file, num_workers=1)


def map_stage(spec, stim: Path, out: Path, movie_file: Path, gaze):
    from psybench.attention.map_models import map_model_rows

    return map_model_rows(spec, "clip", ["clip"], stim, gaze, movie_file=movie_file, threads=1, out=out)


def stream_stage(spec, store: Path, table: Path, out: Path):
    from psybench.intphys.responses import predict_shards

    out.parent.mkdir(parents=True, exist_ok=True)
    return predict_shards(spec, [store], [table], [out], threads=1)[0]


def child(case: str, payload: str) -> None:
    """Run one psybench stage in this fresh process and print its peak RSS (JSON)."""
    a = json.loads(payload)
    if a.get("path"):
        sys.path.insert(0, a["path"])
    import torch  # noqa: F401 - imported before the baseline: every stage imports it anyway
    import torchvision  # noqa: F401

    from psybench._malloc import keep_freed_memory

    keep_freed_memory()

    from psybench.registry import resolve_model

    before = hwm_mb()
    track = {"motion": "motion", "cnn": "attention", "map": "attention", "stream": "intphys"}[case]
    spec = resolve_model(a["entry"], track=track)
    if case == "motion":
        motion_stage(spec, Path(a["stim"]), Path(a["out"]))
    elif case == "cnn":
        cnn_stage(spec, Path(a["stim"]), Path(a["out"]), Path(a["movie_file"]))
    elif case == "map":
        map_stage(spec, Path(a["stim"]), Path(a["out"]), Path(a["movie_file"]), gaze_table(*a["gaze"]))
    else:
        stream_stage(spec, Path(a["store"]), Path(a["table"]), Path(a["out"]))
    print(json.dumps({"before_mb": before, "peak_mb": hwm_mb()}))


def peak_rss(case: str, **payload) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", case, json.dumps(payload, default=str)],
                         capture_output=True, text=True, env={**os.environ})
    if out.returncode != 0:
        raise RuntimeError(f"benchmark child {case} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- measuring -------------------------------------------


def interleaved(runs: dict[str, Callable[[], object]], n: int, repeats: int) -> tuple[dict, dict]:
    """Best items/s over ``repeats`` rounds of every run in turn (wall clock, and per CPU second of the process)."""
    best = dict.fromkeys(runs, 0.0)
    best_cpu = dict.fromkeys(runs, 0.0)  # items per CPU second: less sensitive to other jobs on a shared machine
    for _ in range(repeats):  # interleaved: all see the same machine load
        for key, run in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            run()
            best[key] = max(best[key], n / (time.perf_counter() - t0))
            best_cpu[key] = max(best_cpu[key], n / (time.process_time() - c0))
    return best, best_cpu


def report(prefix: str, best: dict, best_cpu: dict) -> None:
    """FIGURE lines: each path's frames/s (wall and CPU) and its ratio to ``direct``."""
    for key in best:
        print(f"FIGURE {prefix}_{key}_frames_per_s {best[key]:.2f} frames/s")
    for key in best:
        if key != "direct":
            name = prefix if key == "psybench" else f"{prefix}_{key}"
            print(f"FIGURE {name}_ratio {best[key] / best['direct']:.3f} x")
    for key in best_cpu:
        print(f"FIGURE {prefix}_{key}_frames_per_cpu_s {best_cpu[key]:.2f} frames/s")
    for key in best_cpu:
        if key != "direct":
            name = prefix if key == "psybench" else f"{prefix}_{key}"
            print(f"FIGURE {name}_cpu_ratio {best_cpu[key] / best_cpu['direct']:.3f} x")
    if "direct_memory" in best_cpu:  # direct itself against the loop on batches in memory, its network built
        extra = 1 / best_cpu["direct"] - 1 / best_cpu["direct_memory"]
        print(f"FIGURE {prefix}_direct_reading_and_building_cpu_ms_per_frame {1000 * extra:.3f} ms")
        over = 1 / best_cpu["psybench"] - 1 / best_cpu["direct"]
        print(f"FIGURE {prefix}_psybench_overhead_cpu_ms_per_frame {1000 * over:.3f} ms")


def report_build(prefix: str, spec, repeats: int) -> None:
    """FIGURE: CPU seconds to build the model once (psybench.deep.built): a job's constant, best of ``repeats``."""
    from psybench.deep import built

    best = float("inf")
    for _ in range(repeats):
        c0 = time.process_time()
        with built(spec, threads=1):
            pass
        best = min(best, time.process_time() - c0)
    print(f"FIGURE {prefix}_build_cpu_s {best:.3f} s")


def report_memory(prefix: str, lengths, results: list[dict]) -> None:
    for n, res in zip(lengths, results):
        print(f"FIGURE {prefix}_peak_rss_{n}_frames_mb {res['peak_mb']:.0f} MB "
              f"(after imports: {res['before_mb']:.0f} MB)")
    print(f"FIGURE {prefix}_peak_rss_ratio {results[1]['peak_mb'] / results[0]['peak_mb']:.3f} x")


def attention_memory(case: str, prefix: str, args, tmp: Path, *, entry: dict, out: Callable[[int], Path],
                     gaze: bool = False, **payload) -> None:
    """Peak RSS of an attention stage in a fresh process, on a movie of each of ``--memory-frames-attention``."""
    from psybench.attention.stimuli import ingest_movie

    width, height = args.cnn_size
    results = []
    for n in args.memory_frames_attention:
        clip = write_avi(tmp / f"clip{n}.avi", n, width, height, seed=1)
        # the stimulus store is named after the movie file, as the workflow names it
        stim = ingest_movie(clip, tmp / f"clip{n}.zarr", grid=(40, 30))
        results.append(peak_rss(case, entry=entry, stim=stim, out=out(n), movie_file=clip,
                                **({"gaze": [n, width, height]} if gaze else {}), **payload))
    report_memory(prefix, args.memory_frames_attention, results)


# ---------------------------------------------------------------- cases -----------------------------------------------


def bench_motion(args, tmp: Path) -> None:
    import torch
    from torchvision.models import optical_flow

    from psybench.deep import built
    from psybench.io.store import open_store
    from psybench.motion.responses import batched_pair_blocks
    from psybench.registry import resolve_model

    torch.manual_seed(0)
    network = optical_flow.raft_small(weights=None, progress=False).eval()
    preset = optical_flow.Raft_Small_Weights.DEFAULT.transforms()
    frames = movie(args.frames, args.size)
    weights = tmp / "raft_small.pt"
    torch.save(network.state_dict(), weights)
    store = tmp / "movie.zarr"
    write_movie(store, frames)
    spec = resolve_model(raft_entry(weights, args.batch, args.updates))

    def through_psybench() -> Path:  # timed: the stage alone (its store is read back once, for the check)
        return motion_stage(spec, store, tmp / "responses.zarr")

    def stage() -> np.ndarray:
        with built(spec, threads=1) as (model, _):
            stored = open_store(store)["frames"]
            return np.concatenate([b["flow"] for b in batched_pair_blocks(model, stored, name="raft_small",
                                                                           batch_size=args.batch)])

    def direct_memory(net=network, given=frames) -> np.ndarray:
        out = [np.zeros(given.shape[1:] + (2,), np.float32)]
        with torch.inference_mode():
            for start in range(1, len(given), args.batch):
                stop = min(len(given), start + args.batch)
                img1 = torch.from_numpy(given[start - 1:stop - 1])[:, None].expand(-1, 3, -1, -1)
                img2 = torch.from_numpy(given[start:stop])[:, None].expand(-1, 3, -1, -1)
                flow = net(*preset(img1, img2), num_flow_updates=args.updates)[-1]
                out.extend(flow.permute(0, 2, 3, 1).numpy())
        return np.stack(out)

    def direct() -> np.ndarray:  # as a user writes it: the network built from the file, the frames read with zarr
        import zarr

        net = optical_flow.raft_small(weights=None, progress=False)
        net.load_state_dict(torch.load(weights, weights_only=True))
        return direct_memory(net.eval(), zarr.open_group(store, mode="r")["frames"][:])

    reference = direct_memory()  # also the warm-up
    same = np.array_equal(open_store(through_psybench())["flow"].compute(), reference)
    same = same and all(np.array_equal(f(), reference) for f in (stage, direct))
    best, best_cpu = interleaved({"psybench": through_psybench, "stage": stage, "direct_memory": direct_memory,
                                  "direct": direct},
                                 len(frames) - 1, args.repeats)
    print(f"raft_small, {args.size}x{args.size}, {len(frames) - 1} pairs in batches of {args.batch}, "
          f"{args.updates} updates, 1 thread, CPU, response store written, best of {args.repeats}; "
          f"same flow bit for bit: {same}")
    report("raft_small", best, best_cpu)
    results = []
    for n in args.memory_frames:
        path = tmp / f"movie{n}.zarr"
        write_movie(path, movie(n, args.size, seed=1))
        results.append(peak_rss("motion", entry=raft_entry(weights, args.batch, 2), stim=path,
                                out=tmp / f"responses{n}.zarr"))
    report_memory("raft_small", args.memory_frames, results)


def bench_cnn(args, tmp: Path) -> None:
    import torch
    import torchvision
    from torchvision.transforms.v2 import functional as TF

    from psybench.attention.deep_models import IMAGENET_MEAN, IMAGENET_STD, area_resize, rgb_batches
    from psybench.attention.stimuli import ingest_movie
    from psybench.deep import built
    from psybench.io.store import open_store
    from psybench.registry import resolve_model

    width, height = args.cnn_size
    layers = args.cnn_layers
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None).eval()
    weights = tmp / "resnet18.pt"
    torch.save(net.state_dict(), weights)
    avi = write_avi(tmp / "clip.avi", args.cnn_frames, width, height)
    stim = ingest_movie(avi, tmp / "clip.zarr", grid=(40, 30))
    spec = resolve_model(cnn_entry(weights, args.batch, layers, "native"), track="attention")
    rgb = decoded(avi)
    batches = [rgb[a:a + args.batch] for a in range(0, len(rgb), args.batch)]
    names = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"]
    trunk = torch.nn.Sequential(*[getattr(net, n) for n in names[:max(names.index(n) for n in layers) + 1]])

    def through_psybench() -> Path:  # timed: the stage alone (its store is read back once, for the check)
        return cnn_stage(spec, stim, tmp / "cnn.zarr", avi)

    def model() -> list[np.ndarray]:
        with built(spec, threads=1) as (cnn, _):
            return [cnn(b) for b in rgb_batches(stim, movie_file=avi, batch_size=args.batch)]

    def direct_memory(given=None, cut=trunk) -> list[dict]:
        out = []
        with torch.inference_mode():
            for b in batches if given is None else given:
                x = TF.normalize(torch.from_numpy(b).permute(0, 3, 1, 2).float() / 255, IMAGENET_MEAN, IMAGENET_STD)
                feats = {}
                for name, module in zip(names, cut):
                    x = module(x)
                    if name in layers:
                        feats[name] = x.numpy()
                out.append(feats)
        return out

    def direct() -> list[dict]:  # as a user writes it: the network built from the file, the movie decoded
        r = torchvision.models.resnet18(weights=None)
        r.load_state_dict(torch.load(weights, weights_only=True))
        cut = torch.nn.Sequential(*[getattr(r.eval(), n) for n in names[:len(trunk)]])
        frames = decoded(avi)
        return direct_memory([frames[a:a + args.batch] for a in range(0, len(frames), args.batch)], cut)

    reference = direct_memory()
    got = model()
    close = all(np.allclose(m[..., :f[layers[0]].shape[1]],
                            area_resize(f[layers[0]].transpose(0, 2, 3, 1), m.shape[1:3]), rtol=1e-4, atol=1e-4)
                for m, f in zip(got, reference))
    pooled = np.asarray(open_store(through_psybench())["maps"])
    same_grid = np.allclose(pooled, area_resize(np.concatenate(got), pooled.shape[1:3]), rtol=1e-5, atol=1e-5)
    close = close and all(np.array_equal(a[k], b[k]) for a, b in zip(direct(), reference) for k in layers)
    best, best_cpu = interleaved({"psybench": through_psybench, "model": model, "direct_memory": direct_memory,
                                  "direct": direct},
                                 len(rgb), args.repeats)
    print(f"cnn resnet18 {layers}, {width}x{height} native, {len(rgb)} frames in batches of {args.batch}, 1 thread, "
          f"CPU, feature store written, best of {args.repeats}; same features as direct: {close}; "
          f"store = the model's maps pooled to the grid: {same_grid}")
    report("cnn_resnet18", best, best_cpu)
    report_build("cnn_resnet18", spec, args.repeats)
    attention_memory("cnn", "cnn_resnet18", args, tmp, entry=cnn_entry(weights, args.batch, layers, "native"),
                     out=lambda n: tmp / f"cnn{n}.zarr")


def bench_map(args, tmp: Path) -> None:
    import torch

    from psybench.attention.deep_models import rgb_batches
    from psybench.attention.map_models import maps_to_grid
    from psybench.attention.stimuli import ingest_movie
    from psybench.deep import built
    from psybench.registry import resolve_model

    write_user_module(tmp)
    import psybench_bench_user as user

    width, height = args.cnn_size
    net = user.saliency_net()
    weights = tmp / "saliency_net.pt"
    torch.save(net.state_dict(), weights)
    avi = write_avi(tmp / "clip.avi", args.cnn_frames, width, height)
    stim = ingest_movie(avi, tmp / "clip.zarr", grid=(40, 30))
    spec = resolve_model(map_entry(weights, args.batch), track="attention")
    gaze = gaze_table(args.cnn_frames, width, height)
    rgb = decoded(avi)
    batches = [rgb[a:a + args.batch] for a in range(0, len(rgb), args.batch)]

    def through_psybench():
        return map_stage(spec, stim, tmp / "map_rows.csv", avi, gaze)

    def maps() -> np.ndarray:
        with built(spec, threads=1) as (predict, _):
            return np.concatenate([maps_to_grid(predict(b), (30, 40), output="log_density")
                                   for b in rgb_batches(stim, movie_file=avi, batch_size=args.batch)])

    def direct_memory() -> list[np.ndarray]:
        with torch.inference_mode():
            return [net(user.preprocess(b)).numpy() for b in batches]

    def direct() -> list[np.ndarray]:  # as a user writes it: the network built from the file, the movie decoded
        own = user.SaliencyNet()
        own.load_state_dict(torch.load(weights, weights_only=True))
        own.eval()
        frames = decoded(avi)
        with torch.inference_mode():
            return [own(user.preprocess(frames[a:a + args.batch])).numpy() for a in range(0, len(frames), args.batch)]

    reference = direct_memory()
    same = np.array_equal(maps(), np.concatenate([maps_to_grid(r, (30, 40), output="log_density")
                                                  for r in reference]))
    same = same and all(np.array_equal(a, b) for a, b in zip(direct(), reference))
    best, best_cpu = interleaved({"psybench": through_psybench, "maps": maps, "direct_memory": direct_memory,
                                  "direct": direct},
                                 len(rgb), args.repeats)
    print(f"map model (ResNet-18 layer2 + readout, log-density), {width}x{height}, {len(rgb)} frames in batches of "
          f"{args.batch}, {_GAZE_SUBJECTS} observers, 1 thread, CPU, rows written, best of {args.repeats}; "
          f"same maps as direct: {same}")
    report("map_net", best, best_cpu)
    report_build("map_net", spec, args.repeats)
    attention_memory("map", "map_net", args, tmp, entry=map_entry(weights, args.batch),
                     out=lambda n: tmp / f"map{n}.csv", gaze=True, path=tmp)


def bench_stream(args, tmp: Path) -> None:
    import torch
    import zarr

    from psybench.registry import resolve_model

    write_user_module(tmp)
    import psybench_bench_user as user

    window, stride, context = 16, 2, 8
    factory = STREAM_ENCODERS[args.stream_encoder]
    weights = tmp / f"{factory}.pt"
    torch.save(getattr(user, factory)().state_dict(), weights)
    store, table = intphys_shard(tmp / "intphys", args.stream_frames, args.stream_size)
    entry = stream_entry(weights, args.batch, window, stride, context, factory)
    spec = resolve_model(entry, track="intphys")

    def load_encoder() -> torch.nn.Module:  # as a user loads a checkpoint
        encoder = getattr(user, factory)()
        encoder.load_state_dict(torch.load(weights, weights_only=True))
        return encoder.eval()

    def surprise(encoder, frames: np.ndarray) -> float:  # one movie: batches, LayerNorm, windows, max
        with torch.inference_mode():
            z = torch.cat([encoder(torch.from_numpy(frames[a:a + args.batch]).permute(0, 3, 1, 2).float() / 255)
                           for a in range(0, len(frames), args.batch)])
            z = torch.nn.functional.layer_norm(z, z.shape[-1:], eps=1e-5)
            win = z.unfold(0, window, stride)  # (n windows, D, window)
            err = (win[..., context:] - win[..., context - 1:context]).abs()
            return float(err.to(torch.float64).mean((1, 2)).max())

    def through_psybench():
        return stream_stage(spec, store, table, tmp / "predictions" / "shard_0000.csv")

    def direct() -> np.ndarray:  # what a user writes without psybench: each movie read from the shard in turn
        encoder = load_encoder()
        scene = zarr.open_group(str(store), mode="r")["scene"]
        return np.array([surprise(encoder, scene[i]) for i in range(scene.shape[0])])

    in_memory = zarr.open_group(str(store), mode="r")["scene"][...]  # every movie's frames, read beforehand
    memory_encoder = load_encoder()

    def direct_memory() -> np.ndarray:
        return np.array([surprise(memory_encoder, frames) for frames in in_memory])

    reference = direct()
    got = -np.log(through_psybench()["p"].to_numpy())
    close = (np.allclose(got, reference, rtol=1e-5, atol=1e-7)
             and np.allclose(direct_memory(), reference, rtol=1e-5, atol=1e-7))
    n_frames = in_memory.shape[0] * in_memory.shape[1]
    best, best_cpu = interleaved({"psybench": through_psybench, "direct": direct, "direct_memory": direct_memory},
                                 n_frames, args.repeats)
    prefix = f"stream_surprise_{args.stream_encoder}"
    print(f"representation_surprise, {args.stream_encoder} encoder, {in_memory.shape[0]} movies of "
          f"{in_memory.shape[1]} frames {in_memory.shape[2]}x{in_memory.shape[3]}, batches of {args.batch}, "
          f"window {window}/{stride}/{context}, 1 thread, CPU, predictions written, best of {args.repeats}; "
          f"same surprise as direct (psybench and direct_memory): {close}")
    report(prefix, best, best_cpu)
    print(f"FIGURE {prefix}_encoder_and_windows_cpu_ms_per_frame {1e3 / best_cpu['direct_memory']:.3f} ms "
          "(direct_memory)")
    report_build(prefix, spec, args.repeats)
    results = []
    for n in args.memory_frames_stream:
        s, t = intphys_shard(tmp / f"intphys{n}", n, args.stream_size)
        results.append(peak_rss("stream", entry=stream_entry(weights, args.batch, window, stride, context, factory),
                                store=s, table=t, out=tmp / f"predictions{n}" / "shard_0000.csv", path=tmp))
    report_memory(prefix, args.memory_frames_stream, results)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8, help="frames (pairs) per call, every case")
    ap.add_argument("--size", type=int, default=128, help="motion: frame side, px")
    ap.add_argument("--frames", type=int, default=33, help="motion: frames of the timed movie (frames - 1 pairs)")
    ap.add_argument("--updates", type=int, default=12, help="motion: RAFT's num_flow_updates")
    ap.add_argument("--memory-frames", type=int, nargs=2, default=(17, 65), help="motion: movie lengths for RSS")
    ap.add_argument("--cnn-size", type=int, nargs=2, default=(640, 360),
                    help="cnn, map: movie width height, px (many of DIEM's movies: 1280 x 720)")
    ap.add_argument("--cnn-frames", type=int, default=48, help="cnn, map: frames of the timed movie")
    ap.add_argument("--cnn-layers", nargs="+", default=["layer1", "layer2"], help="cnn: ResNet-18 layers")
    ap.add_argument("--memory-frames-attention", type=int, nargs=2, default=(24, 96), help="cnn, map: lengths for RSS")
    ap.add_argument("--stream-size", type=int, default=96, help="stream: IntPhys frame side, px (IntPhys: 288)")
    ap.add_argument("--stream-frames", type=int, default=32, help="stream: frames per movie")
    ap.add_argument("--memory-frames-stream", type=int, nargs=2, default=(16, 64), help="stream: lengths for RSS")
    ap.add_argument("--stream-encoder", choices=sorted(STREAM_ENCODERS), default="resnet18", help="stream: encoder")
    args = ap.parse_args()

    import torch

    from psybench._malloc import keep_freed_memory

    keep_freed_memory()  # as the motion and attention jobs' scripts do (for both paths: one process)
    torch.set_num_threads(1)  # psybench's job runs its model on the job's threads: 1 here
    for case in args.cases:
        with tempfile.TemporaryDirectory() as tmp:
            {"motion": bench_motion, "cnn": bench_cnn, "map": bench_map, "stream": bench_stream}[case](args, Path(tmp))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
