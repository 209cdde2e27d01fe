"""IntPhys ingestion at the real size: throughput vs plain cv2.imread, peak RSS in fresh processes, 15k estimate.

Usage: python benchmarks/intphys_ingest.py [--movies 10 50 200] [--size 288] [--frames 100]
       [--threads 2] [--shard-size 50] [--unique 4] [--nodes 1 4 16] [--cores-per-node 32]

1. Throughput: frames/s of :func:`~psybench.intphys.ingest.ingest_shard` (decode,
   RGB, depth scaling, Zarr v3 sharded write with checksums) against plain
   ``cv2.imread`` of the same PNGs (same flags, same number of threads), both in
   this run, on the first shard, as the median of ``--repeats`` interleaved pairs
   (the machine may be shared: the load average is printed, and the CPU-time ratio,
   which bounds the wall-time one when every core is busy); target ratio >= 0.8.
   Then one more ingest with its CPU seconds per kind of thread (decoders, the
   writers that compress, hash and write the shards, the main thread, zarr's),
   next to the CPU seconds of plain decoding: where the time goes.
2. Peak RSS of a fresh child process (``VmHWM`` of the child itself, read in it
   from ``/proc/self/status``; ``ru_maxrss`` would report the parent's peak, which
   it inherits at fork and keeps across exec) that ingests every shard of a split of N movies, one
   shard after the other as the workflow's jobs do, and of one that trains the
   next-frame predictor streaming over those stores; for each N. Target: within
   10 % from 50 to 200 movies.
3. Extrapolation of the 15k-movie training set on N SLURM nodes from the measured
   time per shard: ceil(shards / (nodes x jobs per node)) x time per shard, jobs
   per node = cores per node // threads per job.

Frames are generated scenes at the real IntPhys size (288 x 288 px, 100 frames,
scene + 16-bit depth + masks). Rendering is slow, so ``--unique`` movies are
rendered and the others are hard links to their PNGs (identical bytes: decoding
costs the same; the page cache serves both the reference and ingest alike).
The 15k-movie dry run is ``benchmarks/intphys_dryrun.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_CHILD = r"""
import json, sys, time
from psybench.intphys.ingest import ingest_shard, list_movies, n_shards
from psybench.intphys.models import train_nextframe_stores
root, split, out, threads, shard_size, what = sys.argv[1:7]
n = n_shards(len(list_movies(root, split)), int(shard_size))
stores = [f"{out}_{k:04d}.zarr" for k in range(n)]
t = time.perf_counter()
if what == "ingest":
    for k, s in enumerate(stores):
        ingest_shard(root, split, s, s[:-5] + ".csv", shard=k, shard_size=int(shard_size), threads=int(threads))
else:
    train_nextframe_stores(stores, out + ".npz", threads=int(threads))
dt = time.perf_counter() - t
# VmHWM: this process's own peak RSS (reset at exec; ru_maxrss is not: it keeps the parent's peak at fork)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"rss_mb": hwm / 1024, "seconds": dt, "shards": n}))
"""


def _child(*args) -> dict:
    r = subprocess.run([sys.executable, "-c", _CHILD, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _replicate(train: Path, n: int, unique: int) -> None:
    """Hard-link movie directories 1..unique to unique+1..n (same PNG bytes, new ids)."""
    for i in range(unique + 1, n + 1):
        src, dst = train / f"{(i - 1) % unique + 1:05d}", train / f"{i:05d}"
        if dst.exists():
            continue
        for d, _, files in os.walk(src):
            rel = Path(d).relative_to(src)
            (dst / rel).mkdir(parents=True, exist_ok=True)
            for f in files:
                os.link(Path(d) / f, dst / rel / f)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--movies", type=int, nargs="+", default=[10, 50, 200])
    ap.add_argument("--size", type=int, default=288)
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shard-size", type=int, default=50)
    ap.add_argument("--unique", type=int, default=4, help="movies rendered; the rest are hard links")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--nodes", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--cores-per-node", type=int, default=32)
    ap.add_argument("--n-train", type=int, default=15000, help="movies of the extrapolated training set")
    args = ap.parse_args(argv)

    import cv2

    from psybench.intphys.generate import generate_intphys
    from psybench.intphys.ingest import frame_layout, ingest_shard, list_movies

    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory(prefix="intphys_bench_") as tmp:
        tmp = Path(tmp)
        n_max = max(args.movies)
        unique = min(args.unique, n_max)
        t = time.perf_counter()
        generate_intphys(tmp / "data", "train", n_train=unique, height=args.size, width=args.size,
                         n_frames=args.frames, depth_encoding="16bit", status_variant="header",
                         threads=args.threads)
        print(f"rendered {unique} movies of {args.frames} x {args.size}x{args.size} px in "
              f"{time.perf_counter() - t:.1f} s; {n_max - unique} more are hard links")

        # --- 1. throughput on the first shard, reference and ingest in this same run
        n_tp = min(args.shard_size, min(args.movies))
        split_root = tmp / "tp"
        _replicate_into(tmp / "data" / "train", split_root / "train", n_tp, unique)
        movies = list_movies(split_root, "train")
        layout = frame_layout(movies[0].path)[0]
        files = [(layout.path(m.path, k, i), cv2.IMREAD_COLOR if k == "scene" else cv2.IMREAD_UNCHANGED)
                 for m in movies for i in range(args.frames) for k in ("scene", "depth", "masks")]

        def read(job):
            return cv2.imread(str(job[0]), job[1]).shape

        # interleaved repeats, each pair in the same minute; the machine is shared, so the median of the
        # per-repeat ratios is reported, with the load average and the CPU-time ratio (all threads of this
        # process: what each side costs, whatever the load)
        walls, cpus, ing_times = [], [], []
        load0 = os.getloadavg()[0]
        for rep in range(args.repeats):
            t, c = time.perf_counter(), time.process_time()
            with ThreadPoolExecutor(args.threads) as ex:
                list(ex.map(read, files))
            ref_wall, ref_cpu = time.perf_counter() - t, time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            ingest_shard(split_root, "train", tmp / f"tp{rep}.zarr", tmp / f"tp{rep}.csv", shard=0,
                         shard_size=n_tp, threads=args.threads)
            ing_wall, ing_cpu = time.perf_counter() - t, time.process_time() - c
            shutil.rmtree(tmp / f"tp{rep}.zarr")
            walls.append(ref_wall / ing_wall)
            cpus.append(ref_cpu / ing_cpu)
            ing_times.append(ing_wall)
            print(f"  repeat {rep + 1}: plain {len(files) / ref_wall:6.0f} PNG/s, ingest {len(files) / ing_wall:6.0f} "
                  f"PNG/s, ratio {ref_wall / ing_wall:.2f} (CPU time ratio {ref_cpu / ing_cpu:.2f})")
        wall_ratio, cpu_ratio = statistics.median(walls), statistics.median(cpus)
        best_ing = min(ing_times)
        print(f"throughput ({n_tp} movies, {len(files)} PNGs, {args.threads} threads, median of {args.repeats} "
              f"interleaved repeats; load average {load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
        print(f"  ratio ingest / plain cv2.imread : {wall_ratio:5.2f}   (target >= 0.8; range "
              f"{min(walls):.2f}-{max(walls):.2f})")
        print(f"  CPU-time ratio                  : {cpu_ratio:5.2f}   (ingest also hashes and compresses: the "
              "bound when every core is busy)")
        print(f"FIGURE intphys_ingest_vs_imread {wall_ratio:.2f} x")
        print(f"FIGURE intphys_ingest_vs_imread_cpu {cpu_ratio:.2f} x")
        c = time.process_time()
        with ThreadPoolExecutor(args.threads) as ex:
            list(ex.map(read, files))
        ref_cpu = time.process_time() - c
        stages = _thread_cpu(lambda: ingest_shard(split_root, "train", tmp / "st.zarr", tmp / "st.csv", shard=0,
                                                  shard_size=n_tp, threads=args.threads))
        shutil.rmtree(tmp / "st.zarr")
        print(f"  where ingest's CPU goes (one more run, CPU s per thread; plain decoding took {ref_cpu:.2f} s):")
        for name, sec in stages.items():
            print(f"    {name:58s} {sec:6.2f} s  ({sec / ref_cpu:4.2f} x plain decoding)")

        # --- 2. peak RSS of fresh children, per split size
        print(f"peak RSS of a fresh child process (shards of {args.shard_size} movies, one after the other):")
        per_shard = []
        for n in sorted(args.movies):
            root = tmp / f"n{n}"
            _replicate_into(tmp / "data" / "train", root / "train", n, unique)
            out = tmp / f"store{n}"
            ing = _child(root, "train", out, args.threads, args.shard_size, "ingest")
            tr = _child(root, "train", out, args.threads, args.shard_size, "train")
            files_on_disk = sum(1 for p in tmp.glob(f"store{n}_*.zarr/**/*") if p.is_file())
            if n >= args.shard_size:
                per_shard.append(ing["seconds"] / (n / args.shard_size))
            print(f"  {n:4d} movies, {ing['shards']} shard(s): ingest rss {ing['rss_mb']:7.1f} MB "
                  f"({ing['seconds']:6.1f} s, {1000 * files_on_disk / n:6.0f} files per 1,000 movies); "
                  f"train rss {tr['rss_mb']:7.1f} MB ({tr['seconds']:6.1f} s)")
            print(f"FIGURE intphys_ingest_rss_{n}_movies {ing['rss_mb']:.0f} MB")
            print(f"FIGURE intphys_train_rss_{n}_movies {tr['rss_mb']:.0f} MB")
            print(f"FIGURE intphys_files_per_1000_movies_{n} {1000 * files_on_disk / n:.0f} files")
            for p in tmp.glob(f"store{n}_*.zarr"):
                shutil.rmtree(p)
            shutil.rmtree(root)

        # --- 3. the 15k training set on a cluster
        t_shard = min(per_shard) if per_shard else best_ing * args.shard_size / n_tp
        shards = math.ceil(args.n_train / args.shard_size)
        jobs = max(1, args.cores_per_node // args.threads)
        print(f"extrapolation: {args.n_train} movies = {shards} shards x {t_shard:.1f} s measured per shard "
              f"({args.threads} threads/job, {jobs} jobs per {args.cores_per_node}-core node):")
        for nodes in args.nodes:
            waves = math.ceil(shards / (nodes * jobs))
            print(f"  {nodes:3d} node(s): {waves} wave(s) x {t_shard:.1f} s = {waves * t_shard / 60:7.1f} min "
                  "(ingest; disk bandwidth not modelled)")
            print(f"FIGURE intphys_15k_ingest_{nodes}_nodes {waves * t_shard / 60:.1f} min")


_STAGES = {"decode": "decode (PNG -> shard buffers, depth to mm)", "store-writer": "compress, digest, write",
           "MainThread": "metadata, stream bookkeeping"}


def _thread_cpu(run) -> dict:
    """CPU seconds of each kind of thread of this process during ``run()`` (sampled from /proc every 20 ms)."""
    names, cpu, done = {}, {}, threading.Event()
    tick = os.sysconf("SC_CLK_TCK")

    def sample():
        while not done.is_set():
            names.update((t.native_id, t.name) for t in threading.enumerate())
            for tid in os.listdir("/proc/self/task"):
                try:
                    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue  # the thread has just ended: its last sample stands
                cpu[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
            done.wait(0.02)

    sampler = threading.Thread(target=sample, name="sampler")
    sampler.start()
    time.sleep(0.1)
    before = dict(cpu)
    run()
    time.sleep(0.05)
    done.set()
    sampler.join()
    out = dict.fromkeys(_STAGES.values(), 0.0)
    for tid, sec in cpu.items():
        kind = names.get(tid, "?").split("_")[0]  # ThreadPoolExecutor names its threads <prefix>_<i>
        if kind != "sampler":
            label = _STAGES.get(kind, "other (zarr's threads, tables)")
            out[label] = out.get(label, 0.0) + sec - before.get(tid, 0.0)
    return out


def _replicate_into(src_train: Path, dst_train: Path, n: int, unique: int) -> None:
    """``dst_train`` with ``n`` movies: hard links to the ``unique`` rendered ones."""
    dst_train.mkdir(parents=True, exist_ok=True)
    for i in range(1, min(unique, n) + 1):
        src, dst = src_train / f"{i:05d}", dst_train / f"{i:05d}"
        if not dst.exists():
            shutil.copytree(src, dst, copy_function=os.link)
    if n > unique:
        _replicate(dst_train, n, unique)


if __name__ == "__main__":
    main()
