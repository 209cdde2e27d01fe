"""The benchmarks: one per track, its provenance as data (identifier, paper, citation, the
experiments it scores and the metrics it writes), declared by the track's package.

The core names no track: each :class:`Benchmark` is read from the track package's
metadata (:func:`psybench.tracks.track_package`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from psybench.registry import TRACKS
from psybench.tracks import track_metrics, track_package

__all__ = ["Benchmark", "benchmarks", "list_benchmarks"]


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """A benchmark track: the paper it comes from and the experiments it scores."""

    name: str
    track: str
    paper: str
    bibtex: str
    experiments: tuple[str, ...]
    metrics: tuple[str, ...]


def _track_benchmark(track: str) -> Benchmark:
    """A track's benchmark, from the metadata its package declares (:func:`psybench.tracks.track_package`).

    ``metrics`` are the names its score rows write (``median_rp_*`` for a family named by a prefix).
    """
    meta = track_package(track)
    return Benchmark(
        name=meta.BENCHMARK,
        track=track,
        paper=meta.PAPER,
        bibtex=meta.BIBTEX,
        experiments=tuple(meta.EXPERIMENTS),
        metrics=tuple(m.name + ("*" if m.prefix else "") for m in track_metrics(track)),
    )


def benchmarks() -> tuple[Benchmark, ...]:
    """One benchmark per track, in :data:`TRACKS` order."""
    return tuple(_track_benchmark(track) for track in TRACKS)


def list_benchmarks() -> list[dict[str, Any]]:
    """Rows ``{name, track, paper, experiments, metrics, bibtex}`` for the CLI and the report."""
    return [
        {
            "name": b.name,
            "track": b.track,
            "paper": b.paper,
            "experiments": ", ".join(b.experiments),
            "metrics": ", ".join(b.metrics),
            "bibtex": b.bibtex,
        }
        for b in benchmarks()
    ]
