"""Checks of the motion config that JSON Schema cannot express, run before any job.

Called by :func:`psybench.config_checks.check_cross_keys` through
:func:`psybench.tracks.config_check` when the run scores motion; each failure is a
:class:`psybench.config.ConfigError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from psybench.config_checks import config_error, project_file
from psybench.motion import EXPERIMENTS
from psybench.motion.literature import LiteratureError, load_literature

__all__ = ["check_config", "criterion_experiments"]


def check_config(config: Mapping[str, Any], models: Mapping[str, Any]) -> None:
    """The motion experiments' own needs and the literature file.

    * a barber-pole aspect ratio > 1: the control square alone has no long axis
      (Masson et al. 2000);
    * ``literature``: a file inside the project that parses
      (:func:`psybench.motion.literature.load_literature`).
    """
    motion = config.get("motion") or {}
    ratios = (motion.get("barberpole") or {}).get("aspect_ratios") or [2]
    if max(ratios) <= 1:
        raise config_error("motion.barberpole.aspect_ratios",
                           f"{ratios} has no ratio > 1 (no aperture with a long axis)")
    _check_literature(config.get("literature"))


def criterion_experiments(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The experiments a motion criterion may name: those of RR-7317 Table 1."""
    return EXPERIMENTS


def _check_literature(value: str | None) -> None:
    if not value:
        return
    project = Path.cwd().resolve()
    resolved = (project / Path(value)).resolve()
    if resolved != project and project not in resolved.parents:
        raise config_error("literature", f"{value} is outside the project ({project}); copy it into the project")
    project_file("literature", value)
    try:
        load_literature(resolved)
    except LiteratureError as exc:
        raise config_error("literature", str(exc)) from None
