"""Speed and streaming memory of the bio-inspired motion models at 256x256.

Measures, in one run and on the same frames (a translating outline diamond of the
default benchmark set, 50 frames = 500 ms at 100 frames/s):

* frames/s of OpenCV Farneback (``cv2.calcOpticalFlowFarneback``, 2 threads) on
  consecutive pairs - the reference;
* frames/s of each bio-inspired model (``simoncelli_heeger``, ``tlapale_v1mt``) at
  its defaults, model only (the generator consumed in 16-frame chunks), printed as
  a ratio to Farneback;
* seconds per 50-frame stimulus through ``run_motion_model`` (model + writing the
  response store with ``p``), the figure the workflow's 15-minute budget depends on;
* peak memory of a fresh subprocess (``VmHWM`` from /proc, and the tracemalloc
  peak of the streaming loop) while streaming a 100-frame and a 400-frame
  stimulus through the model in 16-frame chunks; with constant-memory streaming
  the two peaks are equal. (``ru_maxrss`` is not used: Linux carries the parent's
  high-water mark across fork + exec.)

Run: ``.venv/bin/python benchmarks/bio_models_speed.py [--frames 50] [--skip-memory]``.
Threads are pinned to 2 (OMP/OpenBLAS/cv2), the workflow's per-job setting.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MODELS = ("simoncelli_heeger", "tlapale_v1mt")


def diamond_frames(n_frames: int):
    """The default diamond stimulus (cw, rightward) at 256x256, ``n_frames`` frames."""
    from psybench.motion.display import Display
    from psybench.motion.stimuli import render_diamond

    display = Display()
    stim = render_diamond(display, handedness="cw", direction_deg=0.0, duration_ms=n_frames * display.frame_ms)
    return display, stim


def farneback_fps(frames: np.ndarray) -> float:
    import cv2

    cv2.setNumThreads(2)
    imgs = [np.ascontiguousarray(f) for f in frames]
    t0 = time.perf_counter()
    for a, b in zip(imgs[:-1], imgs[1:]):
        cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)
    return (len(imgs) - 1) / (time.perf_counter() - t0)


def model_fps(name: str, frames: np.ndarray, display) -> float:
    from psybench.registry import resolve_model

    spec = resolve_model({"name": name, "algorithm": name})
    t0 = time.perf_counter()
    chunks = (frames[i:i + 16] for i in range(0, len(frames), 16))
    for _ in spec.algorithm.function(chunks, display=display, **spec.params):
        pass
    return len(frames) / (time.perf_counter() - t0)


def store_seconds(name: str, stim, display) -> float:
    from psybench.io.store import ArraySpec, write_store
    from psybench.motion.responses import run_motion_model
    from psybench.registry import resolve_model

    spec = resolve_model({"name": name, "algorithm": name})
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "stim.zarr"
        write_store(src, {"frames": ArraySpec(stim.frames, ("t", "y", "x"))},
                    {"display": display.to_attrs(), "stimulus": stim.attrs})
        t0 = time.perf_counter()
        run_motion_model(spec, src, Path(tmp) / "resp.zarr")
        return time.perf_counter() - t0


_CHILD = (r"""
import json, sys, tracemalloc
import numpy as np
from psybench.motion.display import Display
from psybench.registry import resolve_model

def hwm_kb():  # VmHWM: peak resident set of this process (reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1

name, n = sys.argv[1], int(sys.argv[2])
display = Display()
spec = resolve_model({"name": name, "algorithm": name})
y, x = np.mgrid[0:256, 0:256].astype(np.float32)
def chunks():  # a drifting plaid generated on the fly: the movie is never held in memory
    for a in range(0, n, 16):
        t = np.arange(a, min(n, a + 16), dtype=np.float32)[:, None, None]
        yield (0.5 + 0.2 * np.cos(2 * np.pi * (x - 0.8 * t) / 16) """
r"""+ 0.2 * np.cos(2 * np.pi * (y - 0.4 * t) / 24)).astype(np.float32)
before = hwm_kb()
tracemalloc.start()
for out in spec.algorithm.function(chunks(), display=display, **spec.params):
    pass
traced_peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"before_kb": before, "peak_kb": hwm_kb(), "traced_peak_kb": traced_peak / 1024}))
""")


def peak_memory_mb(name: str, n_frames: int) -> tuple[float, float, float]:
    """Fresh process streaming ``n_frames``: (VmHWM MB after imports, VmHWM MB at the end, tracemalloc peak MB)."""
    out = subprocess.run([sys.executable, "-c", _CHILD, name, str(n_frames)], capture_output=True, text=True,
                         check=True, env={**os.environ})
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res["before_kb"] / 1024, res["peak_kb"] / 1024, res["traced_peak_kb"] / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=50)
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    display, stim = diamond_frames(args.frames)
    frames = stim.frames
    fb = farneback_fps(frames)
    print(f"256x256, {len(frames)} frames, 2 threads")
    print(f"FIGURE farneback_frames_per_s {fb:.1f} frames/s")
    for name in MODELS:
        model_fps(name, frames[:8], display)  # warm-up (imports, filter set-up)
        fps = model_fps(name, frames, display)
        print(f"FIGURE {name}_frames_per_s {fps:.1f} frames/s")
        print(f"FIGURE {name}_over_farneback {fps / fb:.3f} ratio")
        print(f"FIGURE {name}_s_per_stimulus_with_store {store_seconds(name, stim, display):.2f} s")
    if not args.skip_memory:
        for name in MODELS:
            for n in (100, 400):
                base, peak, traced = peak_memory_mb(name, n)
                print(f"FIGURE {name}_peak_rss_{n}_frames {peak:.0f} MB")
                print(f"FIGURE {name}_rss_above_imports_{n}_frames {peak - base:.0f} MB")
                print(f"FIGURE {name}_tracemalloc_peak_{n}_frames {traced:.0f} MB")


if __name__ == "__main__":
    main()
