"""Deep models through psybench against the same network called directly: speed and memory.

Motion (RAFT-small, Teed & Deng 2020, random weights: nothing is downloaded):

* frames/s (frame pairs per second) of ``raft_small`` through psybench's response stage
  (:func:`psybench.motion.responses.run_motion_model`: the model resolved from its entry with a
  local weights file, built once, the frames read from a stimulus store in batches, converted,
  padded, the flow cropped, checked and written to the response store) against torchvision's
  RAFT with the same weights called directly on the same batches already in memory
  (torchvision's ``OpticalFlow`` preset), in the same run, interleaved, best of ``--repeats``;
  the ratio is the figure (target >= 0.95); also the stage alone
  (:func:`psybench.motion.responses.batched_pair_blocks` over the stored frames, the model built
  by :func:`psybench.deep.built`), without the response store's writing and checks;
* peak RSS (``VmHWM``) of a fresh process running the response stage over movies of two
  lengths (the batches are read one at a time, so the peak should be flat).

Run: ``.venv/bin/python benchmarks/deep_models.py [--size 128] [--frames 33] [--batch 8]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_CHILD = r"""
import json, sys
from psybench.motion.responses import run_motion_model
from psybench.registry import resolve_model

def hwm_mb():  # VmHWM: peak resident set of this process (reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return -1.0

stim, out, weights, batch, updates = sys.argv[1:4] + [int(a) for a in sys.argv[4:6]]
spec = resolve_model({"name": "raft_small", "algorithm": "raft_small", "weights": weights, "batch_size": batch,
                      "params": {"num_flow_updates": updates}})
import torch  # imported before the baseline: the stage imports it anyway
before = hwm_mb()
run_motion_model(spec, stim, out, threads=1, show_progress=False)
print(json.dumps({"before_mb": before, "peak_mb": hwm_mb()}))
"""


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


def peak_rss(stim: Path, out: Path, weights: Path, batch: int, updates: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(stim), str(out), str(weights), str(batch), str(updates)],
                         capture_output=True, text=True, check=True, env={**os.environ})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=128, help="frame side, px")
    ap.add_argument("--frames", type=int, default=33, help="frames of the timed movie (frames - 1 pairs)")
    ap.add_argument("--batch", type=int, default=8, help="pairs per call")
    ap.add_argument("--updates", type=int, default=12, help="RAFT's num_flow_updates")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--memory-frames", type=int, nargs=2, default=(17, 65))
    args = ap.parse_args()

    import torch
    from torchvision.models import optical_flow

    from psybench.deep import built
    from psybench.io.store import open_store
    from psybench.motion.responses import batched_pair_blocks, run_motion_model
    from psybench.registry import resolve_model

    torch.set_num_threads(1)  # psybench's job runs its model on the job's threads: 1 here
    torch.manual_seed(0)
    network = optical_flow.raft_small(weights=None, progress=False).eval()
    preset = optical_flow.Raft_Small_Weights.DEFAULT.transforms()
    frames = movie(args.frames, args.size)
    with tempfile.TemporaryDirectory() as tmp:
        weights = Path(tmp) / "raft_small.pt"
        torch.save(network.state_dict(), weights)
        store = Path(tmp) / "movie.zarr"
        write_movie(store, frames)
        spec = resolve_model({"name": "raft_small", "algorithm": "raft_small", "weights": str(weights),
                              "batch_size": args.batch, "params": {"num_flow_updates": args.updates}})

        def through_psybench() -> np.ndarray:
            out = run_motion_model(spec, store, Path(tmp) / "responses.zarr", threads=1, show_progress=False)
            return open_store(out)["flow"].compute()

        def stage() -> np.ndarray:
            with built(spec, threads=1) as (model, _):
                stored = open_store(store)["frames"]
                return np.concatenate([b["flow"] for b in batched_pair_blocks(model, stored, name="raft_small",
                                                                               batch_size=args.batch)])

        def direct() -> np.ndarray:
            out = [np.zeros(frames.shape[1:] + (2,), np.float32)]
            for start in range(1, len(frames), args.batch):
                stop = min(len(frames), start + args.batch)
                img1 = torch.from_numpy(frames[start - 1:stop - 1])[:, None].expand(-1, 3, -1, -1)
                img2 = torch.from_numpy(frames[start:stop])[:, None].expand(-1, 3, -1, -1)
                flow = network(*preset(img1, img2), num_flow_updates=args.updates)[-1]
                out.extend(flow.permute(0, 2, 3, 1).numpy())
            return np.stack(out)

        def direct_inference() -> np.ndarray:
            with torch.inference_mode():
                return direct()

        reference = direct_inference()  # also the warm-up
        same = np.array_equal(through_psybench(), reference) and np.array_equal(stage(), reference)
        best = {"psybench": 0.0, "stage": 0.0, "direct": 0.0}
        best_cpu = dict(best)  # frames per CPU second: less sensitive to other jobs on a shared machine
        for _ in range(args.repeats):  # interleaved: all see the same machine load
            for key, run in (("psybench", through_psybench), ("stage", stage), ("direct", direct_inference)):
                t0, c0 = time.perf_counter(), time.process_time()
                run()
                best[key] = max(best[key], (len(frames) - 1) / (time.perf_counter() - t0))
                best_cpu[key] = max(best_cpu[key], (len(frames) - 1) / (time.process_time() - c0))
        print(f"raft_small, {args.size}x{args.size}, {len(frames) - 1} pairs in batches of {args.batch}, "
              f"{args.updates} updates, 1 thread, CPU, response store written, best of {args.repeats}; "
              f"same flow bit for bit: {same}")
        print(f"FIGURE raft_small_psybench_frames_per_s {best['psybench']:.2f} frames/s")
        print(f"FIGURE raft_small_direct_frames_per_s {best['direct']:.2f} frames/s")
        print(f"FIGURE raft_small_ratio {best['psybench'] / best['direct']:.3f} x")
        print(f"FIGURE raft_small_stage_frames_per_s {best['stage']:.2f} frames/s")
        print(f"FIGURE raft_small_stage_ratio {best['stage'] / best['direct']:.3f} x")
        for key in best_cpu:
            print(f"FIGURE raft_small_{key}_frames_per_cpu_s {best_cpu[key]:.2f} frames/s")
        print(f"FIGURE raft_small_cpu_ratio {best_cpu['psybench'] / best_cpu['direct']:.3f} x")
        print(f"FIGURE raft_small_stage_cpu_ratio {best_cpu['stage'] / best_cpu['direct']:.3f} x")

        peaks = []
        for n in args.memory_frames:
            path = Path(tmp) / f"movie{n}.zarr"
            write_movie(path, movie(n, args.size, seed=1))
            res = peak_rss(path, Path(tmp) / f"responses{n}.zarr", weights, args.batch, 2)
            peaks.append(res["peak_mb"])
            print(f"FIGURE raft_small_peak_rss_{n}_frames_mb {res['peak_mb']:.0f} MB "
                  f"(after imports: {res['before_mb']:.0f} MB)")
        print(f"FIGURE raft_small_peak_rss_ratio {peaks[1] / peaks[0]:.3f} x")


if __name__ == "__main__":
    main()
