"""Default settings of the attention track, written once.

The workflow takes its defaults from ``config/schema.yaml`` (the ``attention``
section); the library's keyword defaults name these constants, and
tests/test_attention_defaults.py checks that both agree.
"""

from __future__ import annotations

__all__ = [
    "GRID",
    "CHUNK_FRAMES",
    "LAGS_MS",
    "N_SETS",
    "N_NEGATIVES",
    "MIN_DIST_FRAC",
    "TIES",
    "SCATTER",
    "SEED",
    "IN_MEMORY_MB",
    "DENSITY_SIGMA",
    "N_SPLITS",
    "IVT_THRESHOLD_DEG_S",
]

#: Model grid (width, height): every movie is downsampled to 40x30, the size of the
#: Itti model's output (Shic & Scassellati 2007, sec. 5.2).
GRID = (40, 30)
#: Frames per streamed feature block (memory is bounded by it, not by the movie's length).
CHUNK_FRAMES = 64
#: Past times (ms) of the feature vector of a point (Shic & Scassellati 2007, sec. 5.2).
LAGS_MS = (100.0, 300.0)
#: Synthetic sets per random control category (Shic & Scassellati 2007, sec. 5.1).
N_SETS = 5
#: Non-attended cells drawn per gazed frame (Shic & Scassellati 2007, sec. 5.2).
N_NEGATIVES = 15
#: Minimum distance of a non-attended cell from the gazed cell, as a fraction of the
#: number of grid rows (Shic & Scassellati 2007, sec. 5.2: 31.25 %).
MIN_DIST_FRAC = 0.3125
#: Tie rule of the rank percentile ('mid' or the paper's 'paper').
TIES = "mid"
#: Within-class scatter of the Fisher discriminant (Shic & Scassellati 2007, sec. 4.2).
SCATTER = "equal"
SEED = 0
#: Feature maps up to this size (MB) are read into memory once; larger ones stream.
IN_MEMORY_MB = 1024.0
#: SD (grid cells) of the Gaussian that turns fixation counts into a density map.
DENSITY_SIGMA = 1.0
#: Random draws of AUC-Borji's negatives.
N_SPLITS = 100
#: Saccade velocity threshold of I-VT (deg/s; Shic & Scassellati 2007, sec. 5.1).
IVT_THRESHOLD_DEG_S = 30.0
