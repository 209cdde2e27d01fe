"""Control plausibility models: chance level by construction (Riochet et al. 2018, IntPhys V1.0,
"Evaluation metric")."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import numpy as np

from psybench.intphys.models.observation import Observation
from psybench.registry import register

if TYPE_CHECKING:  # annotations only: pandas is imported where it is used (planning imports these modules)
    import pandas as pd

__all__ = ["constant", "random_control"]

_REFERENCE = "Riochet et al. 2018 (IntPhys V1.0), \"Evaluation metric\": chance level L_R = L_A = 0.5"


@register("constant", track="intphys", kind="plausibility", reference=_REFERENCE)
def constant(observation: Observation, *, value: float = 0.5) -> pd.Series:
    """The same P for every movie: L_R = 0.5 (ties), L_R_strict = 0, L_A = 0.5."""
    import pandas as pd
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"constant model: value {value!r} must be in [0, 1]")
    return pd.Series(float(value), index=list(observation.movies), dtype=float)


@register("random", track="intphys", kind="plausibility", reference=_REFERENCE)
def random_control(observation: Observation, *, seed: int = 0) -> pd.Series:
    """Uniform random P, seeded per movie id (independent of sharding)."""
    import pandas as pd
    ids = list(observation.movies)
    return pd.Series(
        [float(np.random.default_rng([seed, zlib.crc32(m.encode())]).random()) for m in ids], index=ids, dtype=float
    )
