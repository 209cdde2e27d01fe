"""IntPhys ingestion benchmark: throughput vs plain cv2.imread, peak memory of ingest and training.

Usage: python benchmarks/intphys_ingest.py [--threads 2] [--movies 100 1000] [--size 64] [--frames 20]

1. Frames/s of :func:`ingest_shard` (decode + RGB + depth scaling + Zarr write with
   checksums) against plain ``cv2.imread`` of the same PNGs (same flags) in a
   thread pool of the same size, measured in this run; target ratio >= 0.8.
2. Peak traced memory (tracemalloc: Python objects and NumPy buffers) and
   peak RSS (includes the interpreter and libraries), each in a fresh
   subprocess, of ingesting N movies into ONE store and of training the
   next-frame predictor on it, for each N: it must not grow with N.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time, tracemalloc
import cv2, numpy as np
from psybench.intphys.ingest import ingest_shard
from psybench.intphys.models import train_nextframe_stores
root, split, out, threads, n, what = sys.argv[1:7]
tracemalloc.start()  # numpy buffers (frames, chunks, statistics) are traced
t = time.perf_counter()
if what == "ingest":
    ingest_shard(root, split, out + ".zarr", out + ".csv", shard=0, shard_size=int(n), threads=int(threads))
else:
    train_nextframe_stores([out + ".zarr"], out + ".npz", threads=int(threads))
dt = time.perf_counter() - t
traced = tracemalloc.get_traced_memory()[1]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"traced_mb": traced / 2**20, "rss_mb": rss / 1024, "seconds": dt}))
"""


def _child(*args):
    r = subprocess.run([sys.executable, "-c", _CHILD, *map(str, args)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--movies", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import cv2

    from psybench.intphys.generate import generate_intphys
    from psybench.intphys.ingest import ingest_shard, list_movies

    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory(prefix="intphys_bench_") as tmp:
        tmp = Path(tmp)
        n_max = max(args.movies)
        t = time.perf_counter()
        generate_intphys(tmp / "data", "train", n_train=n_max, height=args.size, width=args.size,
                         n_frames=args.frames, threads=args.threads)
        print(f"generated {n_max} movies of {args.frames} x {args.size}x{args.size} px in "
              f"{time.perf_counter() - t:.1f} s")

        # --- 1. throughput on the first n_tp movies
        n_tp = min(args.movies)
        movies = list_movies(tmp / "data", "train")[:n_tp]
        files = [(m.path / k / f"{k}_{i:03d}.png", cv2.IMREAD_COLOR if k == "scene" else cv2.IMREAD_UNCHANGED)
                 for m in movies for i in range(1, args.frames + 1) for k in ("scene", "depth", "masks")]
        n_frames = len(files)

        def read(job):
            return cv2.imread(str(job[0]), job[1]).shape

        best_ref, best_ing = float("inf"), float("inf")
        for rep in range(args.repeats):
            t = time.perf_counter()
            with ThreadPoolExecutor(args.threads) as ex:
                list(ex.map(read, files))
            best_ref = min(best_ref, time.perf_counter() - t)
            t = time.perf_counter()
            ingest_shard(tmp / "data", "train", tmp / f"tp{rep}.zarr", tmp / f"tp{rep}.csv", shard=0,
                         shard_size=n_tp, threads=args.threads)
            best_ing = min(best_ing, time.perf_counter() - t)
        ref_fps, ing_fps = n_frames / best_ref, n_frames / best_ing
        print(f"throughput ({n_tp} movies, {n_frames} PNGs, {args.threads} threads, best of {args.repeats}):")
        print(f"  plain cv2.imread : {ref_fps:10.0f} frames/s")
        print(f"  ingest_shard     : {ing_fps:10.0f} frames/s")
        print(f"  ratio            : {ing_fps / ref_fps:10.2f}   (target >= 0.8)")

        # --- 2. peak memory in fresh subprocesses
        print("peak memory (fresh subprocess each; traced = tracemalloc peak, rss = ru_maxrss):")
        for n in sorted(args.movies):
            out = tmp / f"mem{n}"
            ing = _child(tmp / "data", "train", out, args.threads, n, "ingest")
            tr = _child(tmp / "data", "train", out, args.threads, n, "train")
            data_mb = n * args.frames * args.size * args.size * (3 + 4 + 1) / 2**20
            print(f"  {n:5d} movies ({data_mb:6.1f} MB decoded): ingest traced {ing['traced_mb']:6.1f} MB, "
                  f"rss {ing['rss_mb']:6.1f} MB ({ing['seconds']:.1f} s); train traced {tr['traced_mb']:6.1f} MB, "
                  f"rss {tr['rss_mb']:6.1f} MB ({tr['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
