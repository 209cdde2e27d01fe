"""The generalisation runs of a workflow config: which stimuli each re-run renders, at which level.

Read while the Snakefile is parsed, so it imports only the stimulus set and the display
(no criteria, fits or stores): the planning of every run, including the no-op rerun,
pays for nothing else. The runs themselves are described in
:mod:`psybench.motion.generalisation`, which re-exports these names.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from psybench.motion.display import Display, scaled_display
from psybench.motion.stimuli.sets import _tag, stimulus_set

__all__ = ["NUISANCES", "baseline_level", "generalisation_variants"]

#: The nuisances of ``motion.generalisation``, each a key of its own.
NUISANCES: tuple[str, ...] = ("contrast", "speed_deg_s", "frames_per_s", "px_per_deg")

# the motion-section key whose speed each experiment uses, for the baseline of the speed nuisance
_SPEED_SECTION = {"diamonds": "diamonds", "dashed_bars": "bars", "barberpole": "barberpole",
                  "grating_size": "gratings"}


def baseline_level(config: Mapping[str, Any], nuisance: str, experiment: str) -> float:
    """The main run's level of ``nuisance`` for ``experiment`` (config validated, defaults filled)."""
    if nuisance == "contrast":
        return float(config["motion"]["contrast"])
    if nuisance in ("frames_per_s", "px_per_deg"):
        return float(config["display"][nuisance])
    if nuisance == "speed_deg_s":
        return float(config["motion"][_SPEED_SECTION[experiment]]["speed_deg_s"])
    raise ValueError(f"motion.generalisation: unknown nuisance {nuisance!r}; known {list(NUISANCES)}")


def generalisation_variants(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The generalisation runs of a (validated, defaults filled) workflow config.

    Parameters
    ----------
    config : mapping
        With ``display`` and ``motion`` (holding ``generalisation``).

    Returns
    -------
    dict
        ``{variant: {"nuisance", "level", "experiments", "display": display
        section, "stimuli": {name: spec}}}``; variant names ``{nuisance}_{level}``
        (``contrast_000p1``, ``speed_deg_s_020``, ``frames_per_s_200``). The
        stimuli are those of :func:`~psybench.motion.stimuli.stimulus_set` for the
        re-run experiments at ``generalisation.directions_deg``, with the nuisance
        replaced: ``motion.contrast``, every experiment's ``speed_deg_s``,
        ``display.frames_per_s``, or ``display.px_per_deg`` (a second display
        scale: the frame's ``width_px`` and ``height_px`` scale with it, so the
        field of view in degrees, and so what an observer sees, stays the
        same; :func:`~psybench.motion.display.scaled_display`). An experiment whose main run is at that level
        (the barber-pole's 5 deg/s) is not run again there, nor is a level equal to the
        main run's for every experiment: the baseline row comes from the main run.

    Raises
    ------
    ValueError
        A stimulus that does not fit the display at that level, naming the key
        ``motion.generalisation.<nuisance>.levels[i]``.
    """
    motion = config["motion"]
    gen = motion.get("generalisation") or {}
    out: dict[str, dict[str, Any]] = {}
    for nuisance in NUISANCES:
        section = gen.get(nuisance) or {}
        experiments = list(section.get("experiments") or [])
        for i, level in enumerate(section.get("levels") or []):
            level = float(level)
            # an experiment whose main run is at this level has its baseline row there already
            rerun = [e for e in experiments if baseline_level(config, nuisance, e) != level]
            if not rerun:
                continue
            cfg = {k: copy.deepcopy(v) for k, v in motion.items()
                   if k not in ("generalisation", "models", "criteria", "readout")}
            cfg["directions_deg"] = list(gen.get("directions_deg") or [0.0])
            if isinstance(cfg.get("diamonds"), Mapping):
                cfg["diamonds"] = {**cfg["diamonds"], "directions_deg": None}
            display = dict(config["display"])
            if nuisance == "contrast":
                cfg["contrast"] = level
            elif nuisance == "speed_deg_s":
                for key in ("diamonds", "bars", "barberpole", "gratings"):
                    cfg[key] = {**(cfg.get(key) or {}), "speed_deg_s": level}
                if (cfg.get("dashed_bars") or {}).get("speed_deg_s") is not None:
                    cfg["dashed_bars"] = {**cfg["dashed_bars"], "speed_deg_s": level}
            elif nuisance == "frames_per_s":
                display["frames_per_s"] = level
            else:
                display = scaled_display(display, level)
            where = f"motion.generalisation.{nuisance}.levels[{i}]"
            try:
                stimuli = stimulus_set(cfg, display=Display.from_config(display), experiments=rerun)
            except ValueError as exc:
                raise ValueError(f"{where} ({level:g}): {exc}") from None
            name = f"{nuisance}_{_tag(level, 3)}"
            out[name] = {"nuisance": nuisance, "level": level, "experiments": rerun,
                         "display": display, "stimuli": stimuli}
    return out
