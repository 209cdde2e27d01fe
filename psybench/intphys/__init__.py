"""Intuitive-physics track: IntPhys-format data, ingestion, plausibility models, metrics.

IntPhys (papers/003; facts in reference/intphys.md) asks a system for a
plausibility score P(x) in [0, 1] per movie and scores it on quadruplets of two
possible and two impossible movies with the relative (L_R) and absolute (L_A)
error rates.

Modules
-------
generate
    Deterministic generator of IntPhys-format trees (PNG scene/depth/masks + status.json).
ingest
    Real or generated IntPhys trees -> sharded Zarr stores + metadata table.
models
    Plausibility models (controls, flow surprise, streamed next-frame predictor,
    object-tracking permanence).
metrics
    L_R, L_R_strict, L_A with bootstrap intervals; answer.txt reading and writing.
"""

from psybench.intphys.ingest import IntPhysFormatError

__all__ = ["IntPhysFormatError"]
