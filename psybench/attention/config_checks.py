"""Checks of the attention config that JSON Schema cannot express, run before any job.

Called by :func:`psybench.config_checks.check_cross_keys` through
:func:`psybench.tracks.config_check` when the run scores attention; each failure is a
:class:`psybench.config.ConfigError` naming the key.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from psybench.attention.gaze.datasets import PREFIX, dataset_definition
from psybench.attention.stimuli import render_popout
from psybench.config_checks import check_param_value, config_error, project_file

__all__ = ["POPOUT_MAX_FRAMES", "check_config", "criterion_experiments"]

#: Longest rendered pop-out movie: 1e5 frames is 2.8 h at the paper's 10 frames/s.
POPOUT_MAX_FRAMES = 100_000


def check_config(config: Mapping[str, Any], models: Mapping[str, Any]) -> None:
    """At least one model; every movie's ``file`` and ``gaze`` files exist, its ``popout``
    keywords are those of :func:`psybench.attention.stimuli.render_popout`, its gaze comes
    from ``observers`` (synthetic, for a pop-out movie) or ``gaze`` (recordings)."""
    section = config["attention"]
    if not section.get("models"):
        raise config_error("attention.models", "lists no model; the attention track needs at least one (e.g. "
                           "{name: raw, algorithm: raw, L: [1]})")
    specs = models.get("attention") or {}
    kinds = [getattr(specs.get(m.get("name")), "kind", None) for m in section["models"]]
    if kinds and all(k == "map" for k in kinds):
        raise config_error("attention.models", "lists only map-output models (kind map, scored untuned); Table 1 "
                           "and the control scanpaths need at least one tuned model (e.g. "
                           "{name: raw, algorithm: raw, L: [1]})")
    defaults = {k: p.default for k, p in inspect.signature(render_popout).parameters.items() if k != "grid"}
    popout_keys = sorted(defaults)
    for movie, spec in (section.get("movies") or {}).items():
        key = f"attention.movies.{movie}"
        for kw, value in (spec.get("popout") or {}).items():
            if kw not in popout_keys:
                raise config_error(f"{key}.popout.{kw}", f"unknown pop-out keyword {kw!r}; known: {popout_keys}")
            check_param_value(f"{key}.popout.{kw}", "render_popout", value, defaults[kw])
        n_frames = (spec.get("popout") or {}).get("n_frames", 1)
        if not 1 <= n_frames <= POPOUT_MAX_FRAMES:
            raise config_error(f"{key}.popout.n_frames", f"{n_frames} is outside [1, {POPOUT_MAX_FRAMES}]")
        if "file" in spec:
            project_file(f"{key}.file", spec["file"])
        gaze = spec.get("gaze")
        files = gaze if isinstance(gaze, list) else [gaze] if gaze is not None else []
        for i, f in enumerate(files):
            project_file(f"{key}.gaze" + (f"[{i}]" if isinstance(gaze, list) else ""), str(f))
        if gaze is not None and not files:
            raise config_error(f"{key}.gaze", "lists no file")
        fmt = str(spec.get("gaze_format", "auto"))
        if fmt.startswith(PREFIX):
            try:
                dataset_definition(fmt[len(PREFIX):])
            except ValueError as exc:
                raise config_error(f"{key}.gaze_format", str(exc)) from None
        if "observers" not in spec and gaze is None:
            raise config_error(key, "needs 'observers' (synthetic, for a popout) or 'gaze' (recording files)")
        if "observers" in spec and "popout" not in spec:
            raise config_error(f"{key}.observers",
                               "synthetic observers need a rendered 'popout' movie (a planted target)")


def criterion_experiments(config: Mapping[str, Any]) -> list[str] | None:
    """The experiments an attention criterion may name: its ``<train>_on_<test>`` pairs (None when not run)."""
    if "attention" not in (config.get("tracks") or []):
        return None
    return [f"{tr}_on_{te}" for tr, te in config["attention"].get("pairs") or []]
