"""Speed and streaming memory of the bio-inspired motion models at 256x256.

Measures, in one run and on the same frames (a translating outline diamond of the
default benchmark set, 50 frames = 500 ms at 100 frames/s):

* frames/s of OpenCV Farneback (``cv2.calcOpticalFlowFarneback``, 2 threads) on
  consecutive pairs - the reference;
* frames/s of each bio-inspired model (``simoncelli_heeger``, ``tlapale_v1mt`` and
  the two ``tlapale_v1mt`` sweep variants of config/config.yaml) at its defaults,
  model only (the generator consumed in 16-frame chunks), printed as a ratio to
  Farneback: ``<name>_frames_per_s`` with ``return_p=False`` (the readout only,
  what the workflow uses), ``<name>_with_p_frames_per_s`` with the population;
* frames/s of Horn-Schunck (``horn_schunck``, solved to convergence) on the same
  pairs, and its ratio to Farneback;
* seconds per 50-frame stimulus through ``run_motion_model`` (model + writing the
  response store with ``p``), the figure the workflow's 15-minute budget depends on;
* peak memory of a fresh subprocess (``VmHWM`` from /proc, and the tracemalloc
  peak of the streaming loop) while streaming a 100-frame and a 400-frame
  stimulus through the model in 16-frame chunks; with constant-memory streaming
  the two peaks are equal. (``ru_maxrss`` is not used: Linux carries the parent's
  high-water mark across fork + exec.)

Each speed is the best of ``--repeats`` runs, the runs of all models interleaved
(one round after another), so that the ratios are not skewed by the load of a
shared machine drifting between models.

Run: ``.venv/bin/python benchmarks/bio_models_speed.py [--frames 50] [--repeats 3] [--skip-memory]``.
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

MODELS = {
    "simoncelli_heeger": ("simoncelli_heeger", {}),
    "tlapale_v1mt": ("tlapale_v1mt", {}),
    "tlapale_v1mt_nofeedback": ("tlapale_v1mt", {"feedback_gain": 0.0}),
    "tlapale_v1mt_nosurround": ("tlapale_v1mt", {"surround_area_deg2": 1.0e9}),
}


def diamond_frames(n_frames: int):
    """The default diamond stimulus (cw, rightward) at 256x256, ``n_frames`` frames."""
    from psybench.motion.display import Display
    from psybench.motion.stimuli import render_diamond

    display = Display()
    stim = render_diamond(display, handedness="cw", direction_deg=0.0, duration_ms=n_frames * display.frame_ms)
    return display, stim


class _Clock:
    """Frames per second of a block, by the wall clock and by the process's CPU time (all threads).

    On a loaded shared machine the wall clock measures the load as much as the
    code; CPU time does not count the time the process waits for a core, so its
    ratios are the steadier comparison (both are printed).
    """

    def __init__(self, n_frames: int):
        self.n = n_frames

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.fps = (self.n / (time.perf_counter() - self.wall), self.n / (time.process_time() - self.cpu))


def farneback_fps(frames: np.ndarray) -> tuple[float, float]:
    import cv2

    cv2.setNumThreads(2)
    imgs = [np.ascontiguousarray(f) for f in frames]
    with _Clock(len(imgs) - 1) as clock:
        for a, b in zip(imgs[:-1], imgs[1:]):
            cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)
    return clock.fps


def horn_schunck_fps(frames: np.ndarray) -> tuple[float, float]:
    """Frame pairs per second of ``horn_schunck`` at its defaults (solved to convergence)."""
    from psybench.motion.models.flow import horn_schunck

    with _Clock(len(frames) - 1) as clock:
        for a, b in zip(frames[:-1], frames[1:]):
            horn_schunck(a, b)
    return clock.fps


def _spec(name: str):
    from psybench.registry import resolve_model

    algorithm, params = MODELS[name]
    return resolve_model({"name": name, "algorithm": algorithm, "params": params})


def model_fps(name: str, frames: np.ndarray, display, *, return_p: bool = False) -> tuple[float, float]:
    spec = _spec(name)
    chunks = (frames[i:i + 16] for i in range(0, len(frames), 16))
    with _Clock(len(frames)) as clock:
        for _ in spec.algorithm.function(chunks, display=display, **{**spec.params, "return_p": return_p}):
            pass
    return clock.fps


def store_seconds(name: str, stim, display) -> float:
    from psybench.io.store import ArraySpec, write_store
    from psybench.motion.responses import run_motion_model

    spec = _spec(name)
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

name, n, params = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
display = Display()
spec = resolve_model({"name": name, "algorithm": params.pop("algorithm"), "params": params})
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
    algorithm, params = MODELS[name]
    out = subprocess.run([sys.executable, "-c", _CHILD, name, str(n_frames),
                          json.dumps({"algorithm": algorithm, **params, "return_p": False})],
                         capture_output=True, text=True, check=True, env={**os.environ})
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res["before_kb"] / 1024, res["peak_kb"] / 1024, res["traced_peak_kb"] / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    display, stim = diamond_frames(args.frames)
    frames = stim.frames
    for name in MODELS:
        model_fps(name, frames[:8], display)  # warm-up (imports, filter set-up)
    runs = {
        "farneback": lambda: farneback_fps(frames),
        "horn_schunck": lambda: horn_schunck_fps(frames),
        **{name: (lambda n=name: model_fps(n, frames, display)) for name in MODELS},
        **{f"{name}_with_p": (lambda n=name: model_fps(n, frames, display, return_p=True)) for name in MODELS},
    }
    best = {key: [0.0, 0.0] for key in runs}
    for _ in range(args.repeats):  # interleaved rounds: every model sees the same machine load
        for key, run in runs.items():
            best[key] = [max(a, b) for a, b in zip(best[key], run())]
    (fb, fb_cpu) = best["farneback"]
    print(f"256x256, {len(frames)} frames, 2 threads, best of {args.repeats} interleaved runs")
    print(f"FIGURE farneback_frames_per_s {fb:.1f} frames/s")
    print(f"FIGURE farneback_frames_per_cpu_s {fb_cpu:.1f} frames/s")
    for key in runs:
        if key != "farneback":
            wall, cpu = best[key]
            print(f"FIGURE {key}_frames_per_s {wall:.1f} frames/s")
            print(f"FIGURE {key}_over_farneback {wall / fb:.3f} ratio")
            print(f"FIGURE {key}_over_farneback_cpu_time {cpu / fb_cpu:.3f} ratio")
    print(f"FIGURE horn_schunck_s_per_stimulus {(len(frames) - 1) / best['horn_schunck'][0]:.2f} s")
    for name in MODELS:
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
