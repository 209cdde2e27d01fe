"""Test helper: one stimulus through a motion model and the pursuit readout, in memory.

The same chain as the workflow (``motion_response_blocks`` -> RR-7317 eq. 3
``pursuit`` -> ``direction_error``) without stores, so library-level tests can
score small stimuli with the public criteria (:data:`psybench.motion.criteria.SCORERS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psybench.motion.criteria import SCORERS, merge_criteria
from psybench.motion.display import Display
from psybench.motion.readouts import (
    DEFAULT_MIN_SPEED_FRACTION,
    direction_error,
    mean_flow,
    pursuit,
    speed_threshold,
)
from psybench.motion.responses import motion_response_blocks
from psybench.motion.stimuli.geometry import Stimulus
from psybench.registry import resolve_model


def model_spec(algorithm: str, **params: Any):
    """The registered motion model ``algorithm`` with ``params``."""
    return resolve_model({"name": algorithm, "algorithm": algorithm, "params": params}, track="motion")


def readout(spec, stim: Stimulus, display: Display, *, lambda_ms: float = 50.0) -> dict[str, Any]:
    """Pursuit readout of ``stim`` (the dict the criteria take)."""
    flows = [b["flow"] for b in motion_response_blocks(spec, stim.frames, display)]
    vbar = mean_flow(np.concatenate(flows, axis=0))
    w = pursuit(vbar, frame_ms=display.frame_ms, lambda_ms=lambda_ms)
    thr = speed_threshold(w, min_speed_fraction=DEFAULT_MIN_SPEED_FRACTION)
    err = direction_error(w, stim.attrs["truth"]["direction_deg"], min_speed=thr)
    t = np.arange(len(w)) * display.frame_ms
    return {"t_ms": t, "direction_error_deg": err, "direction_deg": err + stim.attrs["truth"]["direction_deg"],
            "speed_deg_s": np.hypot(*w.T) * display.frames_per_s / display.px_per_deg, "stimulus": stim.attrs}


def verdict(experiment: str, spec, stimuli: dict[str, Stimulus], display: Display) -> dict[str, Any]:
    """Row of the public scorer of ``experiment`` for ``spec`` on ``stimuli``."""
    readouts = {name: readout(spec, s, display) for name, s in stimuli.items()}
    row, _ = SCORERS[experiment](spec.name, readouts, merge_criteria())
    return row
