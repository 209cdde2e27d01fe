"""Deep models through psybench against the same network called directly: speed and memory.

Motion (RAFT-small, Teed & Deng 2020, random weights: nothing is downloaded):

* frames/s (frame pairs per second) of ``raft_small`` through psybench's batched pair stage
  (:func:`psybench.motion.responses.batched_pair_blocks`, the frames read from a Zarr store in
  batches, converted, padded, the flow cropped and checked) against torchvision's RAFT called
  directly on the same batches already in memory (torchvision's ``OpticalFlow`` preset), in the
  same run, interleaved, best of ``--repeats``; the ratio is the figure (target >= 0.95);
* peak RSS (``VmHWM``) of a fresh process running the psybench path over movies of two lengths
  (the batches are read one at a time, so the peak should be flat).

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
import numpy as np, torch, zarr
from psybench.motion.models.raft import raft_small
from psybench.motion.responses import batched_pair_blocks

def hwm_mb():  # VmHWM: peak resident set of this process (reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return -1.0

path, batch, updates = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(1)
torch.manual_seed(0)
frames = zarr.open_array(path, mode="r")
model = raft_small(weights=None, device=torch.device("cpu"), num_flow_updates=updates)
before = hwm_mb()
total = 0.0
with torch.inference_mode():
    for block in batched_pair_blocks(model, frames, name="raft_small", batch_size=batch):
        total += float(np.abs(block["flow"]).sum())
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
    import zarr

    arr = zarr.open_array(path, mode="w", shape=frames.shape, chunks=(16,) + frames.shape[1:], dtype="float32")
    arr[:] = frames


def peak_rss(path: Path, batch: int, updates: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(batch), str(updates)],
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
    import zarr
    from torchvision.models import optical_flow

    from psybench.motion.models.raft import raft_small
    from psybench.motion.responses import batched_pair_blocks

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = raft_small(weights=None, device=torch.device("cpu"), num_flow_updates=args.updates)
    preset = optical_flow.Raft_Small_Weights.DEFAULT.transforms()
    frames = movie(args.frames, args.size)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "movie.zarr"
        write_movie(store, frames)
        stored = zarr.open_array(store, mode="r")

        def through_psybench() -> np.ndarray:
            return np.concatenate([b["flow"] for b in batched_pair_blocks(model, stored, name="raft_small",
                                                                           batch_size=args.batch)])

        def direct() -> np.ndarray:
            out = [np.zeros(frames.shape[1:] + (2,), np.float32)]
            for start in range(1, len(frames), args.batch):
                stop = min(len(frames), start + args.batch)
                img1 = torch.from_numpy(frames[start - 1:stop - 1])[:, None].expand(-1, 3, -1, -1)
                img2 = torch.from_numpy(frames[start:stop])[:, None].expand(-1, 3, -1, -1)
                flow = model.network(*preset(img1, img2), num_flow_updates=args.updates)[-1]
                out.extend(flow.permute(0, 2, 3, 1).numpy())
            return np.stack(out)

        best = {"psybench": 0.0, "direct": 0.0}
        with torch.inference_mode():
            same = np.array_equal(through_psybench(), direct())  # also the warm-up
            for _ in range(args.repeats):  # interleaved: both see the same machine load
                for key, run in (("psybench", through_psybench), ("direct", direct)):
                    t0 = time.perf_counter()
                    run()
                    best[key] = max(best[key], (len(frames) - 1) / (time.perf_counter() - t0))
        print(f"raft_small, {args.size}x{args.size}, {len(frames) - 1} pairs in batches of {args.batch}, "
              f"{args.updates} updates, 1 thread, CPU, best of {args.repeats}; same flow bit for bit: {same}")
        print(f"FIGURE raft_small_psybench_frames_per_s {best['psybench']:.2f} frames/s")
        print(f"FIGURE raft_small_direct_frames_per_s {best['direct']:.2f} frames/s")
        print(f"FIGURE raft_small_ratio {best['psybench'] / best['direct']:.3f} x")

        peaks = []
        for n in args.memory_frames:
            path = Path(tmp) / f"movie{n}.zarr"
            write_movie(path, movie(n, args.size, seed=1))
            res = peak_rss(path, args.batch, 2)
            peaks.append(res["peak_mb"])
            print(f"FIGURE raft_small_peak_rss_{n}_frames_mb {res['peak_mb']:.0f} MB "
                  f"(after imports and build: {res['before_mb']:.0f} MB)")
        print(f"FIGURE raft_small_peak_rss_ratio {peaks[1] / peaks[0]:.3f} x")


if __name__ == "__main__":
    main()
