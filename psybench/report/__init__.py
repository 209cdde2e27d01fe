"""Report stage: the HTML leaderboard pages of a run, rendered, never computed.

* :mod:`psybench.report.site` renders the pages from the Jinja2 templates in
  ``report/templates/`` and the page data that ``aggregate_leaderboards`` wrote
  (:func:`psybench.aggregate.leaderboard.write_leaderboards`);
* :mod:`psybench.report.figures` draws their figures (matplotlib, Agg backend,
  deterministic).

Each track's own figures live in its package (``psybench.motion.figures``,
``psybench.attention.figures``).
"""
