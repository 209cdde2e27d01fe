"""Chance level of every saliency metric on given fixations: what a map with no information scores.

A map that knows nothing of the movie, i.i.d. uniform noise on every cell of every
frame, scored with the same metrics against the same fixations
(:func:`psybench.attention.metrics.score_frames`), is the chance level a model's value
is read against (beside the ceiling, :func:`psybench.attention.metrics.loo_ceiling`).
Where the expectation over noise maps has a closed form it is used exactly:

- AUC-Judd: on a frame with n fixated cells (of m + n), Judd's curve adds to the
  Mann-Whitney area (expectation 1/2) half a fixation per non-fixated cell above the
  lowest fixated value (:func:`psybench.attention.map_metrics.auc_judd`, Notes); for
  noise that is m n / (n + 1) cells, so ``E[AUC-Judd] = 1/2 + 1/(2 (n + 1))``: 0.75
  for one fixation, 0.625 for three; the frames' mean is the chance level (Bylinskii
  et al. 2019 sec. 3 use the same curve; the bias is the reason AUC-Borji and sAUC
  exist);
- AUC-Borji and sAUC: 1/2 (the positives and the random or shuffled negatives are
  exchangeable on a noise map);
- NSS and CC: 0 (the noise u and 1 - u have the same law and opposite scores);
- the map models' ``rank_percentile``: 1/2 (the mid-rank rule of
  :func:`psybench.attention.evaluate.rank_percentiles`).

KL, SIM and IG depend on the noise's law; their chance level is the mean over
:data:`CHANCE_DRAWS` seeded noise maps, with its standard error over the draws.
"""

from __future__ import annotations

import numpy as np

from psybench.attention import METRICS
from psybench.attention.defaults import SEED

__all__ = ["CHANCE_DRAWS", "EXACT_CHANCE", "judd_chance", "noise_maps", "chance_levels", "fraction_of_ceiling",
           "chance_columns"]

#: Seeded noise maps per (test movie, frames) for the metrics without a closed form.
CHANCE_DRAWS = 3
#: Exact chance levels of the metrics whose expectation over noise maps is a constant.
_DIRECTIONS = {m.name: m.direction for m in METRICS if not m.prefix}
EXACT_CHANCE = {"AUC-Borji": 0.5, "sAUC": 0.5, "NSS": 0.0, "CC": 0.0, "rank_percentile": 0.5}


def judd_chance(counts: np.ndarray) -> float:
    """Mean over frames with fixations of ``1/2 + 1/(2 (n + 1))``, n = fixated cells of the frame.

    ``counts``: ndarray (T, H, W) of fixation counts. NaN without any fixation.
    """
    c = np.asarray(counts)
    n = (c.reshape(len(c), -1) > 0).sum(1)
    n = n[n > 0]
    return float(np.mean(0.5 + 0.5 / (n + 1))) if n.size else float("nan")


def noise_maps(shape: tuple[int, ...], *, draws: int = CHANCE_DRAWS, seed: int = SEED) -> np.ndarray:
    """``draws`` seeded noise map sequences of ``shape`` (T, H, W), uniform on [0, 1): shape (draws, T, H, W)."""
    return np.random.default_rng(seed).random((draws, *shape))


def chance_levels(counts: np.ndarray, scored: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """(chance level, its standard error) per metric on the fixations ``counts`` (T, H, W).

    ``scored``: the metrics of the :func:`noise_maps` on these fixations
    (:func:`psybench.attention.metrics.score_frames` of the stack, one dict per draw).
    Exact levels (module docstring) have standard error 0; the others are the mean
    over the draws with its standard error.
    """
    level, se = {}, {}
    for k in scored[0]:
        if k == "AUC-Judd":
            level[k], se[k] = judd_chance(counts), 0.0
        elif k in EXACT_CHANCE:
            level[k], se[k] = EXACT_CHANCE[k], 0.0
        else:
            v = np.array([s[k] for s in scored], np.float64)
            level[k] = float(v.mean())
            se[k] = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")
    return level, se


def fraction_of_ceiling(value: float, chance: float, ceiling: float, *, direction: str = "higher") -> float:
    """How far ``value`` goes from chance (0) to the ceiling (1): ``(value - chance) / (ceiling - chance)``.

    ``direction``: 'higher' or 'lower' is better (the ratio is the same; it only
    decides whether the ceiling beats chance). NaN where it does not (no room to
    place a model in) or a number is missing.
    """
    room = ceiling - chance
    better = room > 0 if direction == "higher" else room < 0
    if not (np.isfinite(room) and np.isfinite(value) and better):
        return float("nan")
    return float((value - chance) / room)


def chance_columns(metric: str, value: float, chance: dict[str, float], chance_se: dict[str, float],
                   ceiling: float) -> dict[str, float]:
    """The metrics table's ``chance``, ``chance_se`` and ``of_ceiling`` cells of one row."""
    c = chance.get(metric, EXACT_CHANCE.get(metric, float("nan")))
    return {"chance": c, "chance_se": chance_se.get(metric, 0.0 if metric in EXACT_CHANCE else float("nan")),
            "of_ceiling": fraction_of_ceiling(value, c, ceiling, direction=_DIRECTIONS.get(metric, "higher"))}
