"""What the quarantine moved aside and the workflow has still to rebuild.

Snakemake reruns a job when one of its outputs is missing *and a job that must run
needs it*: an intermediate moved aside by the quarantine
(:func:`psybench.io.integrity.repair_results`,
:func:`psybench.io.inputs.quarantine_changed_tree`) whose consumers' outputs are all
present is left missing, and ``snakemake all`` says "Nothing to be done". The workflow
therefore records every artifact it moves aside in ``<root>/.psybench-rebuild.json``,
as soon as it moves it (whatever the run's targets), and makes each recorded one that
is still missing an input of ``all`` (``get_rebuild_targets`` in ``rules/common.smk``):
its job runs, and every job downstream of it reruns because one of its inputs is made
by a job that runs. A recorded path found present again (rebuilt) leaves the record; one
moved aside by an earlier run that failed, was killed or asked for another target is
still asked for. A dry run moves nothing and writes no record: the damaged artifacts it
finds are passed to :func:`pending_rebuilds` as they are.

The record lives in the results folder (beside the results it describes, not in
``results/.damaged/``, which may be deleted once inspected), holds paths as the workflow
names its outputs (relative to the working directory), is written atomically, and
only by a process that may repair the results (:func:`psybench.io.planning.may_repair`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from psybench.io.atomic import atomic_output

__all__ = ["REBUILD_NAME", "rebuild_record", "read_rebuilds", "write_rebuilds", "record_moved", "pending_rebuilds"]

REBUILD_NAME = ".psybench-rebuild.json"
_FORMAT = 1


def rebuild_record(root: str | os.PathLike) -> Path:
    """The record of the results folder ``root``: ``<root>/.psybench-rebuild.json``."""
    return Path(root) / REBUILD_NAME


def read_rebuilds(root: str | os.PathLike) -> list[str]:
    """The recorded paths (none when there is no record).

    Raises
    ------
    ValueError
        The record is not what :func:`write_rebuilds` writes (the message names the file).
    """
    path = rebuild_record(root)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is unreadable ({exc}): delete it to rebuild nothing that was moved aside") from None
    if not (isinstance(data, dict) and data.get("format") == _FORMAT and isinstance(data.get("paths"), list)
            and all(isinstance(p, str) for p in data["paths"])):
        raise ValueError(f"{path} is not a psybench rebuild record (format {_FORMAT}, a list of paths)")
    return list(data["paths"])


def write_rebuilds(root: str | os.PathLike, paths: Iterable[str | os.PathLike]) -> None:
    """Record ``paths`` (sorted, each once), replacing the record; none: the record is removed."""
    path = rebuild_record(root)
    names = sorted({os.fspath(p) for p in paths})
    if not names:
        path.unlink(missing_ok=True)
        return
    if path.is_file() and read_rebuilds(root) == names:
        return
    with atomic_output(path) as tmp:
        Path(tmp).write_text(json.dumps({"format": _FORMAT, "paths": names}, indent=1) + "\n")


def record_moved(root: str | os.PathLike, paths: Iterable[str | os.PathLike]) -> None:
    """Add the artifacts just moved aside to the record (as soon as they are moved, whatever the run's targets)."""
    paths = [os.fspath(p) for p in paths]
    if paths:
        write_rebuilds(root, pending_rebuilds(root, paths))


def pending_rebuilds(root: str | os.PathLike, moved: Iterable[str | os.PathLike] = ()) -> list[str]:
    """The artifacts still to rebuild: those recorded or just ``moved``, that are missing now (sorted).

    Parameters
    ----------
    root : path-like
        The results folder holding the record.
    moved : iterable of path-like
        Artifacts this planning moved aside (they are missing) or, in a dry run, found
        damaged and would move (they are still present, and kept).
    """
    moved = {os.fspath(p) for p in moved}
    recorded = {p for p in read_rebuilds(root) if not os.path.lexists(p)}
    return sorted(recorded | moved)
