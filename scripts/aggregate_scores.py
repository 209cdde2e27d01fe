"""Snakemake script: every track's result files -> results/aggregate/scores_long.csv + .parquet.

Named inputs (each optional; absent = track not configured):
  motion_table1      results/aggregate/motion_table1.csv
  motion_fits        results/fits/motion/{model}.csv (list)
  intphys_scores     results/intphys/{model}/scores.csv (list)
  attention_metrics  results/attention/metrics.csv
  attention_table1   results/attention/table1.csv
  scores             extra long-format score tables (list)
Output: table (results/aggregate/scores_long.csv; the .parquet is written beside it).
Params: attention_figure (source of Table 1 rows, or "").
"""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

from psybench.aggregate.collect import collect_to_table  # noqa: E402

inp = snakemake.input  # noqa: F821
params = snakemake.params  # noqa: F821


def _get(name, many=False):
    value = getattr(inp, name, None)
    if value is None:
        return [] if many else None
    if many:
        return [value] if isinstance(value, str) else list(value)
    return value if isinstance(value, str) else (list(value)[0] if len(value) else None)


paths = {}
if _get("motion_table1"):
    paths["motion"] = {"table1": _get("motion_table1"), "fits": _get("motion_fits", many=True)}
if _get("intphys_scores", many=True):
    paths["intphys"] = {"scores": _get("intphys_scores", many=True)}
if _get("attention_metrics") or _get("attention_table1"):
    paths["attention"] = {
        "metrics": _get("attention_metrics"),
        "table1": _get("attention_table1"),
        "table1_figure": getattr(params, "attention_figure", "") or None,
    }
if _get("scores", many=True):
    paths["scores"] = _get("scores", many=True)

long_df = collect_to_table(
    paths,
    snakemake.output.table,  # noqa: F821
    # results/aggregate/scores_long.csv -> results/ (the root the sources are relative to)
    results_root=str(Path(snakemake.output.table).parent.parent),  # noqa: F821
)
print(f"collected {len(long_df)} scores from tracks {sorted(set(long_df['track']))}", file=sys.stderr)
