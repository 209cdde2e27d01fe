"""The run's motion stimulus set from the ``motion`` config section, and the stimulus names.

Each stimulus is named for Snakemake (``[a-z0-9_]+``, e.g. ``diamond_cw_dir090``)
and described by ``{"family", "experiment", "params"}`` with ``params`` the keyword
arguments of its family's renderer; the name is a label only (the scores read the
parameters from the stimulus attributes, never from the name).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli.diamonds import diamond_geometry
from psybench.motion.stimuli.families import FAMILIES
from psybench.motion.stimuli.geometry import _check_fits, _n_frames, _rect_half_extent, _trajectory, _unit

__all__ = ["DEFAULTS", "stimulus_set"]


#: Defaults of the ``motion`` config section, chosen so that every stimulus fits a
#: 256 x 256 display at 8 px/deg (32 x 32 deg) for its whole 500 ms of motion, with
#: objects travelling symmetrically about the centre (a 10 deg/s object moves 5 deg):
#:
#: * ``duration_ms`` 500: 50 frames at 100 frames/s; human direction errors decay
#:   within ~300 ms (Wallace et al. 2005; Pack & Born 2001), so 500 ms covers the
#:   decay and a steady state for the fits (several time constants of ~100 ms).
#: * ``contrast`` 1.0: full Michelson contrast (the high-contrast conditions).
#: * diamonds: 10 deg/s (0.8 px/frame, a common pursuit target speed), 8 deg edges,
#:   0.25 deg (2 px) outline, the 4 cardinal directions (Masson & Stone 2002), the
#:   interior angle 40 deg solved for the 44 deg VA bias (see :func:`diamond_geometry`);
#:   the 15 x 11 deg diamond plus 5 deg of travel fits in 32 deg.
#: * bars: 10 deg/s and 45 deg tilt (Pack & Born 2001), 0.5 deg wide (Biber & Ilg
#:   2008), lengths doubling 2-16 deg (Biber & Ilg's 20 deg does not leave room for
#:   a 2-fold series; 16 deg at 45 deg spans 11.7 deg, + 5 deg travel).
#: * dashed bars: the longest bar (16 deg) cut into 1, 2, 4, 8 tiles, 30 % gaps.
#: * barber-pole: aspect ratios 1 (control: no dominant axis), 2, 3 (Masson et al.
#:   2000 used several), 6 deg short side (3 periods of the 0.5 c/deg grating, so
#:   the longest aperture is 18 deg), 5 deg/s (2.5 Hz, 0.4 px/frame).
#: * gratings: 0.27 c/deg at 37 deg/s = 10 Hz (RR-7317 grating-size set); diameters
#:   doubling from 1 deg to 16, then 28 deg (the largest circle that fits 32 deg with
#:   a margin); Barthelemy et al.'s exact diameters are not verified.
DEFAULTS: dict[str, Any] = {
    "duration_ms": 500.0,
    "contrast": 1.0,
    "diamonds": {"speed_deg_s": 10.0, "size_deg": 8.0, "line_width_deg": 0.25,
                 "directions_deg": [0, 90, 180, 270], "interior_angle_deg": 40.0, "va_bias_deg": 44.0},
    "bars": {"speed_deg_s": 10.0, "width_deg": 0.5, "tilt_deg": 45.0, "lengths_deg": [2, 4, 8, 16]},
    # speed_deg_s, width_deg, tilt_deg default to the bars' values
    "dashed_bars": {"length_deg": 16.0, "n_tiles": [1, 2, 4, 8], "gap_fraction": 0.3,
                    "speed_deg_s": None, "width_deg": None, "tilt_deg": None},
    "barberpole": {"aspect_ratios": [1, 2, 3], "short_side_deg": 6.0, "sf_cpd": 0.5, "speed_deg_s": 5.0,
                   "grating_orientation_deg": 45.0},
    "gratings": {"diameters_deg": [1, 2, 4, 8, 16, 28], "sf_cpd": 0.27, "speed_deg_s": 37.0, "edge_deg": 0.0},
}
#: Keys of the motion section that belong to later stages (not validated here).
_OTHER_STAGE_KEYS = ("readout", "criteria", "models")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _number(key: str, value: Any, *, gt: float | None = None, ge: float | None = None,
            lt: float | None = None, le: float | None = None, integer: bool = False) -> float:
    if not _is_number(value) or (integer and int(value) != value):
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{key} must be {kind}, got {value!r}")
    if gt is not None and not value > gt:
        raise ValueError(f"{key} must be > {gt:g}, got {value!r}")
    if ge is not None and not value >= ge:
        raise ValueError(f"{key} must be >= {ge:g}, got {value!r}")
    if lt is not None and not value < lt:
        raise ValueError(f"{key} must be < {lt:g}, got {value!r}")
    if le is not None and not value <= le:
        raise ValueError(f"{key} must be <= {le:g}, got {value!r}")
    return int(value) if integer else float(value)


def _number_list(key: str, value: Any, **bounds) -> list:
    if not isinstance(value, (list, tuple)) or len(value) == 0:
        raise ValueError(f"{key} must be a non-empty list, got {value!r}")
    return [_number(f"{key}[{i}]", v, **bounds) for i, v in enumerate(value)]


def _section(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    given = cfg.get(name)
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise ValueError(f"motion.{name} must be a mapping, got {given!r}")
    unknown = sorted(set(given) - set(DEFAULTS[name]))
    if unknown:
        raise ValueError(f"motion.{name}.{unknown[0]}: unknown key; allowed: {sorted(DEFAULTS[name])}")
    out = dict(DEFAULTS[name])
    out.update(given)
    return out


def _tag(value: float, width: int) -> str:
    """Zero-padded name fragment: 4 -> '04', 2.5 -> '02p5' (names match [a-z0-9_]+)."""
    if float(value).is_integer():
        return f"{int(value):0{width}d}"
    whole, frac = f"{value:.6f}".rstrip("0").split(".")
    return f"{int(whole):0{width}d}p{frac}"


def stimulus_set(cfg: Mapping[str, Any], *, display: Display | None = None) -> dict[str, dict[str, Any]]:
    """The run's motion stimuli, ``{name: {"family", "experiment", "params"}}``, from config.

    Parameters
    ----------
    cfg : mapping
        The ``motion`` config section (or a whole config holding one); missing keys
        take :data:`DEFAULTS`. Keys of later stages (``readout``, ``criteria``,
        ``models``) are ignored.
    display : Display, optional
        When given, every stimulus is checked to fit the display for its whole
        duration (cheaply, without rendering), so a bad size fails before any job.

    Returns
    -------
    dict
        Ordered diamonds, bars, dashed bars, barber-poles, gratings. Names (Snakemake
        wildcards, ``[a-z0-9_]+``): ``diamond_{cw,ccw}_dir{DDD}``, ``bar_len{LL}``,
        ``dashed_n{NN}``, ``barberpole_ar{A}``, ``grating_d{DD}`` (zero-padded; a
        fractional value is written with ``p`` for the point, e.g. ``bar_len02p5``).
        ``params`` are the keyword arguments of the family's renderer (JSON types).

    Raises
    ------
    ValueError
        Naming the config key path, e.g. ``motion.gratings.diameters_deg[2] must be
        > 0, got -1``, for unknown keys, bad values or duplicate stimuli.
    """
    if "motion" in cfg and isinstance(cfg["motion"], Mapping):
        cfg = cfg["motion"]
    if not isinstance(cfg, Mapping):
        raise ValueError(f"motion must be a mapping, got {cfg!r}")
    allowed = set(DEFAULTS) | set(_OTHER_STAGE_KEYS)
    unknown = sorted(set(cfg) - allowed)
    if unknown:
        raise ValueError(f"motion.{unknown[0]}: unknown key; allowed: {sorted(allowed)}")
    duration = _number("motion.duration_ms", cfg.get("duration_ms", DEFAULTS["duration_ms"]), gt=0)
    contrast = _number("motion.contrast", cfg.get("contrast", DEFAULTS["contrast"]), ge=0, le=1)
    common = {"contrast": contrast, "duration_ms": duration}
    out: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}

    def add(name: str, family: str, params: dict[str, Any], key: str) -> None:
        if name in out:
            raise ValueError(f"{key} duplicates stimulus {name!r} (already made by {where[name]})")
        where[name] = key
        out[name] = {"family": family, "experiment": FAMILIES[family][1], "params": {**params, **common}}

    # diamonds
    d = _section(cfg, "diamonds")
    p = "motion.diamonds"
    dia = {
        "speed_deg_s": _number(f"{p}.speed_deg_s", d["speed_deg_s"], gt=0),
        "size_deg": _number(f"{p}.size_deg", d["size_deg"], gt=0),
        "line_width_deg": _number(f"{p}.line_width_deg", d["line_width_deg"], gt=0),
        "interior_angle_deg": _number(f"{p}.interior_angle_deg", d["interior_angle_deg"], gt=0, le=90),
        "va_bias_deg": _number(f"{p}.va_bias_deg", d["va_bias_deg"], ge=0, lt=90),
    }
    if math.sin(math.radians(dia["va_bias_deg"])) > math.cos(math.radians(dia["interior_angle_deg"])) + 1e-12:
        raise ValueError(
            f"{p}.interior_angle_deg must be <= 90 - va_bias_deg = {90 - dia['va_bias_deg']:g} "
            f"to reach the vector-average bias, got {dia['interior_angle_deg']:g}"
        )
    directions = _number_list(f"{p}.directions_deg", d["directions_deg"])
    for hand in ("cw", "ccw"):
        for i, direction in enumerate(directions):
            direction = direction % 360.0
            add(f"diamond_{hand}_dir{_tag(direction, 3)}", "diamond",
                {"handedness": hand, "direction_deg": direction, **dia}, f"{p}.directions_deg[{i}]")

    # bars
    b = _section(cfg, "bars")
    p = "motion.bars"
    bar = {
        "width_deg": _number(f"{p}.width_deg", b["width_deg"], gt=0),
        "tilt_deg": _number(f"{p}.tilt_deg", b["tilt_deg"], gt=-90, lt=90),
        "direction_deg": 0.0,
        "speed_deg_s": _number(f"{p}.speed_deg_s", b["speed_deg_s"], gt=0),
    }
    for i, length in enumerate(_number_list(f"{p}.lengths_deg", b["lengths_deg"], gt=0)):
        add(f"bar_len{_tag(length, 2)}", "bar", {"length_deg": length, **bar}, f"{p}.lengths_deg[{i}]")

    # dashed bars (same motion as the bars unless overridden)
    s = _section(cfg, "dashed_bars")
    p = "motion.dashed_bars"
    dashed = {
        "length_deg": _number(f"{p}.length_deg", s["length_deg"], gt=0),
        "gap_fraction": _number(f"{p}.gap_fraction", s["gap_fraction"], ge=0, lt=1),
        "width_deg": bar["width_deg"] if s["width_deg"] is None else _number(f"{p}.width_deg", s["width_deg"], gt=0),
        "tilt_deg": bar["tilt_deg"] if s["tilt_deg"] is None
        else _number(f"{p}.tilt_deg", s["tilt_deg"], gt=-90, lt=90),
        "direction_deg": 0.0,
        "speed_deg_s": bar["speed_deg_s"] if s["speed_deg_s"] is None
        else _number(f"{p}.speed_deg_s", s["speed_deg_s"], gt=0),
    }
    for i, n in enumerate(_number_list(f"{p}.n_tiles", s["n_tiles"], ge=1, integer=True)):
        add(f"dashed_n{_tag(n, 2)}", "dashed_bar", {"n_tiles": n, **dashed}, f"{p}.n_tiles[{i}]")

    # barber-poles
    bp = _section(cfg, "barberpole")
    p = "motion.barberpole"
    pole = {
        "short_side_deg": _number(f"{p}.short_side_deg", bp["short_side_deg"], gt=0),
        "sf_cpd": _number(f"{p}.sf_cpd", bp["sf_cpd"], gt=0),
        "speed_deg_s": _number(f"{p}.speed_deg_s", bp["speed_deg_s"], gt=0),
        "grating_orientation_deg": _number(f"{p}.grating_orientation_deg", bp["grating_orientation_deg"]),
    }
    for i, ar in enumerate(_number_list(f"{p}.aspect_ratios", bp["aspect_ratios"], ge=1)):
        add(f"barberpole_ar{_tag(ar, 1)}", "barberpole", {"aspect_ratio": ar, **pole}, f"{p}.aspect_ratios[{i}]")

    # gratings
    g = _section(cfg, "gratings")
    p = "motion.gratings"
    grat = {
        "sf_cpd": _number(f"{p}.sf_cpd", g["sf_cpd"], gt=0),
        "speed_deg_s": _number(f"{p}.speed_deg_s", g["speed_deg_s"], gt=0),
        "direction_deg": 0.0,
        "edge_deg": _number(f"{p}.edge_deg", g["edge_deg"], ge=0),
    }
    for i, dia_deg in enumerate(_number_list(f"{p}.diameters_deg", g["diameters_deg"], gt=0)):
        if grat["edge_deg"] > dia_deg / 2.0:
            raise ValueError(f"{p}.edge_deg ({grat['edge_deg']:g}) exceeds the radius of diameters_deg[{i}]")
        add(f"grating_d{_tag(dia_deg, 2)}", "grating", {"diameter_deg": dia_deg, **grat}, f"{p}.diameters_deg[{i}]")

    if display is not None:
        for name, spec in out.items():
            try:
                _check_spec_fits(display, spec)
            except ValueError as exc:
                raise ValueError(f"motion stimulus {name} ({where[name]}): {exc}") from None
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
