"""Which configured leaderboards a run can fill: those whose track and model it runs.

A user's config file is laid over ``config/config.yaml`` (Snakemake's
``--configfile``); its leaderboards (``aggregate.leaderboards``) come along, e.g.
``tlapale_sweep``, the intra-technique comparison of ``tlapale_v1mt``'s parameter
sets. A run without that model, or without a leaderboard's track, has nothing to
put on it: the leaderboard is left out with a message naming it, instead of
failing the report job at the end of the run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["applicable_leaderboards", "check_spec", "check_leaderboards", "LeaderboardSpecError", "LEADERBOARD_KEYS"]

#: Keys of one leaderboard spec (``name`` required).
LEADERBOARD_KEYS = ("name", "title", "track", "criteria", "model", "epsilon", "missing", "projections")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class LeaderboardSpecError(ValueError):
    """A leaderboard spec no run could fill; ``key`` is its place (``leaderboards[1].criteria[0]``)."""

    def __init__(self, key: str, message: str, *, text: str | None = None):
        super().__init__(text or f"{key}: {message}")
        self.key = key
        self.detail = message


def check_spec(spec: Mapping[str, Any], i: int, *, where: str = "leaderboards") -> dict[str, Any]:
    """One leaderboard spec with every key of :data:`LEADERBOARD_KEYS` (defaults filled).

    Raises
    ------
    LeaderboardSpecError
        Not a mapping, an unknown key, or a name that cannot name files.
    """
    if not isinstance(spec, Mapping):
        raise LeaderboardSpecError(f"{where}[{i}]", f"must be a mapping with keys {list(LEADERBOARD_KEYS)}")
    unknown = sorted(set(spec) - set(LEADERBOARD_KEYS))
    if unknown:
        detail = f"has unknown key(s) {unknown}; known: {list(LEADERBOARD_KEYS)}"
        raise LeaderboardSpecError(f"{where}[{i}]", detail, text=f"{where}[{i}] {detail}")
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name) or name == "index":
        raise LeaderboardSpecError(
            f"{where}[{i}].name", f"{name!r} must be letters, digits, '_' or '-' (it names files), not 'index'"
        )
    out = {"title": None, "track": None, "criteria": None, "model": None, "epsilon": None, "missing": "ignore",
           "projections": None, **dict(spec)}
    if out["epsilon"] == {}:
        out["epsilon"] = None
    return out


def check_leaderboards(
    leaderboards: Sequence[Mapping[str, Any]],
    tracks: Sequence[str],
    *,
    experiments: Mapping[str, Sequence[str]] | None = None,
    inherited: Sequence[bool] = (),
    where: str = "leaderboards",
) -> list[dict[str, Any]]:
    """Check the leaderboard specs of a run before anything is computed; return them checked.

    Every spec must pass :func:`check_spec`; names are unique; ``track`` is one of
    :data:`psybench.registry.TRACKS` and run; ``criteria`` is null or lists at least one
    criterion, each naming a score the run writes
    (:func:`psybench.aggregate.labels.criterion_problem`) of the spec's own track;
    ``projections`` pair two of its criteria. A spec marked ``inherited`` (laid over
    from the shipped config unchanged) may name a track that is not run: it is left
    out later (:func:`applicable_leaderboards`), as are its criteria of that track.

    Raises
    ------
    LeaderboardSpecError
        The first problem, its key relative to ``where``.
    """
    from psybench.aggregate.labels import criterion_problem
    from psybench.registry import TRACKS

    specs = [check_spec(s, i, where=where) for i, s in enumerate(leaderboards)]
    first: dict[str, int] = {}
    for i, spec in enumerate(specs):
        key = f"{where}[{i}]"
        if spec["name"] in first:
            raise LeaderboardSpecError(f"{key}.name", f"leaderboard name {spec['name']!r} is used twice (also "
                                       f"{where}[{first[spec['name']]}]); it names the leaderboard's files")
        first[spec["name"]] = i
        track = spec["track"]
        if track is not None and track not in TRACKS:
            raise LeaderboardSpecError(f"{key}.track", f"{track!r} is not a track; tracks: {list(TRACKS)}")
        skip = i < len(inherited) and inherited[i]
        if track is not None and track not in tracks and not skip:
            raise LeaderboardSpecError(f"{key}.track", f"track {track!r} is not run (tracks: {list(tracks)})")
        criteria = spec["criteria"]
        if criteria is not None and not criteria:
            raise LeaderboardSpecError(f"{key}.criteria", "lists no criterion; leave it out (or null) to rank on "
                                       "every criterion of the leaderboard's scope")
        for j, criterion in enumerate(criteria or []):
            own = criterion.split("/")[0]
            if track is not None and own != track:
                raise LeaderboardSpecError(f"{key}.criteria[{j}]", f"{criterion!r} belongs to track {own!r}, not to "
                                           f"this leaderboard's track {track!r}")
            problem = criterion_problem(criterion, tracks=TRACKS if skip else tracks, experiments=experiments)
            if problem:
                raise LeaderboardSpecError(f"{key}.criteria[{j}]", f"{criterion!r} {problem}")
        for j, pair in enumerate(spec["projections"] or []):
            if criteria is not None and any(c not in criteria for c in pair):
                raise LeaderboardSpecError(f"{key}.projections[{j}]", f"{pair!r} must name two of its criteria "
                                           f"{list(criteria)}")
    return specs


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
