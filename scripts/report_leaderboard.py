"""Snakemake script: the HTML leaderboard report (results/report/index.html) from the computed leaderboards.

Inputs:  pages (leaderboards.json; the leaderboard tables beside it).
Output:  report (directory).
Params:  results_root (the folder the scores' sources are relative to).
"""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.report.site import render_site  # noqa: E402

boards = render_site(
    snakemake.input.pages,  # noqa: F821
    snakemake.output.report,  # noqa: F821
    results_root=snakemake.params.results_root,  # noqa: F821
)
print(f"rendered {len(boards)} leaderboard pages", file=sys.stderr)
