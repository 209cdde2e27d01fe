"""Configuration: load, validate against the JSON schema, fill defaults, check semantics.

The workflow calls :func:`prepare_workflow` once while the Snakefile is parsed
(rules/common.smk): it validates the config and resolves every track's models, so a
bad config fails before any job with a :class:`ConfigError` whose message names
the offending key as a dotted path (``motion.gratings.diameters_deg[1]``).
Library users call :func:`load_config` or :func:`validate_config` the same way.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from psybench._yaml import YAMLContentError, safe_load, strict_load
from psybench.config_checks import check_callables, check_cross_keys, check_finite, check_memory, check_model_params
from psybench.io.inputs import path_problem
from psybench.registry import ModelError, resolve_model

__all__ = [
    "ConfigError", "load_config", "validate_config", "SCHEMA_PATH", "track_models", "resolve_models",
    "prepare_workflow", "check_schema", "MODEL_SHAPE", "key_path", "read_config_file", "check_config_files",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = PROJECT_ROOT / "config" / "schema.yaml"


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key."""


def key_path(parts) -> str:
    """Dotted path of a JSON-schema error location: ``motion.models[2].name``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<top level>"


def _with_defaults(validator_class):
    validate_props = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub and prop not in instance:
                    instance[prop] = copy.deepcopy(sub["default"])
        yield from validate_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


_DefaultsValidator = _with_defaults(jsonschema.Draft202012Validator)


def _describe(err: jsonschema.ValidationError) -> str:
    where = key_path(err.absolute_path)
    # a schema node's description shows the expected shape (e.g. of a models entry)
    hint = (
        f" ({err.schema['description'].strip()})"
        if isinstance(err.schema, dict) and err.schema.get("description")
        else ""
    )
    if err.validator == "additionalProperties":
        allowed = sorted((err.schema.get("properties") or {}).keys())
        return f"config key {where}: {err.message}; allowed keys: {allowed}{hint}"
    if err.validator in ("pattern", "maxLength") and isinstance(err.instance, str):
        # names become file names and wildcards: a long one is shown shortened, with its length
        shown = err.instance if len(err.instance) <= 40 else f"{err.instance[:40]}... ({len(err.instance)} characters)"
        what = "name" if "propertyNames" in err.relative_schema_path else "value"
        why = (f"is longer than {err.validator_value} characters" if err.validator == "maxLength"
               else f"does not match {err.validator_value!r}")
        return f"config key {where}: {what} {shown!r} {why}{hint}"
    if err.validator == "oneOf" and isinstance(err.instance, dict) and "name" in err.instance:
        return (
            f"config key {where} (model {err.instance['name']!r}): "
            f"give exactly one of 'algorithm' or 'callable'{hint}"
        )
    return f"config key {where}: {err.message}{hint}"


def validate_config(config: dict[str, Any], *, schema_path: str | Path = SCHEMA_PATH) -> dict[str, Any]:
    """Validate ``config`` in place (defaults filled, every track's models checked) and return it.

    The motion stimulus set is checked where it is built
    (:func:`psybench.motion.stimuli.stimulus_set`).

    Raises
    ------
    ConfigError
        For the first schema violation (by path), a missing IntPhys tree, a
        duplicate or unknown model, or a model parameter the algorithm does not take.
    """
    prepare_workflow(config, schema_path=schema_path)
    return config


def prepare_workflow(config: dict[str, Any], *, schema_path: str | Path = SCHEMA_PATH) -> dict[str, dict[str, Any]]:
    """Validate ``config`` in place and return every track's resolved models (see :func:`resolve_models`).

    What the workflow calls once while the Snakefile is parsed (rules/common.smk):
    each model entry is resolved exactly once. Besides the schema it checks what a
    schema cannot (:mod:`psybench.config_checks`): finite numbers, user callables,
    model parameters, files, cross-key constraints, leaderboards and the memory the
    largest array of the run needs.
    """
    check_finite(config)
    check_schema(config, schema_path=schema_path)
    if "intphys" in config.get("tracks", []):
        _check_intphys_root(config["intphys"])
    check_callables(config)
    models = resolve_models(config)
    check_model_params(config, models)
    check_cross_keys(config, models)
    check_memory(config)
    return models


def _validator(path: Path) -> jsonschema.protocols.Validator:
    """The defaults-filling validator of the schema at ``path``, built once per content (planning
    validates the config, then the motion sections once per stimulus set: 7 times per run)."""
    stat = path.stat()
    return _schema_validator(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _schema_validator(path: str, mtime_ns: int, size: int) -> jsonschema.protocols.Validator:
    # the validator only reads its schema (defaults are deep-copied into the instance): one per content
    return _DefaultsValidator(safe_load(Path(path).read_text()))


def check_schema(config: dict[str, Any], *, schema_path: str | Path = SCHEMA_PATH) -> dict[str, Any]:
    """Check ``config`` against config/schema.yaml alone, filling its defaults in place; return it."""
    validator = _validator(Path(schema_path))
    errors = sorted(
        validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
    )
    if errors:
        # the deepest error is the most specific one for a misspelt or bad value
        err = max(errors, key=lambda e: len(e.absolute_path))
        raise ConfigError(_describe(err))
    return config


def resolve_models(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every enabled track's models of a validated config, resolved once: ``{track: {name: ModelSpec}}``.

    The workflow calls this once while the Snakefile is parsed (rules/common.smk), so
    a bad model entry of any track fails before any job, naming its key.
    """
    from psybench.registry import TRACKS

    enabled = config.get("tracks", TRACKS)
    return {track: track_models(config, track) for track in TRACKS if track in config and track in enabled}


def _check_intphys_root(section: Mapping[str, Any]) -> None:
    """``intphys.data_root``: generated data stay inside the project; a real tree must exist."""
    root = Path(section["data_root"])
    project = Path.cwd().resolve()
    resolved = (project / root).resolve() if not root.is_absolute() else root.resolve()
    if section["generate"]:
        if resolved != project and project not in resolved.parents:
            raise ConfigError(
                f"config key intphys.data_root: {root} is outside the project ({project}); "
                "generated data must stay under it (or set intphys.generate: false to read a real tree)"
            )
        return
    problem = path_problem(resolved, "folder")
    if problem:
        raise ConfigError(
            f"config key intphys.data_root: {root} {problem} (expected the IntPhys folder holding "
            f"{section['train_split']}/ and {section['eval_split']}/)"
        )
    for key in ("train_split", "eval_split"):
        problem = path_problem(resolved / section[key], "folder")
        if problem == "does not exist":
            raise ConfigError(
                f"config key intphys.data_root: {root} has no {section[key]}/ folder (intphys.{key}); "
                "is it an IntPhys tree?"
            )
        if problem:
            raise ConfigError(f"config key intphys.{key}: {root}/{section[key]} {problem}")


MODEL_SHAPE = "models: [{name: NAME, algorithm: BUILT_IN | callable: 'package.module:function', params: {...}}]"


def track_models(config: Mapping[str, Any], track: str) -> dict[str, Any]:
    """Resolve ``<track>.models`` into ``{name: ModelSpec}``, naming the key of any error.

    Every track takes the same shape (:data:`MODEL_SHAPE`); an entry in another
    shape (e.g. an old ``{name: {kind: ...}}`` mapping) fails with a message that
    names the key and shows the expected shape.
    """
    entries = config.get(track, {}).get("models", [])
    if not isinstance(entries, list):
        raise ConfigError(f"config key {track}.models: expected a list of model entries, got "
                          f"{type(entries).__name__}; write {MODEL_SHAPE}")
    out = {}
    for i, entry in enumerate(entries):
        where = f"{track}.models[{i}]"
        if not isinstance(entry, Mapping) or "name" not in entry:
            raise ConfigError(f"config key {where}: {entry!r} is not a model entry; write {MODEL_SHAPE}")
        if entry["name"] in out:
            raise ConfigError(f"config key {where}.name: model name {entry['name']!r} is used twice")
        try:
            out[entry["name"]] = resolve_model(entry, track=track)
        except ModelError as exc:
            raise ConfigError(f"config key {where}: {exc}; the shape is {MODEL_SHAPE}") from None
    return out


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping of one YAML config file, read strictly (:func:`psybench._yaml.strict_load`).

    Raises
    ------
    ConfigError
        The file is missing, a folder, not UTF-8, not YAML or not a mapping; or it
        gives a key twice in one mapping, or uses YAML aliases beyond a config's
        need (the message names the key and the file).
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config file {path} is a folder, expected a file")
    try:
        config = strict_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except YAMLContentError as exc:
        raise ConfigError(f"config key {exc.key}: {exc.detail} (config file {path})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    config = {} if config is None else config
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return config


def check_config_files(paths) -> None:
    """Read each config file Snakemake is about to load with :func:`read_config_file`.

    The Snakefile calls this before its ``configfile:`` line, with that file and the
    ``--configfile`` ones: Snakemake's own YAML loader keeps the later of two equal keys
    and expands aliases while merging the files, so a duplicate key would pass
    unseen and an alias bomb would keep the run busy for minutes.
    """
    for path in paths:
        if Path(path).exists():  # Snakemake itself reports a missing file
            read_config_file(path)


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file (:func:`read_config_file`) and validate it (see :func:`validate_config`)."""
    return validate_config(read_config_file(path))
