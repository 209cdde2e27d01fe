"""Report stage: the HTML leaderboard pages of a run, rendered, never computed.

* :mod:`psybench.report.site` renders the pages from the Jinja2 templates in
  ``report/templates/`` and the page data that ``aggregate_leaderboards`` wrote
  (:func:`psybench.aggregate.leaderboard.write_leaderboards`);
* :mod:`psybench.report.figures` draws their figures (matplotlib, Agg backend,
  deterministic);
* :mod:`psybench.report.paper_tables` lays out each track's paper table (motion and
  attention Table 1, IntPhys error rates) from the run's files, people's row included.

Each track's own figures live in its package (``psybench.motion.figures``,
``psybench.attention.figures``).
"""
