"""Intuitive-physics track: IntPhys-format data, ingestion, plausibility models, metrics.

IntPhys (Riochet et al. 2018, "IntPhys: a framework and benchmark for visual
intuitive physics reasoning", IntPhys V1.0) asks a system for a plausibility
score P(x) in [0, 1] per movie and scores it on quadruplets of two possible and
two impossible movies with the relative (L_R) and absolute (L_A) error rates.

The chain: generate (or read) a tree -> ingest it in shards -> run each model on
an observation of each shard (frames, depth, masks, movie ids; never the labels)
-> join the labels and score.

Modules
-------
generate
    Deterministic generator of IntPhys-format trees (PNG scene/depth/masks + status.json).
ingest
    Real or generated IntPhys trees -> sharded Zarr stores + metadata table.
shards
    How many movies and shards a split has (planning the workflow's jobs).
models
    The observation a model receives, and the plausibility models (controls,
    flow surprise, streamed next-frame predictor, object-tracking permanence)
    registered in :mod:`psybench.registry` (track ``"intphys"``).
metrics
    L_R, L_R_strict, L_A with bootstrap intervals.
answer
    The official answer.txt: writing, reading and validating it.
scores
    One model's scores: labels joined to its predictions (or answer.txt) only here.
"""

from psybench.intphys.ingest.layout import IntPhysFormatError
from psybench.tracks import Metric

#: How pages name the track.
TITLE = "IntPhys"
#: Identifier of the benchmark, and the paper it comes from (Brain-Score style provenance).
BENCHMARK = "intphys_v1"
PAPER = (
    "Riochet, Castro, Bernard, Lerer, Fergus, Izard & Dupoux (2018) IntPhys: a framework and "
    "benchmark for visual intuitive physics reasoning (IntPhys V1.0)"
)
BIBTEX = (
    "@article{riochet2018intphys, title={IntPhys: A framework and benchmark for visual "
    "intuitive physics reasoning}, author={Riochet, R. and Castro, M. Y. and Bernard, M. and "
    "Lerer, A. and Fergus, R. and Izard, V. and Dupoux, E.}, journal={arXiv:1803.07616}, year={2018}}"
)
#: The three blocks of the dev/test sets (object permanence, shape and continuity constancy).
EXPERIMENTS: tuple[str, ...] = ("O1", "O2", "O3")
#: The error rates of sec. 3.2 (lower is better), written per factor cell (psybench.intphys.score_rows).
METRICS: tuple[Metric, ...] = (
    Metric("L_R", "relative error rate L_R", "fraction", "lower"),
    Metric("L_R_strict", "strict relative error rate", "fraction", "lower"),
    Metric("L_A", "absolute error rate L_A = 1 - AUC", "fraction", "lower"),
)


__all__ = ["TITLE", "BENCHMARK", "PAPER", "BIBTEX", "EXPERIMENTS", "METRICS", "IntPhysFormatError"]
