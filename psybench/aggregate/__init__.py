"""Aggregate stage: one long score table, Pareto fronts and ranks (papers/001).

* :mod:`psybench.aggregate.table`: the tidy long table of every score
  (:data:`SCORE_COLUMNS`), its validation, and the pivot into error vectors.
* :mod:`psybench.aggregate.pareto`: (epsilon-)Pareto dominance, the Pareto-optimal
  set and iterated fronts (papers/001 Eq. 9-11, Sec. 3.3; tolerances: Sec. 5).
* :mod:`psybench.aggregate.ranks`: Middlebury-style average rank (the baseline
  papers/001 argues against) and ranks with statistical ties (Neilson & Yang 2008).

Importable without Snakemake; the workflow's aggregate rules call these functions.
"""

from psybench.aggregate.pareto import dominance_matrix, dominates, pareto_fronts, pareto_set, pareto_table
from psybench.aggregate.ranks import AverageRanks, average_ranks, ranks_with_ties
from psybench.aggregate.table import (
    KEY_COLUMNS,
    SCORE_COLUMNS,
    ScoreTableError,
    concat_scores,
    criterion_name,
    error_matrix,
    leaderboard,
    read_scores,
)

__all__ = [
    "dominates",
    "dominance_matrix",
    "pareto_set",
    "pareto_fronts",
    "pareto_table",
    "AverageRanks",
    "average_ranks",
    "ranks_with_ties",
    "SCORE_COLUMNS",
    "KEY_COLUMNS",
    "ScoreTableError",
    "read_scores",
    "concat_scores",
    "criterion_name",
    "error_matrix",
    "leaderboard",
]
