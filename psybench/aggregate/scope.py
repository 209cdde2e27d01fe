"""Which configured leaderboards a run can fill: those whose track and model it runs.

A user's config file is laid over ``config/config.yaml`` (Snakemake's
``--configfile``); its leaderboards (``aggregate.leaderboards``) come along, e.g.
``tlapale_sweep``, the intra-technique comparison of ``tlapale_v1mt``'s parameter
sets. A run without that model, or without a leaderboard's track, has nothing to
put on it: the leaderboard is left out with a message naming it, instead of
failing the report job at the end of the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["applicable_leaderboards"]


def applicable_leaderboards(
    leaderboards: Sequence[Mapping[str, Any]],
    tracks: Sequence[str],
    models: Mapping[str, Sequence[str]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The leaderboards a run can fill, and a message per one left out.

    Parameters
    ----------
    leaderboards : sequence of mapping
        ``aggregate.leaderboards`` entries (``name``, optional ``track``, ``model``).
    tracks : sequence of str
        The run's tracks (``config["tracks"]``).
    models : mapping of str to sequence of str
        The model names each track runs.

    Returns
    -------
    kept : list of dict
        The entries whose ``track`` (if any) is run and whose ``model`` (if any)
        is one of the run's models (of that track, if it names one), in order.
    skipped : list of str
        One message per entry left out, naming its index, name and the reason.
    """
    kept, skipped = [], []
    for i, lb in enumerate(leaderboards):
        where = f"aggregate.leaderboards[{i}] ({lb.get('name')!r})"
        track, model = lb.get("track"), lb.get("model")
        run_models = sorted(models.get(track, ())) if track else sorted({m for ms in models.values() for m in ms})
        if track is not None and track not in tracks:
            skipped.append(f"{where} left out: its track {track!r} is not run (tracks: {list(tracks)})")
        elif model is not None and model not in run_models:
            skipped.append(f"{where} left out: its model {model!r} is not run (models: {run_models})")
        else:
            kept.append(dict(lb))
    return kept, skipped
