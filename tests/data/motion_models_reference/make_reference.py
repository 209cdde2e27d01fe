"""Regenerate the reference flows of the bio-inspired models (run with the code to be recorded).

Stimulus: a 4-deg clockwise outline diamond moving right at 10 deg/s, 96 x 96 px at
8 px/deg, 100 frames/s, 20 frames (200 ms), fed in 7-frame chunks. Stored: the flow
on the models' output grid (every 4th pixel: the outputs are block-replicated over
4 x 4 pixels, so nothing is lost), float32, shape (20, 24, 24, 2).

Run: ``.venv/bin/python tests/data/motion_models_reference/make_reference.py``.
"""

from pathlib import Path

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli import render_diamond
from psybench.registry import resolve_model

DISPLAY = Display(width_px=96, height_px=96)
# the reference was recorded before MT's direction pooling became the default: the
# tlapale entries give it as it was then (off), so the flows still compare code with code
MODELS = {
    "simoncelli_heeger": {},
    "tlapale_v1mt": {"direction_pooling_deg": 0.0},
    "tlapale_v1mt_nofeedback": {"feedback_gain": 0.0, "direction_pooling_deg": 0.0},
    "tlapale_v1mt_nosurround": {"surround_area_deg2": 1.0e9, "direction_pooling_deg": 0.0},
}


def reference_frames() -> np.ndarray:
    stim = render_diamond(DISPLAY, handedness="cw", direction_deg=0.0, size_deg=4.0, duration_ms=200.0)
    return stim.frames


def model_flow(name: str, frames: np.ndarray, **extra) -> np.ndarray:
    algorithm = "simoncelli_heeger" if name == "simoncelli_heeger" else "tlapale_v1mt"
    spec = resolve_model({"name": name, "algorithm": algorithm, "params": MODELS[name]})
    chunks = (frames[i:i + 7] for i in range(0, len(frames), 7))
    outs = list(spec.algorithm.function(chunks, display=DISPLAY, **{**spec.params, **extra}))
    return np.concatenate([o["flow"] for o in outs])[:, ::4, ::4]


if __name__ == "__main__":
    frames = reference_frames()
    flows = {name: model_flow(name, frames) for name in MODELS}
    np.savez_compressed(Path(__file__).with_name("bio_models_flow.npz"), **flows)
