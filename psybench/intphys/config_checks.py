"""Checks of the IntPhys config that JSON Schema cannot express, run before any job.

Called by :func:`psybench.config_checks.check_cross_keys` through
:func:`psybench.tracks.config_check` when the run scores IntPhys; each failure is a
:class:`psybench.config.ConfigError` naming the key. (The tree's own layout is
checked when the models are resolved, :func:`psybench.config.prepare_workflow`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psybench.config_checks import config_error, project_file

__all__ = ["check_config"]


def check_config(config: Mapping[str, Any], models: Mapping[str, Any]) -> None:
    """The evaluation split is held out (not the training split); the ``conditions`` CSV and
    every ``external_answers`` file exist (Riochet et al. 2018, sec. 3: scores on held-out movies)."""
    section = config["intphys"]
    if section["eval_split"] == section["train_split"]:  # held out means held out
        raise config_error("intphys.eval_split", f"{section['eval_split']!r} is also intphys.train_split: the "
                           "next-frame predictor would be scored on the movies it was trained on")
    if section.get("conditions"):
        project_file("intphys.conditions", section["conditions"])
    for name, path in (section.get("external_answers") or {}).items():
        project_file(f"intphys.external_answers.{name}", path)
    _check_encoders(section, models.get("intphys") or {})


def _check_encoders(section: Mapping[str, Any], specs: Mapping[str, Any]) -> None:
    """A ``representation_surprise`` model names an encoder factory that imports."""
    from psybench.intphys.models.surprise import import_factory

    for i, entry in enumerate(section.get("models") or []):
        spec = specs.get(entry.get("name")) if isinstance(entry, Mapping) else None
        if spec is None or spec.algorithm.name != "representation_surprise":
            continue
        key = f"intphys.models[{i}].params.encoder"
        encoder = spec.params.get("encoder")
        if not encoder:
            raise config_error(key, "required: 'package.module:factory', a function returning the torch.nn.Module "
                               "that maps frames (b, 3, H, W) to features")
        try:
            import_factory(encoder, model=spec.name)
        except ValueError as exc:
            raise config_error(key, str(exc)) from None
