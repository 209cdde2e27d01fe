"""Future prediction from optical flow: the surprise of a constant-velocity extrapolation.

Farneback flow between frames t-1 and t extrapolates frame t to t+1; the
surprise is the worst mean absolute prediction error over the movie, a
flow-based stand-in for the future-prediction baselines of Riochet et al. 2018
(IntPhys V1.0, "Baseline results"). Surprise ``s >= 0`` maps to
``P = exp(-s / scale)``: a strictly decreasing map onto (0, 1], so L_R and L_A
(rank statistics) do not depend on ``scale``; it only keeps the numbers readable.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from psybench.intphys.models.observation import Observation, luminance, map_movies
from psybench.registry import register

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["flow_surprise"]

FLOW_REFERENCE = ("Farneback 2003 (two-frame motion estimation by polynomial expansion, SCIA) through OpenCV; "
                  "Riochet et al. 2018 (IntPhys V1.0), \"Baseline results\" (future prediction)")


def _flow_error(gray: np.ndarray, params: dict) -> float:
    import cv2
    T, H, W = gray.shape
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    worst = 0.0
    g8 = (gray * 255).astype(np.uint8)
    for t in range(1, T - 1):
        flow = cv2.calcOpticalFlowFarneback(g8[t - 1], g8[t], None, params["pyr_scale"], params["levels"],
                                            params["winsize"], params["iterations"], params["poly_n"],
                                            params["poly_sigma"], 0)
        # constant velocity: what is at x at t was at x - flow at t-1 and will be at x + flow at t+1,
        # so I_{t+1}(x) ~ I_t(x - flow(x)) (backward warp with the local flow)
        pred = cv2.remap(gray[t], xx - flow[..., 0], yy - flow[..., 1], cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
        worst = max(worst, float(np.mean(np.abs(pred - gray[t + 1]))))
    return worst


@register("flow", track="intphys", kind="plausibility", reference=FLOW_REFERENCE,
          bounds={"levels": (0, 16), "iterations": (0, 10_000), "threads": (0, 256)})
def flow_surprise(
    observation: Observation,
    *,
    scale: float = 0.02,
    pyr_scale: float = 0.5,
    levels: int = 2,
    winsize: int = 9,
    iterations: int = 3,
    poly_n: int = 5,
    poly_sigma: float = 1.1,
    threads: int = 1,
) -> pd.Series:
    """Optical-flow extrapolation surprise (Farneback flow, OpenCV).

    For each t, flow F between gray frames t-1 and t predicts frame t+1 as
    I_t(x - F(x)); surprise s = max_t mean |prediction - I_{t+1}| (gray in [0, 1]),
    P = exp(-s / scale). Farneback parameters are OpenCV's.
    """
    import cv2
    import pandas as pd
    params = dict(pyr_scale=pyr_scale, levels=levels, winsize=winsize, iterations=iterations, poly_n=poly_n,
                  poly_sigma=poly_sigma)
    cv2.setNumThreads(1)

    def one(i, movie):
        return math.exp(-_flow_error(luminance(movie), params) / scale)

    return pd.Series(map_movies(one, [observation.scene], threads), index=list(observation.movies), dtype=float)
