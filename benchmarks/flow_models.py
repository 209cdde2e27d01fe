"""Speed of the classic optical-flow models on 256x256 frame pairs.

Prints frames/s (frame pairs per second, one thread) of every registered
``psybench.motion.models.flow`` algorithm at its default parameters, and the ratio to
Farneback (OpenCV) measured in the same run, plus the mean end-point error on the
pair (a smooth texture translating by (0.4, -0.3) px/frame) as a sanity check.

Run: ``.venv/bin/python benchmarks/flow_models.py [--size 256] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from psybench.motion.models import flow

MODELS = {
    "farneback": flow.farneback,
    "horn_schunck": flow.horn_schunck,
    "lucas_kanade": flow.lucas_kanade,
    "dis": flow.dis,
}
VELOCITY = (0.4, -0.3)


def texture_pair(size: int, velocity=VELOCITY, sigma: float = 3.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian-filtered noise (periodic) and its exact Fourier shift by ``velocity`` (u, v) px."""
    rng = np.random.default_rng(seed)
    ky = np.fft.fftfreq(size)[:, None]
    kx = np.fft.fftfreq(size)[None, :]
    spec = np.fft.fft2(rng.standard_normal((size, size))) * np.exp(-2 * np.pi**2 * sigma**2 * (kx**2 + ky**2))
    t0 = np.fft.ifft2(spec).real
    t1 = np.fft.ifft2(spec * np.exp(-2j * np.pi * (kx * velocity[0] + ky * velocity[1]))).real
    scale = 0.1 / t0.std()
    return ((t0 - t0.mean()) * scale + 0.5).astype(np.float32), ((t1 - t0.mean()) * scale + 0.5).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    f0, f1 = texture_pair(args.size)
    margin = args.size // 8
    rows = []
    for name, func in MODELS.items():
        out = func(f0, f1)  # warm-up (imports, caches)
        best = np.inf
        for _ in range(args.repeats):
            t = time.perf_counter()
            out = func(f0, f1)
            best = min(best, time.perf_counter() - t)
        err = np.hypot(out[..., 0] - VELOCITY[0], out[..., 1] - VELOCITY[1])[margin:-margin, margin:-margin]
        rows.append((name, 1.0 / best, float(err.mean())))
    ref = dict((r[0], r[1]) for r in rows)["farneback"]
    print(f"flow models on {args.size}x{args.size} pairs, best of {args.repeats}, 1 thread")
    print(f"{'model':<14}{'frames/s':>10}{'x farneback':>13}{'EPE px/frame':>14}")
    for name, fps, epe in rows:
        print(f"{name:<14}{fps:>10.1f}{fps / ref:>13.3f}{epe:>14.4f}")


if __name__ == "__main__":
    main()
