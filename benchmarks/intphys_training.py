"""IntPhys training at the real size: loader vs in-memory clips, training clips/s, peak RSS, 15k-movie epoch.

Usage: python benchmarks/intphys_training.py [--root DIR] [--movies 125 500] [--size 288] [--frames 100]
       [--shard-size 25] [--unique 4] [--steps 30] [--batch-size 32] [--threads 1]
       [--nodes 1 8] [--cores-per-node 32] [--n-train 15000]

A scale rehearsal of the future-prediction baseline's training stage
(``cnn_future``, Riochet et al. 2018, "Baseline results") on a train split in the
real layout and at the real size (288 x 288 px, 100 frames, scene + 16-bit depth +
masks), as psybench's workflow runs it: the real-layout tree is ingested shard by
shard into Zarr stores, and :class:`psybench.intphys.clips.ClipLoader` streams
(input, 5-frames-ahead target) mask clips from those stores.

1. Data: ``--unique`` movies are rendered, the others are hard links to their
   PNGs (identical bytes: reading and decoding cost the same), up to the largest
   ``--movies``; then every shard is ingested. Files and bytes on disk are counted
   (PNG tree and stores). With ``--root`` the tree and the stores are kept and
   reused by the next run.
2. Throughput, all in this run on the same clips: the loader alone (clips/s of
   ``ClipLoader.batches`` over the first ``--steps`` batches: Zarr read,
   decompression, mask channels, area downsampling, shuffling); the training step
   alone on those batches held in memory (forward, loss, backward, Adam); the
   training step fed by the loader as the training rule runs it. The ratio of the
   last two is the target: >= 0.9x (the loader is never the bottleneck). The
   loader's rate over the training step's says how much faster a device could
   train before the loader would limit it.
3. Peak RSS of a fresh child process (``VmHWM`` read in the child) that streams one
   whole epoch of the loader over N movies and trains ``--steps`` steps, for each N:
   target flat (within 10 %) from 125 to 500 movies.
4. One epoch over the full training set (``--n-train`` movies, 95 clips each at
   horizon 5): the arithmetic printed from the measured rates, on 1 node and on N
   SLURM nodes. Ingest is one job per shard, so nodes divide it; training one model
   is one job (psybench does not split one model's training across nodes), so
   N nodes train N configurations (spans, seeds) in the time of one.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, sys, time
import numpy as np
from psybench.intphys.clips import ClipLoader
from intphys_training import train_steps
stores, steps, batch_size, threads = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
loader = ClipLoader([tuple(p) for p in stores], horizon=5, batch_size=batch_size, seed=0)
t = time.perf_counter()
n = 0
batches = loader.batches(0)
n += train_steps(batches, steps, threads)  # the first steps train
for b in batches:  # the rest of the epoch is streamed (every movie is read once)
    n += len(b.inputs)
dt = time.perf_counter() - t
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"rss_mb": hwm / 1024, "seconds": dt, "clips": n, "total_clips": loader.n_clips}))
"""


def _ingest_benchmark():
    """The ingest benchmark's tree helpers (rendered movies replicated by hard links), written once there."""
    spec = importlib.util.spec_from_file_location("intphys_ingest_bench", Path(__file__).with_name("intphys_ingest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _network(threads: int):
    import torch

    from psybench.intphys.models.future import network_of
    from psybench.intphys.train import TRAIN_DEFAULTS

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = network_of(dict(TRAIN_DEFAULTS))
    opt = torch.optim.Adam(net.parameters(), lr=TRAIN_DEFAULTS["lr"], betas=(TRAIN_DEFAULTS["beta1"], 0.999))
    return net, opt


def train_steps(batches, steps: int, threads: int) -> int:
    """Train ``steps`` steps of the baseline's network on ``batches`` (the training rule's step); clips seen."""
    import torch

    net, opt = _network(threads)
    net.train()
    n = 0
    for k, batch in enumerate(batches):
        x, y = torch.from_numpy(batch.inputs), torch.from_numpy(batch.targets)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        n += len(x)
        if k + 1 == steps:
            break
    return n


def _child(stores, steps: int, batch_size: int, threads: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([[str(a), str(b)] for a, b in stores]), str(steps),
                        str(batch_size), str(threads)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _disk(paths) -> tuple[int, int]:
    """(files, bytes) under ``paths``, hard-linked files counted once."""
    seen, files, size = set(), 0, 0
    for root in paths:
        for d, _, names in os.walk(root):
            for name in names:
                st = os.lstat(os.path.join(d, name))
                files += 1
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    size += st.st_size
    return files, size


def _prepare(root: Path, args) -> tuple[list[tuple[Path, Path]], float]:
    """The rendered, replicated and ingested split: (store, table) pairs in shard order, seconds per shard."""
    from psybench.intphys.generate import generate_intphys
    from psybench.intphys.ingest import ingest_shard, list_movies, n_shards

    bench = _ingest_benchmark()
    n_max = max(args.movies)
    unique = min(args.unique, n_max)
    t = time.perf_counter()
    if not (root / "render" / "train").exists():
        generate_intphys(root / "render", "train", n_train=unique, height=args.size, width=args.size,
                         n_frames=args.frames, depth_encoding="16bit", status_variant="header", threads=args.threads)
    bench._replicate_into(root / "render" / "train", root / "data" / "train", n_max, unique)
    print(f"tree: {unique} movies of {args.frames} x {args.size}x{args.size} px rendered, {n_max - unique} hard "
          f"links ({time.perf_counter() - t:.1f} s)")
    n = n_shards(len(list_movies(root / "data", "train")), args.shard_size)
    pairs, t, done = [], time.perf_counter(), 0
    timing = root / "stores" / "ingest_seconds.json"
    for k in range(n):
        store, table = root / "stores" / f"train_{k:04d}.zarr", root / "stores" / f"train_{k:04d}.csv"
        if not table.exists():
            store.parent.mkdir(parents=True, exist_ok=True)
            ingest_shard(root / "data", "train", store, table, shard=k, shard_size=args.shard_size,
                         threads=args.threads)
            done += 1
        pairs.append((store, table))
    seconds = time.perf_counter() - t
    if done == n:
        timing.write_text(json.dumps({"seconds_per_shard": seconds / n}))
    per_shard = json.loads(timing.read_text())["seconds_per_shard"] if timing.exists() else seconds / max(done, 1)
    print(f"ingest: {n} shards of {args.shard_size} movies, {per_shard:.1f} s per shard with {args.threads} "
          f"thread(s)" + ("" if done == n else " (measured when the stores were written)"))
    return pairs, per_shard


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="keep the tree and stores here (reused); default: a temp dir")
    ap.add_argument("--movies", type=int, nargs="+", default=[125, 500])
    ap.add_argument("--size", type=int, default=288)
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--shard-size", type=int, default=25)
    ap.add_argument("--unique", type=int, default=4, help="movies rendered; the rest are hard links")
    ap.add_argument("--steps", type=int, default=30, help="training steps timed (and run in each RSS child)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--nodes", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--cores-per-node", type=int, default=32)
    ap.add_argument("--n-train", type=int, default=15000, help="movies of the extrapolated training set")
    args = ap.parse_args(argv)
    if any(n % args.shard_size for n in args.movies):
        ap.error(f"--movies {args.movies} must be multiples of --shard-size {args.shard_size}")

    import cv2
    import torch

    from psybench.intphys.clips import ClipLoader

    cv2.setNumThreads(1)
    torch.set_num_threads(args.threads)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; torch {torch.__version__}, "
          f"{args.threads} thread(s)")
    tmp = None
    if args.root is None:
        tmp = tempfile.TemporaryDirectory(prefix="intphys_train_bench_")
        args.root = Path(tmp.name)
    root = args.root
    pairs, t_shard = _prepare(root, args)
    png_files, png_bytes = _disk([root / "data"])
    zarr_files, zarr_bytes = _disk([root / "stores"])
    n_max = max(args.movies)
    print(f"on disk for {n_max} movies: PNG tree {png_files} files, {png_bytes / 1e9:.2f} GB as stored "
          f"(hard links once); stores {zarr_files} files, {zarr_bytes / 1e9:.2f} GB")
    print(f"FIGURE intphys_train_store_files_per_1000_movies {1000 * zarr_files / n_max:.0f} files")
    print(f"FIGURE intphys_train_store_gb_per_1000_movies {zarr_bytes / 1e9 * 1000 / n_max:.2f} GB")

    # --- 2. throughput on the same batches, in this run
    loader = ClipLoader(pairs, horizon=5, batch_size=args.batch_size, seed=0)
    t = time.perf_counter()
    held = []
    for batch in loader.batches(0):
        held.append(batch)
        if len(held) == args.steps:
            break
    t_load = time.perf_counter() - t
    clips = sum(len(b.inputs) for b in held)
    train_steps(held[:2], 2, args.threads)  # warm-up: first-call allocations
    t = time.perf_counter()
    train_steps(held, args.steps, args.threads)
    t_mem = time.perf_counter() - t
    t = time.perf_counter()
    train_steps(ClipLoader(pairs, horizon=5, batch_size=args.batch_size, seed=0).batches(0), args.steps, args.threads)
    t_fed = time.perf_counter() - t
    r_load, r_mem, r_fed = clips / t_load, clips / t_mem, clips / t_fed
    print(f"throughput over the first {args.steps} batches ({clips} clips of 1 x 2 x 64 x 64 -> 2 x 64 x 64):")
    print(f"  loader alone                       : {r_load:8.1f} clips/s")
    print(f"  training step, clips held in memory: {r_mem:8.1f} clips/s")
    print(f"  training step fed by the loader    : {r_fed:8.1f} clips/s")
    print(f"  ratio fed / in memory              : {r_fed / r_mem:8.2f}   (target >= 0.9)")
    print(f"  loader / training step             : {r_load / r_mem:8.1f} x   (a device may train this much faster "
          "before the loader limits it)")
    print(f"FIGURE intphys_train_loader_vs_memory {r_fed / r_mem:.2f} x")
    print(f"FIGURE intphys_train_loader_clips_per_s {r_load:.0f} clips/s")
    print(f"FIGURE intphys_train_step_clips_per_s {r_mem:.1f} clips/s")

    # --- 3. peak RSS of fresh children, one epoch streamed each
    print(f"peak RSS of a fresh child (one epoch of the loader streamed, {args.steps} training steps):")
    rss = {}
    for n in sorted(args.movies):
        res = _child(pairs[: n // args.shard_size], args.steps, args.batch_size, args.threads)
        rss[n] = res["rss_mb"]
        print(f"  {n:4d} movies: {res['rss_mb']:7.1f} MB  ({res['total_clips']} clips streamed in "
              f"{res['seconds']:.1f} s)")
        print(f"FIGURE intphys_train_rss_{n}_movies {res['rss_mb']:.0f} MB")
    lo, hi = min(rss.values()), max(rss.values())
    print(f"  RSS change from {min(rss)} to {max(rss)} movies: {100 * (hi - lo) / lo:+.1f} % (target within 10 %)")

    # --- 4. the full training set
    from psybench.intphys.clips import clip_starts

    per_movie = len(clip_starts(args.frames, horizon=5, n_input=1))
    total = args.n_train * per_movie
    t_epoch = total / r_fed
    shards = math.ceil(args.n_train / args.shard_size)
    print(f"one epoch over {args.n_train} movies = {args.n_train} x {per_movie} clips = {total} clips:")
    print(f"  training (one job): {total} clips / {r_fed:.1f} clips/s = {t_epoch / 3600:.1f} h on this CPU with "
          f"{args.threads} thread(s); the loader alone would take {total / r_load / 3600:.1f} h "
          f"(the bound on any device: {r_load:.0f} clips/s per loader process)")
    jobs = max(1, args.cores_per_node // args.threads)
    for nodes in args.nodes:
        waves = math.ceil(shards / (nodes * jobs))
        t_ingest = waves * t_shard
        print(f"  {nodes} node(s): ingest {shards} shards / ({nodes} x {jobs} jobs) = {waves} wave(s) x "
              f"{t_shard:.1f} s = {t_ingest / 60:.1f} min; then one epoch of one model {t_epoch / 3600:.1f} h "
              f"(one job); total {(t_ingest + t_epoch) / 3600:.1f} h, {nodes} configuration(s) trained at once")
        print(f"FIGURE intphys_15k_epoch_{nodes}_nodes {(t_ingest + t_epoch) / 3600:.1f} h")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
