"""Regenerate the reference flows of the gradient models (run with the code to be recorded).

Stimulus: a 3-deg clockwise outline diamond moving right at 10 deg/s on a 48 x 48 px
display at 8 px/deg, 100 frames/s; the flows of frame pairs (4, 5), (5, 6) and (6, 7),
float32, shape (3, 48, 48, 2), of ``horn_schunck`` and ``lucas_kanade`` at their
defaults and with ``levels: 2`` (coarse to fine: pyramid, upsampling and warping).

Run: ``.venv/bin/python tests/data/motion_models_reference/make_gradient_reference.py``.
"""

from pathlib import Path

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli import render_diamond
from psybench.registry import resolve_model

DISPLAY = Display(width_px=48, height_px=48)
PAIRS = ((4, 5), (5, 6), (6, 7))
MODELS = {
    "horn_schunck": ("horn_schunck", {}),
    "horn_schunck_levels2": ("horn_schunck", {"levels": 2}),
    "lucas_kanade": ("lucas_kanade", {}),
    "lucas_kanade_levels2": ("lucas_kanade", {"levels": 2}),
}


def reference_frames() -> np.ndarray:
    stim = render_diamond(DISPLAY, handedness="cw", direction_deg=0.0, size_deg=3.0, duration_ms=80.0)
    return np.asarray(stim.frames, np.float32)


def model_flow(name: str, frames: np.ndarray) -> np.ndarray:
    algorithm, params = MODELS[name]
    spec = resolve_model({"name": name, "algorithm": algorithm, "params": params})
    return np.stack([spec.algorithm.function(frames[a], frames[b], **spec.params) for a, b in PAIRS])


if __name__ == "__main__":
    frames = reference_frames()
    flows = {name: model_flow(name, frames) for name in MODELS}
    np.savez_compressed(Path(__file__).with_name("gradient_models_flow.npz"), **flows)
