"""The run's motion stimulus set from the ``motion`` config section, and the stimulus names.

Each stimulus is named for Snakemake (``[a-z0-9_]+``, e.g. ``diamond_cw_dir090``)
and described by ``{"family", "experiment", "params"}`` with ``params`` the keyword
arguments of its family's renderer; the name is a label only (the scores read the
parameters from the stimulus attributes, never from the name).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli.diamonds import diamond_geometry
from psybench.motion.stimuli.families import FAMILIES
from psybench.motion.stimuli.geometry import (
    _check_fits,
    _n_frames,
    _rect_half_extent,
    _trajectory,
    _unit,
)

__all__ = ["stimulus_set"]


#: Keys of the motion section that belong to later stages (not read here).
_OTHER_STAGE_KEYS = ("readout", "criteria", "models", "generalisation")


def _tag(value: float, width: int) -> str:
    """Zero-padded name fragment: 4 -> '04', 2.5 -> '02p5' (names match [a-z0-9_]+)."""
    if float(value).is_integer():
        return f"{int(value):0{width}d}"
    whole, frac = f"{value:.6f}".rstrip("0").split(".")
    return f"{int(whole):0{width}d}p{frac}"


def _validated_section(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The ``motion`` section checked against config/schema.yaml, its defaults filled.

    The schema holds every value constraint and default of the stimulus keys, so
    a library user's partial section is checked exactly as the workflow's config
    is; keys of later stages are left out (they are not this stage's).
    """
    from psybench.config import check_schema

    if "motion" in cfg and isinstance(cfg["motion"], Mapping):
        cfg = cfg["motion"]
    if not isinstance(cfg, Mapping):
        raise ValueError(f"motion must be a mapping, got {cfg!r}")
    section = copy.deepcopy({k: v for k, v in cfg.items() if k not in _OTHER_STAGE_KEYS})
    return check_schema({"tracks": ["motion"], "motion": section})["motion"]


def _dir_suffix(direction: float) -> str:
    """Name suffix of a motion direction: '' at 0 deg (the names of earlier runs), else ``_dirDDD``."""
    return "" if direction == 0.0 else f"_dir{_tag(direction, 3)}"


def stimulus_set(
    cfg: Mapping[str, Any], *, display: Display | None = None, experiments: Sequence[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The run's motion stimuli, ``{name: {"family", "experiment", "params"}}``, from config.

    Parameters
    ----------
    cfg : mapping
        The ``motion`` config section (or a whole config holding one); it is
        validated against config/schema.yaml and missing keys take the schema's
        defaults. Keys of later stages (``readout``, ``criteria``, ``models``,
        ``generalisation``) are ignored.
    display : Display, optional
        When given, every stimulus is checked to fit the display for its whole
        duration (cheaply, without rendering), so a bad size fails before any job.

    Returns
    -------
    dict
        Ordered diamonds, bars, dashed bars, barber-poles, gratings, each at every
        motion direction of ``motion.directions_deg`` (the nuisance directions:
        a model must pass an experiment at each of them). Names (Snakemake
        wildcards, ``[a-z0-9_]+``): ``diamond_{cw,ccw}_dir{DDD}``, ``bar_len{LL}``,
        ``dashed_n{NN}``, ``barberpole_ar{A}``, ``grating_d{DD}`` at 0 deg, with
        ``_dir{DDD}`` appended at any other direction (zero-padded; a fractional
        value is written with ``p`` for the point, e.g. ``bar_len02p5``).
        ``params`` are the keyword arguments of the family's renderer (JSON types).
        At direction ``d`` the bars, dashed bars and gratings move along ``d``;
        the barber-pole's whole configuration is rotated by ``d``
        (``aperture_orientation_deg = d``, the grating drifting at
        ``d + grating_orientation_deg``); the diamonds form a CW/CCW pair at each
        ``d`` (``motion.diamonds.directions_deg``, when given, replaces the
        diamonds' directions).

    Raises
    ------
    ValueError
        Naming the config key path: a value the schema rejects
        (:class:`psybench.config.ConfigError`, e.g. ``config key
        motion.gratings.diameters_deg[2]: -4 is less than or equal to the minimum
        of 0``), or what the schema cannot express: diamonds whose interior angle
        cannot give their vector-average bias, a grating edge wider than its
        radius, two keys making the same stimulus, a stimulus leaving the display.
    """
    cfg = _validated_section(cfg)
    keep = set(experiments) if experiments is not None else None
    directions = _directions(cfg["directions_deg"], "motion.directions_deg")
    common = {"contrast": float(cfg["contrast"]), "duration_ms": float(cfg["duration_ms"])}
    out: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}

    def add(name: str, family: str, params: dict[str, Any], key: str, at: str = "") -> None:
        if name in out:
            raise ValueError(f"{key} duplicates stimulus {name!r} (already made by {where[name]})"
                             + (f" at {at}" if at else ""))
        where[name] = key
        if keep is not None and FAMILIES[family][1] not in keep:
            return
        out[name] = {"family": family, "experiment": FAMILIES[family][1], "params": {**params, **common}}

    # diamonds
    d = cfg["diamonds"]
    p = "motion.diamonds"
    dia = {k: float(d[k]) for k in ("speed_deg_s", "size_deg", "line_width_deg", "interior_angle_deg", "va_bias_deg")}
    if math.sin(math.radians(dia["va_bias_deg"])) > math.cos(math.radians(dia["interior_angle_deg"])) + 1e-12:
        raise ValueError(
            f"{p}.interior_angle_deg must be <= 90 - va_bias_deg = {90 - dia['va_bias_deg']:g} "
            f"to reach the vector-average bias, got {dia['interior_angle_deg']:g}"
        )
    if d.get("directions_deg") is not None:
        dia_dirs = _directions(d["directions_deg"], f"{p}.directions_deg")
    else:
        dia_dirs = directions
    for hand in ("cw", "ccw"):
        for direction, key in dia_dirs:
            add(f"diamond_{hand}_dir{_tag(direction, 3)}", "diamond",
                {"handedness": hand, "direction_deg": direction, **dia}, key)

    # bars
    b = cfg["bars"]
    p = "motion.bars"
    bar = {
        "width_deg": float(b["width_deg"]),
        "tilt_deg": float(b["tilt_deg"]),
        "direction_deg": 0.0,  # replaced by each direction (the key keeps its place: 0-deg specs unchanged)
        "speed_deg_s": float(b["speed_deg_s"]),
    }
    for direction, dkey in directions:
        for i, length in enumerate(b["lengths_deg"]):
            length = float(length)
            add(f"bar_len{_tag(length, 2)}{_dir_suffix(direction)}", "bar",
                {"length_deg": length, **bar, "direction_deg": direction}, f"{p}.lengths_deg[{i}]", dkey)

    # dashed bars (same motion as the bars unless given)
    s = cfg["dashed_bars"]
    p = "motion.dashed_bars"
    dashed = {
        "length_deg": float(s["length_deg"]),
        "gap_fraction": float(s["gap_fraction"]),
        "width_deg": float(s.get("width_deg", bar["width_deg"])),
        "tilt_deg": float(s.get("tilt_deg", bar["tilt_deg"])),
        "direction_deg": 0.0,
        "speed_deg_s": float(s.get("speed_deg_s", bar["speed_deg_s"])),
    }
    for direction, dkey in directions:
        for i, n in enumerate(s["n_tiles"]):
            n = int(n)
            add(f"dashed_n{_tag(n, 2)}{_dir_suffix(direction)}", "dashed_bar",
                {"n_tiles": n, **dashed, "direction_deg": direction}, f"{p}.n_tiles[{i}]", dkey)

    # barber-poles
    bp = cfg["barberpole"]
    p = "motion.barberpole"
    pole = {k: float(bp[k]) for k in ("short_side_deg", "sf_cpd", "speed_deg_s", "grating_orientation_deg")}
    for direction, dkey in directions:
        for i, ar in enumerate(bp["aspect_ratios"]):
            ar = float(ar)
            add(f"barberpole_ar{_tag(ar, 1)}{_dir_suffix(direction)}", "barberpole",
                {"aspect_ratio": ar, **pole, **({"aperture_orientation_deg": direction} if direction else {})},
                f"{p}.aspect_ratios[{i}]", dkey)

    # gratings
    g = cfg["gratings"]
    p = "motion.gratings"
    grat = {
        "sf_cpd": float(g["sf_cpd"]),
        "speed_deg_s": float(g["speed_deg_s"]),
        "direction_deg": 0.0,
        "edge_deg": float(g["edge_deg"]),
    }
    for i, dia_deg in enumerate(g["diameters_deg"]):
        if grat["edge_deg"] > float(dia_deg) / 2.0:
            raise ValueError(f"{p}.edge_deg ({grat['edge_deg']:g}) exceeds the radius of diameters_deg[{i}]")
    for direction, dkey in directions:
        for i, dia_deg in enumerate(g["diameters_deg"]):
            dia_deg = float(dia_deg)
            add(f"grating_d{_tag(dia_deg, 2)}{_dir_suffix(direction)}", "grating",
                {"diameter_deg": dia_deg, **grat, "direction_deg": direction}, f"{p}.diameters_deg[{i}]", dkey)

    if display is not None:
        for name, spec in out.items():
            try:
                _check_spec_fits(display, spec)
            except ValueError as exc:
                raise ValueError(f"motion stimulus {name} ({where[name]}): {exc}") from None
    return out


def _directions(values: Sequence[float], key: str) -> list[tuple[float, str]]:
    """Directions in [0, 360) with their config keys; a repeated direction (mod 360) is an error."""
    out: list[tuple[float, str]] = []
    for i, value in enumerate(values):
        direction = float(value) % 360.0
        if any(direction == d for d, _ in out):
            raise ValueError(f"{key}[{i}] duplicates direction {direction:g} deg (mod 360)")
        out.append((direction, f"{key}[{i}]"))
    return out


def _check_spec_fits(display: Display, spec: Mapping[str, Any]) -> None:
    """Fit check of one stimulus spec against ``display`` without rendering it."""
    fam, prm = spec["family"], dict(spec["params"])
    n = _n_frames(display, prm["duration_ms"])
    if fam == "diamond":
        geom = diamond_geometry(handedness=prm["handedness"], direction_deg=prm["direction_deg"],
                                size_deg=prm["size_deg"], interior_angle_deg=prm["interior_angle_deg"],
                                va_bias_deg=prm["va_bias_deg"])
        v = np.asarray(geom["vertices_deg"])
        hw = prm["line_width_deg"] / 2.0
        half = (float(np.abs(v[:, 0]).max() + hw), float(np.abs(v[:, 1]).max() + hw))
        centres = _trajectory(display, n, prm["speed_deg_s"] * _unit(prm["direction_deg"]), (0.0, 0.0))
    elif fam in ("bar", "dashed_bar"):
        orientation = prm["direction_deg"] + 90.0 + prm["tilt_deg"]
        half = _rect_half_extent(prm["length_deg"] / 2.0, prm["width_deg"] / 2.0, orientation)
        centres = _trajectory(display, n, prm["speed_deg_s"] * _unit(prm["direction_deg"]), (0.0, 0.0))
    elif fam == "barberpole":
        half = _rect_half_extent(prm["aspect_ratio"] * prm["short_side_deg"] / 2.0, prm["short_side_deg"] / 2.0,
                                 prm.get("aperture_orientation_deg", 0.0))
        centres = np.zeros((1, 2))
    else:
        half = (prm["diameter_deg"] / 2.0,) * 2
        centres = np.zeros((1, 2))
    _check_fits(display, fam.replace("_", " "), half, centres)
