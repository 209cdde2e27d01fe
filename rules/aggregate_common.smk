# Aggregation: the constants, the report's code hash and every input and params function
# of rules/aggregate.smk (snakemake --lint wants no functions next to rules), from the
# config validated and filled with the schema's defaults in rules/common.smk.
from psybench.aggregate.scope import applicable_leaderboards
from psybench.provenance import PACKAGE_ROOT, code_hash, params_hash
from psybench.registry import TRACKS

# input and params functions

SCORE_ROW_TRACKS = list(TRACKS)  # every track writes its rows (rules/<track>.smk, <track>_score_rows)
# Leaderboards of the HTML report: configured, or overall + one per track.
# A configured leaderboard whose track or model this run lacks (a user's config laid over
# config/config.yaml keeps its tlapale_sweep) is left out with a warning naming it.
LEADERBOARDS, _SKIPPED = applicable_leaderboards(
    config["aggregate"]["leaderboards"],
    config["tracks"],
    {track: list(models) for track, models in MODELS.items()},
)
for _message in _SKIPPED:
    logger.warning(f"psybench: {_message}")
LEADERBOARDS = LEADERBOARDS or [{"name": "overall", "track": None}] + [
    {"name": t, "track": t} for t in config["tracks"]
]
LEADERBOARD_NAMES = [lb["name"] for lb in LEADERBOARDS]


def get_score_row_tables(wildcards):
    """Every configured track's score rows (Parquet: read back bit for bit)."""
    return [f"results/aggregate/scores_{t}.parquet" for t in SCORE_ROW_TRACKS if t in config["tracks"]]


def get_sample_tables(wildcards):
    """Per-item samples behind the tied ranks: IntPhys quadruplets."""
    return ["results/aggregate/samples_intphys.parquet"] if "intphys" in config["tracks"] else []


def get_report_code_hash():
    """The report's code and its page templates (not Python, so code_hash alone misses them)."""
    templates = sorted((PACKAGE_ROOT / "report" / "templates").glob("*"))
    code = code_hash(["psybench.aggregate.leaderboard", "psybench.report.site", "psybench.report.figures"])
    return f"{code}-{params_hash({p.name: p.read_text() for p in templates})}"
