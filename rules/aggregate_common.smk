# Aggregation: the constants, the report's code hash and every input and params function
# of rules/aggregate.smk (snakemake --lint wants no functions next to rules), from the
# config validated and filled with the schema's defaults in rules/common.smk.
from psybench.aggregate.scope import applicable_leaderboards
from psybench.aggregate.labels import setting_names
from psybench.attention.models import row_algorithms
from psybench.motion.models import bio_inspired_models
from psybench.provenance import PACKAGE_ROOT
from psybench.registry import TRACKS
from psybench.tracks import track_package

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
# Readable entries of the long table: each configured model's algorithm (the motion sweep
# tlapale_v1mt_nofeedback runs tlapale_v1mt: one intra-technique family) and a name for each
# parameter hash (attention rows hash {"L": L}, psybench.attention.score_rows).
# A map-output model's rows ("<name> untuned map") belong to its algorithm too.
SCORE_ALGORITHMS = {
    m["name"]: m.get("algorithm", m["name"])
    for t in ("motion", "attention")
    if t in config["tracks"]
    for m in config[t]["models"]
}
if "attention" in config["tracks"]:
    SCORE_ALGORITHMS.update(row_algorithms(config, MODELS["attention"]))
SCORE_SETTINGS = setting_names(
    [
        {"L": int(L)}
        for m in config["attention"]["models"]
        # a map-output model has no L: its rows are scored untuned
        for L in (m.get("L", []) if isinstance(m.get("L", []), list) else [m["L"]])
    ]
    if "attention" in config["tracks"]
    else []
)
# Tracks whose data in this run stand in for people: the report's pages say so.
SYNTHETIC_TRACKS = [
    t
    for t, synthetic in (
        (
            "attention",
            any("observers" in m for m in config["attention"]["movies"].values()),
        ),
        ("intphys", bool(config["intphys"]["generate"])),
    )
    if t in config["tracks"] and synthetic
]


def get_report_human_inputs(wildcards):
    """The attention table whose inter-observer ceiling the report shows next to the models, the metrics
    table with its chance and ceiling columns, and the gaze recordings' sample counts."""
    if "attention" in config["tracks"]:
        return {
            "attention_table": "results/attention/table1.csv",
            "attention_metrics": "results/attention/metrics.csv",
            "gaze_counts": get_attention_gaze_counts(),
        }
    return {}


def get_report_motion_inputs(wildcards):
    """Motion Table 1 and the generalisation table: the bio-inspired models' held-out verdicts on the motion page."""
    if not MOTION_ON:
        return {}
    out = {"motion_table1": "results/aggregate/motion_table1.csv"}
    if MOTION_GENERALISATION:
        out["motion_generalisation"] = "results/aggregate/motion_generalisation.csv"
    return out


def get_report_motion_params(wildcards):
    """The bio-inspired motion models ({name: algorithm}) and the run's criteria overrides (bounds quoted)."""
    if not MOTION_ON:
        return {}
    return {
        "models": bio_inspired_models(MOTION_MODELS),
        "criteria": config["motion"]["criteria"],
    }


def get_score_row_tables(wildcards):
    """Every configured track's score rows (Parquet: read back bit for bit)."""
    return [f"results/aggregate/scores_{t}.parquet" for t in SCORE_ROW_TRACKS if t in config["tracks"]]


def get_sample_tables(wildcards):
    """Per-item samples behind the tied ranks: IntPhys quadruplets."""
    return ["results/aggregate/samples_intphys.parquet"] if "intphys" in config["tracks"] else []


def get_report_code_hash():
    """The report's code, the tracks' metadata it reads by name (titles, metric labels and units,
    psybench.tracks) and its page templates (not Python: no import reaches them)."""
    return get_code_hash(
        "report_leaderboard.py",
        modules=tuple(track_package(t).__name__ for t in TRACKS),
        files=tuple(sorted((PACKAGE_ROOT / "report" / "templates").glob("*"))),
    )
