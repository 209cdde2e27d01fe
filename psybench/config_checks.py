"""Checks of a config that JSON Schema cannot express, run before any job.

:func:`psybench.config.prepare_workflow` runs them around the schema check, in this
order: :func:`check_finite` (JSON Schema lets NaN through every bound: ``nan > 0``
and ``nan < 0`` are both false), the schema, :func:`check_callables` (before a user
module is imported), the models' resolution, :func:`check_model_params`,
:func:`check_cross_keys` (files, other keys, leaderboards) and :func:`check_memory`.
Each failure is a :class:`psybench.config.ConfigError` whose message names the key
as a dotted path, e.g. ``motion.models[0].params.alpha``. The checks of one track's
own section live in that track (``psybench.<track>.config_checks``, called through
:func:`psybench.tracks.config_check`); they build their errors and check their files with
:func:`config_error`, :func:`project_file` and :func:`check_param_value`.

The upper bounds are sanity bounds, not literature values: they are far above
anything the source experiments use (Tlapale et al. 2010, RR-7317: 100 frames/s,
displays of a few hundred pixels; Riochet et al. 2018, IntPhys: 100 frames of
288 x 288 px; Shic & Scassellati 2007: 40 x 30 cells) and stop a typing slip
(``1e9``) from allocating hundreds of GiB at run time.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from psybench._yaml import safe_load
from psybench.registry import TRACKS
from psybench.tracks import config_check, criterion_experiments
from psybench.units import ms_to_frames, scaled_display

__all__ = [
    "check_finite", "check_callables", "check_model_params", "check_cross_keys", "check_memory",
    "array_estimates", "machine_memory_bytes", "config_error", "project_file", "check_param_value",
]


def _error(key: str, message: str) -> Exception:
    from psybench.config import ConfigError

    return ConfigError(f"config key {key}: {message}")


def config_error(key: str, message: str) -> Exception:
    """The :class:`psybench.config.ConfigError` for ``key`` (a dotted path), to raise."""
    return _error(key, message)


def project_file(key: str, value: str, *, must_exist: str = "file") -> Path:
    """``value`` resolved against the working directory; a ConfigError naming ``key`` unless it is a file (folder)."""
    return _inside_project(key, value, must_exist=must_exist)


def check_param_value(key: str, owner: str, value: Any, default: Any, *,
                      bounds: tuple[float | None, float | None] | None = None) -> None:
    """Check ``value`` of ``key`` against its default's type (and the declared ``bounds`` of a built-in's)."""
    _check_param(key, owner, value, default, bounds)


def _walk(node: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from _walk(v, f"{key}.{k}" if key else str(k))
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from _walk(v, f"{key}[{i}]")
    else:
        yield key, node


def check_finite(config: Mapping[str, Any]) -> None:
    """Refuse NaN and infinite numbers anywhere in ``config`` (YAML's ``.nan``, ``.inf``).

    No key of psybench takes a non-finite number: a NaN ``readout.lambda_ms`` would
    make every score NaN with exit code 0, ``frames_per_s: .inf`` an OverflowError.
    """
    for key, value in _walk(config):
        if isinstance(value, float) and not math.isfinite(value):
            raise _error(key, f"{value} is not a finite number")


def check_callables(config: Mapping[str, Any]) -> None:
    """Refuse a ``callable`` from the standard library or builtins (``os:system``).

    A model callable is a user's function in the user's own module; a standard
    library function is never a model, and calling one with frames could do harm.
    """
    stdlib = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    for track, section in config.items():
        entries = section.get("models") if isinstance(section, Mapping) else None
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            path = entry.get("callable") if isinstance(entry, Mapping) else None
            if isinstance(path, str) and path.split(":")[0].split(".")[0] in stdlib:
                raise _error(
                    f"{track}.models[{i}].callable",
                    f"{path!r} is in Python's standard library, not a model; name a function of your own "
                    "module ('package.module:function')",
                )


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_model_params(config: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]]) -> None:
    """Check every model parameter against its default's type (and, for built-ins, sign and bounds).

    A parameter whose default is a number takes one number (not a list), an integer
    default takes an integer, a tuple default takes a list of numbers. A built-in
    algorithm's parameter whose default is >= 0 takes no negative value, and stays
    within the bounds its algorithm declares where it is registered
    (:attr:`psybench.registry.Algorithm.bounds`). User callables get the type checks
    only: their signs are theirs to define.
    """
    for track, specs in models.items():
        index = {e["name"]: i for i, e in enumerate(config[track].get("models") or [])}
        for name, spec in specs.items():
            algo = spec.algorithm
            for p, value in (config[track]["models"][index[name]].get("params") or {}).items():
                key = f"{track}.models[{index[name]}].params.{p}"
                bounds = algo.bounds.get(p, (None, None)) if algo.source != "user" else None
                _check_param(key, f"model {name!r}", value, algo.defaults.get(p), bounds)


def _check_param(key: str, owner: str, value: Any, default: Any,
                 bounds: tuple[float | None, float | None] | None) -> None:
    """``bounds``: the declared (smallest, largest) of a built-in's parameter; None for a user callable."""
    where = f"({owner}, default {default!r})"
    if _is_number(default):
        if not _is_number(value):
            raise _error(key, f"{value!r} is not a single number {where}")
        if isinstance(default, int) and not isinstance(value, int):
            raise _error(key, f"{value!r} is not an integer {where}")
        values = [value]
    elif isinstance(default, tuple) and default and all(_is_number(d) for d in default):
        if not isinstance(value, (list, tuple)) or not value or not all(_is_number(v) for v in value):
            raise _error(key, f"{value!r} is not a list of numbers {where}")
        values = list(value)
    else:
        return
    if bounds is None:
        return
    low, high = bounds
    if (low == 0 or (low is None and min(default if isinstance(default, tuple) else (default,)) >= 0)) \
            and min(values) < 0:
        raise _error(key, f"{min(values)!r} is negative; this parameter takes values >= 0 {where}")
    if low is not None and min(values) < low:
        raise _error(key, f"{min(values)!r} is below {low}, the smallest value psybench accepts {where}")
    if high is not None and max(values) > high:
        raise _error(key, f"{max(values)!r} exceeds {high}, the largest value psybench accepts {where}")


def _inside_project(key: str, value: str, *, must_exist: str = "file") -> Path:
    """``value`` resolved against the working directory; it must be a file (or a folder).

    The message says what is wrong (:func:`psybench.io.inputs.path_problem`): missing,
    or a folder where a file is expected (and the reverse).
    """
    from psybench.io.inputs import path_problem

    project = Path.cwd().resolve()
    path = (project / value).resolve()
    problem = path_problem(path, must_exist)
    if problem:
        raise _error(key, f"{value} {problem} (relative paths start at {project})")
    return path


def check_cross_keys(config: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]]) -> None:
    """Constraints between keys and on files, checked before any job.

    * each run track's own checks (:func:`psybench.tracks.config_check`: motion's
      barber-pole aspect ratios and literature file, IntPhys's held-out split and
      files, attention's models, movies and gaze files);
    * ``aggregate.leaderboards``: each names an enabled track, a configured model
      of it (or its algorithm, for a sweep) and criteria of enabled tracks (the
      report job would otherwise fail at the end of the run).
    """
    for track in config.get("tracks") or []:
        check = config_check(track)
        if check is not None:
            check(config, models)
    _check_leaderboards(config, models)


def _shipped_leaderboards() -> list[Any]:
    """The leaderboards of the shipped config/config.yaml in the project, if there is one."""
    path = Path.cwd() / "config" / "config.yaml"
    try:
        shipped = safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    return list((shipped.get("aggregate") or {}).get("leaderboards") or [])


def _check_leaderboards(config: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]]) -> None:
    """Every leaderboard must be one the report can compute (:func:`psybench.aggregate.scope.check_leaderboards`:
    unique names, a known track, criteria that the run's tracks write, of the board's own track,
    none of them an empty list) and name a configured model (or its algorithm, for a sweep).
    One inherited unchanged from the shipped config/config.yaml (a user's ``--configfile`` is
    laid over it) may name an absent track or model: it is left out with a warning instead
    (:func:`psybench.aggregate.scope.applicable_leaderboards`)."""
    from psybench.aggregate.scope import LeaderboardSpecError, check_leaderboards

    tracks = list(config.get("tracks") or [])
    boards = list((config.get("aggregate") or {}).get("leaderboards") or [])
    shipped = _shipped_leaderboards()
    inherited = [isinstance(board, Mapping) and any(all(board.get(k) == v for k, v in sb.items()) for sb in shipped
                                                    if isinstance(sb, Mapping))  # (+ schema defaults)
                 for board in boards]
    # the experiments each track writes, where it says (motion's four, attention's <train>_on_<test> pairs)
    experiments = {t: known for t in TRACKS if (known := criterion_experiments(t, config)) is not None}
    try:
        specs = check_leaderboards(boards, tracks, experiments=experiments, inherited=inherited,
                                   where="aggregate.leaderboards")
    except LeaderboardSpecError as exc:
        raise _error(exc.key, exc.detail) from None
    for i, board in enumerate(specs):
        track, model = board["track"], board["model"]
        # the long table's model column holds a model's name or, for a sweep, its algorithm's
        names = sorted({x for t, specs_ in models.items() if track in (None, t)
                        for n, spec in specs_.items() for x in (n, spec.algorithm.name)})
        if model is not None and model not in names and not inherited[i]:
            raise _error(f"aggregate.leaderboards[{i}].model",
                         f"model {model!r} is not configured; configured: {names}")


def machine_memory_bytes() -> int:
    """Physical memory of this machine (psutil if installed, else ``os.sysconf``)."""
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except ImportError:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def array_estimates(config: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """The largest arrays a (schema-filled) config implies: ``[(keys, what, bytes)]``.

    * motion, at every frame rate of the run (``display.frames_per_s`` and the
      ``generalisation.frames_per_s`` levels) and display scale (the
      ``generalisation.px_per_deg`` levels): the flow response of a model,
      ``t x h x w x 2`` float32 (the stimulus, ``t x h x w`` float32, is half of it);
    * IntPhys (generated tree): one movie decoded, ``frames x h x w`` at 8 bytes per
      pixel (RGB uint8 + float32 depth + uint8 mask, psybench.intphys.ingest.decode);
    * attention, per pop-out movie: its frames on the cell grid (``t x h x w``
      float32) times the largest neighbourhood ``L x L`` of a model's feature vector.
    """
    out = []
    tracks = config.get("tracks") or []
    display = config.get("display") or {}
    if "motion" in tracks and "motion" in config:
        motion = config["motion"]
        gen = motion.get("generalisation") or {}
        h, w = display["height_px"], display["width_px"]
        runs = [("display.frames_per_s", display["frames_per_s"], h, w)]
        levels = (gen.get("frames_per_s") or {}).get("levels") or []
        runs += [(f"motion.generalisation.frames_per_s.levels[{i}]", r, h, w) for i, r in enumerate(levels)]
        scales = (gen.get("px_per_deg") or {}).get("levels") or []
        runs += [(f"motion.generalisation.px_per_deg.levels[{i}]", display["frames_per_s"],
                  scaled["height_px"], scaled["width_px"])
                 for i, scaled in enumerate(scaled_display(display, p) for p in scales)]
        for key, fps, h, w in runs:
            t = ms_to_frames(motion["duration_ms"], fps)  # the frames Display.ms_to_frames renders
            out.append((f"{key}, motion.duration_ms, display.width_px, display.height_px",
                        f"a motion flow response {t} x {h} x {w} x 2 float32", t * h * w * 2 * 4))
    if "intphys" in tracks and (config.get("intphys") or {}).get("generate"):
        g = config["intphys"]["generator"]
        t, h, w = g["n_frames"], g["height"], g["width"]
        out.append(("intphys.generator.n_frames, intphys.generator.height, intphys.generator.width",
                    f"one IntPhys movie {t} x {h} x {w} (RGB + depth + mask, 8 bytes/px)", t * h * w * 8))
    if "attention" in tracks and "attention" in config:
        section = config["attention"]
        gw, gh = section["grid"]
        side = max((max(m["L"]) if isinstance(m.get("L"), list) else m.get("L") or 1)
                   for m in section.get("models") or [{"L": 1}])
        for movie, spec in (section.get("movies") or {}).items():
            if "popout" in spec:
                t = int((spec["popout"] or {}).get("n_frames", 600))
                out.append((f"attention.movies.{movie}.popout.n_frames, attention.grid, attention.models[*].L",
                            f"attention features {t} x {gh} x {gw} x {side * side} float32",
                            t * gh * gw * side * side * 4))
    return out


def check_memory(config: Mapping[str, Any], *, limit_bytes: int | None = None) -> None:
    """Refuse a config whose largest array (:func:`array_estimates`) exceeds memory.

    ``limit_bytes`` defaults to :func:`machine_memory_bytes`; the message names the
    keys that set the array's size.
    """
    limit = machine_memory_bytes() if limit_bytes is None else int(limit_bytes)
    for keys, what, nbytes in array_estimates(config):
        if nbytes > limit:
            raise _error(keys, f"imply {what} of {nbytes / 2**30:.3g} GiB, more than this machine's "
                         f"{limit / 2**30:.3g} GiB of memory")
