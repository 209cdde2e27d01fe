"""What a criterion is compared by: its direction (lower or higher is better) and its tolerance.

Defined once here for the long score table (``direction`` column "lower"/"higher"),
the dominance maths of :mod:`psybench.aggregate.pareto` ("min"/"max", with
"lower"/"higher" accepted as synonyms) and the ranks of
:mod:`psybench.aggregate.ranks`.  Tolerances are the epsilon of epsilon-dominance,
the "tolerances in regard to the comparison of error value vectors" that Cabezas &
Trujillo (2011), A non-linear quantitative evaluation approach for disparity
estimation, VISAPP, sec. 5 leave for future work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "DIRECTION_ALIASES",
    "TABLE_DIRECTIONS",
    "MISSING_POLICIES",
    "criterion_label",
    "normalize_directions",
    "normalize_epsilon",
    "check_missing",
]

#: Every accepted spelling of a direction -> "min" (lower is better) or "max".
DIRECTION_ALIASES = {"min": "min", "lower": "min", "max": "max", "higher": "max"}
#: The long score table's ``direction`` values -> the dominance maths' names.
TABLE_DIRECTIONS = {"lower": "min", "higher": "max"}
#: How missing scores are treated when entries are compared.
MISSING_POLICIES = ("raise", "ignore")


def criterion_label(j: int, names: Sequence[str] | None) -> str:
    """How error messages name criterion ``j``: by name when names are given."""
    return f"criterion {names[j]!r}" if names is not None else f"criterion {j}"


def normalize_directions(
    directions: str | Sequence[str] | None, m: int, *, names: Sequence[str] | None = None
) -> np.ndarray:
    """Validate per-criterion directions and return a boolean "higher is better" mask.

    Parameters
    ----------
    directions : None, str or sequence of str, length m
        ``"min"``/``"lower"`` (lower is better) or ``"max"``/``"higher"``; one string
        applies to every criterion; None means all ``"min"``.
    m : int
        Number of criteria.
    names : sequence of str, optional
        Criterion names used in error messages.

    Returns
    -------
    is_max : ndarray of bool, shape (m,)
    """
    if directions is None:
        return np.zeros(m, dtype=bool)
    if isinstance(directions, str):
        directions = [directions] * m
    directions = list(directions)
    if len(directions) != m:
        raise ValueError(f"directions has {len(directions)} entries but there are {m} criteria")
    out = np.zeros(m, dtype=bool)
    for j, d in enumerate(directions):
        key = d.lower() if isinstance(d, str) else d
        if key not in DIRECTION_ALIASES:
            raise ValueError(
                f"direction {d!r} of {criterion_label(j, names)} is not one of "
                f"{sorted(DIRECTION_ALIASES)}"
            )
        out[j] = DIRECTION_ALIASES[key] == "max"
    return out


def normalize_epsilon(epsilon: Any, m: int, *, names: Sequence[str] | None = None) -> np.ndarray:
    """Per-criterion tolerances ``eps_i >= 0`` as a float array of shape (m,); None = all 0."""
    if epsilon is None:
        return np.zeros(m)
    eps = np.asarray(epsilon, dtype=float)
    if eps.ndim == 0:
        eps = np.full(m, float(eps))
    if eps.shape != (m,):
        raise ValueError(f"epsilon has shape {eps.shape} but there are {m} criteria (need a scalar or shape ({m},))")
    for j in range(m):
        if not np.isfinite(eps[j]) or eps[j] < 0:
            raise ValueError(f"epsilon of {criterion_label(j, names)} is {eps[j]!r}; it must be finite and >= 0")
    return eps


def check_missing(missing: str) -> None:
    """Raise unless ``missing`` is one of :data:`MISSING_POLICIES`."""
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} is not one of {MISSING_POLICIES}")
