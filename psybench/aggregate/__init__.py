"""Aggregate stage: one long score table, Pareto fronts and ranks.

The evaluation model is Cabezas & Trujillo (2011), A non-linear quantitative
evaluation approach for disparity estimation, VISAPP: error vectors over
incommensurable criteria compared by Pareto dominance, next to Middlebury's average
rank.  One module per job:

* :mod:`psybench.aggregate.table`: the tidy long table of every score
  (:data:`SCORE_COLUMNS`), its validation, the one writer every track's score rows
  and their concatenation go through, and the pivot into error vectors.
* :mod:`psybench.aggregate.cells`: reading the cells of a track's result table
  (used by each track's ``score_rows`` module; aggregation imports no track code).
* :mod:`psybench.aggregate.criteria`: directions (lower/higher is better) and
  tolerances of criteria, defined once.
* :mod:`psybench.aggregate.pareto`: (epsilon-)Pareto dominance, the Pareto-optimal
  set and iterated fronts (sec. 3.1 eq. 9-11, sec. 3.3; tolerances: sec. 5).
* :mod:`psybench.aggregate.ranks`: Middlebury-style average rank (the baseline the
  paper argues against, sec. 1) and ranks with statistical ties (Neilson & Yang 2008).
* :mod:`psybench.aggregate.leaderboard`: the configured leaderboards, computed and
  written for the report; the ``psybench leaderboard`` CLI ranks with it too, on the
  report's criteria, so both give the same ranks.
* :mod:`psybench.aggregate.overall`: the cross-track view as one front per track
  (tracks share no criterion).
* :mod:`psybench.aggregate.labels`: what people read: criterion labels with units,
  readable entry names (``pyramid L=1``), the default (headline) criteria.

Importable without Snakemake; the workflow's aggregate rules call these functions.
The names below are loaded on first use (:mod:`psybench._lazy`): the
Snakefile imports :mod:`~psybench.aggregate.scope` and :mod:`~psybench.aggregate.labels`
on every run, and must not pay for SciPy's statistics (``ranks``) and pandas there.
"""

from psybench._lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["dominance_matrix", "dominates", "pareto_fronts", "pareto_set", "pareto_table"],
                    "psybench.aggregate.pareto"),
    **dict.fromkeys(["AverageRanks", "average_ranks", "ranks_with_ties"], "psybench.aggregate.ranks"),
    **dict.fromkeys(["KEY_COLUMNS", "SCORE_COLUMNS", "ScoreTableError", "concat_scores", "criterion_name",
                     "error_matrix", "leaderboard", "read_scores", "write_scores"], "psybench.aggregate.table"),
}

__all__ = [
    "dominates", "dominance_matrix", "pareto_set", "pareto_fronts", "pareto_table",
    "AverageRanks", "average_ranks", "ranks_with_ties",
    "SCORE_COLUMNS", "KEY_COLUMNS", "ScoreTableError", "read_scores", "concat_scores", "write_scores",
    "criterion_name", "error_matrix", "leaderboard",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
