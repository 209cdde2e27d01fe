"""Benchmark: attention feature computation streams over time (flat memory) and its speed.

Prints
* peak resident memory (VmHWM of a fresh child process, Linux) of computing the
  extended Itti features of a rendered pop-out movie and streaming them to a store,
  for 1x and 4x the movie length, next to the in-memory reference (the whole
  feature array materialised) at 4x;
* frames/s of the extended Itti model and of raw-patch features on the same frames,
  in the same run, and their ratio.

Usage: python benchmarks/attention_features.py [--frames 1500] [--chunk 64]
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

CHILD = r"""
import json, os, sys
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np
from psybench.attention.responses import feature_maps, write_feature_store
from psybench.io.store import open_store
mode, stim, out, chunk = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def hwm_mb():  # VmHWM: peak RSS of this process image (ru_maxrss would include the parent's, kept across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
base = hwm_mb()
if mode == "stream":
    write_feature_store(stim, out, model="itti", chunk_frames=chunk, num_workers=2)
else:  # reference: materialise the whole feature array in memory
    frames = open_store(stim)["frames"]
    arr = np.asarray(feature_maps(frames, model="itti", chunk_frames=chunk).compute(scheduler="threads", num_workers=2))
print(json.dumps({"peak_mb": hwm_mb(), "import_mb": base}))
"""


def _child(mode, stim, out, chunk):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    run = subprocess.run([sys.executable, "-c", CHILD, mode, str(stim), str(out), str(chunk)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=1500, help="1x movie length in frames (30 frames/s)")
    ap.add_argument("--chunk", type=int, default=64)
    args = ap.parse_args(argv)

    from psybench.attention.responses import feature_maps
    from psybench.attention.stimuli import render_popout, write_popout_store

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        res = {}
        for k in (1, 4):
            stim = write_popout_store(tmp / f"stim{k}.zarr", n_frames=k * args.frames, seed=0)
            res[k] = _child("stream", stim, tmp / f"feat{k}.zarr", args.chunk)
        ref = _child("memory", tmp / "stim4.zarr", tmp / "unused.zarr", args.chunk)
        print(f"peak RSS, extended Itti streamed to a store (40x30 grid, chunk {args.chunk} frames):")
        for k in (1, 4):
            print(
                f"  {k}x = {k * args.frames:6d} frames: {res[k]['peak_mb']:7.1f} MB "
                f"(after imports {res[k]['import_mb']:.1f} MB)"
            )
        print(f"  ratio 4x / 1x: {res[4]['peak_mb'] / res[1]['peak_mb']:.3f}")
        out_mb = 4 * args.frames * 30 * 40 * 3 * 4 / 2**20
        print(f"  reference, 4x materialised in memory: {ref['peak_mb']:7.1f} MB (feature array alone {out_mb:.1f} MB)")

        frames = render_popout(n_frames=min(args.frames, 600), seed=1).frames
        speed = {}
        for kind in ("raw", "itti"):
            feature_maps(frames[:32], model=kind).compute(scheduler="synchronous")  # warm-up
            t0 = time.perf_counter()
            feature_maps(frames, model=kind, chunk_frames=args.chunk).compute(scheduler="synchronous")
            speed[kind] = len(frames) / (time.perf_counter() - t0)
        print(f"frames/s on {len(frames)} frames, one thread: extended Itti {speed['itti']:.0f}, raw patches "
              f"{speed['raw']:.0f}; Itti is {speed['raw'] / speed['itti']:.0f}x slower than raw")


if __name__ == "__main__":
    main()
