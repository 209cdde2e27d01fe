"""Default settings of the attention track, written once.

The workflow takes its defaults from ``config/schema.yaml`` (the ``attention``
section); the library's keyword defaults name these constants, and
tests/test_attention_defaults.py checks that both agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEFAULT_EVALUATION",
    "EvaluationSettings",
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
    "SPLIT",
    "SPLIT_BLOCKS",
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
#: Train/test split of a movie tested on itself (psybench.attention.split): blocks of time with a gap.
SPLIT = "blocks"
#: Blocks of time of the ``blocks`` split.
SPLIT_BLOCKS = 4
#: Saccade velocity threshold of I-VT (deg/s; Shic & Scassellati 2007, sec. 5.1).
IVT_THRESHOLD_DEG_S = 30.0


@dataclasses.dataclass(frozen=True)
class EvaluationSettings:
    """The settings of the rank-percentile evaluation and its controls (``attention.evaluation``).

    Built once from the config (:meth:`from_config`) and passed whole to
    :func:`psybench.attention.table1.run_evaluation_parts`,
    :func:`psybench.attention.evaluate.evaluate` and the controls
    (Shic & Scassellati 2007, sec. 5.1-5.2).

    Parameters
    ----------
    n_sets : int
        Synthetic sets per random control category (sec. 5.1).
    n_per_set : int or None
        Trajectories per synthetic set; None: the number of observers.
    n_negatives : int
        Non-attended cells drawn per gazed frame for the Fisher tuning (sec. 5.2).
    min_dist_frac : float
        Minimum distance of a non-attended cell from the gazed cell, as a fraction of
        the grid rows (sec. 5.2: 31.25 %).
    ties : {'mid', 'paper'}
        Tie rule of the rank percentile.
    scatter : {'equal', 'pooled', 'other'}
        Within-class scatter of Fisher's discriminant (sec. 4.2).
    seed : int
        Seed of the controls and of the non-attended draws.
    in_memory_mb : float
        Feature maps up to this size are decoded into memory once; larger ones stream.
    split : {'blocks', 'even_odd'}
        Train/test split of a movie tested on itself (:mod:`psybench.attention.split`):
        contiguous blocks of time separated by a gap (default), or the paper's
        even/odd frames (sec. 5.2), whose test frames repeat the training frames.
    split_blocks : int
        Blocks of time of the ``blocks`` split (even blocks train, odd blocks test).
    split_gap_ms : float or None
        Gap between training and test frames; None: from the data's autocorrelation
        (:func:`psybench.attention.split.decorrelation_gap`).
    """

    n_sets: int = N_SETS
    n_per_set: int | None = None
    n_negatives: int = N_NEGATIVES
    min_dist_frac: float = MIN_DIST_FRAC
    ties: str = TIES
    scatter: str = SCATTER
    seed: int = SEED
    in_memory_mb: float = IN_MEMORY_MB
    split: str = SPLIT
    split_blocks: int = SPLIT_BLOCKS
    split_gap_ms: float | None = None

    @classmethod
    def from_config(cls, evaluation: Mapping[str, Any] | EvaluationSettings) -> EvaluationSettings:
        """The settings of a config's ``attention.evaluation`` section (unset keys: the defaults).

        Raises
        ------
        ValueError
            For a key that is not a setting, naming it.
        """
        if isinstance(evaluation, cls):
            return evaluation
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(evaluation) - set(names))
        if unknown:
            raise ValueError(f"attention.evaluation: unknown key(s) {unknown}; allowed: {names}")
        return cls(**evaluation)

    def to_config(self) -> dict[str, Any]:
        """The settings as an ``attention.evaluation`` section (plain, for Snakemake params)."""
        return dataclasses.asdict(self)


#: The evaluation settings of the schema's defaults (tests/test_attention_defaults.py).
DEFAULT_EVALUATION = EvaluationSettings()
