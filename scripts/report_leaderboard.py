"""Snakemake script: the HTML leaderboard report (results/report/index.html) from the computed leaderboards.

Inputs:  pages (leaderboards.json; the leaderboard tables beside it), scores (the long score table:
         the IntPhys page's error rates per block and visibility), attention_table (optional:
         the attention table1.csv whose inter-observer ceiling is shown), attention_metrics (optional:
         the attention metrics.csv, shown with its chance and ceiling columns), gaze_counts (the attention
         gaze recordings' sample counts, shown on the attention page), motion_table1 and
         motion_generalisation (optional: the bio-inspired models' held-out verdicts).
Output:  report (directory).
Params:  results_root (the folder the scores' sources are relative to), synthetic (tracks whose
         data stand in for people), motion (bio-inspired models {name: algorithm} and criteria
         overrides).
"""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.motion.held_out import held_out_section  # noqa: E402
from psybench.report.site import render_site  # noqa: E402

inp, params = snakemake.input, snakemake.params  # noqa: F821
boards = render_site(
    inp.pages,
    snakemake.output.report,  # noqa: F821
    results_root=params.results_root,
    synthetic=list(params.synthetic),
    attention_table=inp.get("attention_table"),
    attention_metrics=inp.get("attention_metrics"),
    gaze_counts=list(inp.get("gaze_counts", [])),
    scores=inp.scores,
    # the motion track reads its own tables; the report only lays them out
    motion_held_out=held_out_section(inp.get("motion_table1"), inp.get("motion_generalisation"),
                                     **dict(params.motion)) if inp.get("motion_table1") else None,
    workers=snakemake.threads,  # noqa: F821  (figures drawn in parallel, the same PNGs)
)
print(f"rendered {len(boards)} leaderboard pages", file=sys.stderr)
