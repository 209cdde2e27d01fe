"""When the workflow may repair its results before planning: only a real run that will get the lock.

:func:`psybench.io.quarantine_damaged` moves damaged stores and tables aside while
the Snakefile is parsed, before Snakemake builds its DAG and takes its lock on the
working directory. Parsing happens for many commands that must not touch results
(a dry run, ``--unlock``, ``--summary``, ``--touch`` ...) and for a second run that
Snakemake will refuse because another one holds the lock, and is working in the
same directory. :func:`may_repair` tells these apart from the real run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["may_repair", "dry_run", "READ_ONLY_FLAGS"]

# Snakemake command-line options that plan, report or edit metadata but run no job
# (`snakemake --help`, Snakemake 9). Their short forms: -n (dry run), -t (touch),
# -S / -D (summaries).
READ_ONLY_FLAGS = frozenset({
    "--dry-run", "--dryrun", "--unlock", "--touch", "--summary", "--detailed-summary", "--list-rules", "--list",
    "--list-target-rules", "--lt", "--dag", "--rulegraph", "--filegraph", "--d3dag", "--lint", "--list-changes",
    "--lc", "--list-code-changes", "--list-params-changes", "--list-input-changes", "--cleanup-metadata",
    "--cm", "--delete-all-output", "--delete-temp-output", "--archive", "--containerize", "--export-cwl",
    "--print-compilation", "--generate-unit-tests", "--report", "--list-untracked", "--lu", "--show-failed-logs-only",
})
_READ_ONLY_SHORT = frozenset("ntSD")
_DRY_RUN = frozenset({"--dry-run", "--dryrun", "-n"})
# short options that take a value glued to them (-j2, -c1): the rest of the word is the value
_SHORT_WITH_VALUE = frozenset("jcsdCT")


def _read_only(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if arg == "--":
            break
        name = arg.split("=", 1)[0]
        if name in READ_ONLY_FLAGS:
            return name
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            for ch in arg[1:]:
                if ch in _READ_ONLY_SHORT:
                    return f"-{ch}"
                if ch in _SHORT_WITH_VALUE or not ch.isalpha():
                    break
    return None


def may_repair(workdir: str | os.PathLike, argv: Sequence[str], *, main_process: bool = True) -> tuple[bool, str]:
    """Whether this Snakemake invocation may move damaged results aside, and if not why.

    Parameters
    ----------
    workdir : path-like
        The working directory (holding ``.snakemake/``).
    argv : sequence of str
        The command line (without the program name).
    main_process : bool
        ``workflow.is_main_process``: false inside a cluster or subprocess job,
        which parses the Snakefile again while the main run holds the lock.

    Returns
    -------
    (bool, str)
        ``(True, "")``, or ``(False, reason)``.
    """
    if not main_process:
        return False, "a job of a running workflow"
    flag = _read_only(argv)
    if flag:
        return False, f"{flag} runs no job"
    locks = Path(workdir) / ".snakemake" / "locks"
    if locks.is_dir() and any(locks.iterdir()):
        return False, f"{locks} is held: another run works here (or was killed: snakemake --unlock)"
    return True, ""


def dry_run(argv: Sequence[str], *, main_process: bool = True) -> bool:
    """Whether this Snakemake invocation is a dry run (``-n``, ``--dry-run``), which moves nothing.

    Its planning still finds the damaged artifacts (without moving them or writing any
    record) and asks for their rebuild, so that it lists the jobs the real run will run.
    """
    return main_process and _read_only(argv) in _DRY_RUN
