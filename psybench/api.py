"""``psybench.score(model, benchmark)``: score one model from Python, without Snakemake.

The call runs the track's chain, ``psybench/<track>/pipeline.py``: the stage
functions that the workflow's scripts call, in the order the rules run them
(:func:`psybench.motion.pipeline.score`: stimuli -> responses -> readouts -> scores ->
Table 1 -> score rows; :func:`psybench.attention.pipeline.score`: stimuli -> gaze ->
responses -> control scanpaths -> Table 1 parts -> Table 1 -> metrics parts -> metrics
-> score rows; :func:`psybench.intphys.pipeline.score`: tree -> ingest -> metadata ->
training -> responses -> scores -> score rows), on the same config (by default the repository's
``config/config.yaml``, laid under the caller's overrides as Snakemake lays a
``--configfile`` over it), so its rows equal the workflow's rows for that model.
The intermediate stores go to a temporary folder (or ``workdir``); stimulus stores
already rendered (e.g. a run's ``results/motion/stimuli``) may be given instead of
rendering them again.

Examples
--------
>>> import psybench
>>> rows = psybench.score("horn_schunck", "motion/barberpole")      # doctest: +SKIP
>>> def estimate(frame0, frame1, radius=3): ...                      # doctest: +SKIP
>>> rows = psybench.score(estimate, "motion", params={"radius": 5})  # doctest: +SKIP
>>> rows = psybench.score("itti", "attention", L=[1, 3])             # doctest: +SKIP
>>> rows.pivot_table(index="experiment", columns="metric", values="value")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from psybench.config import PROJECT_ROOT, check_schema, read_config_file
from psybench.progress import Progress, silenced
from psybench.provenance import params_hash
from psybench.registry import TRACKS, ModelError, resolve_model
from psybench.tracks import track_package, track_pipeline

__all__ = ["score", "parse_benchmark", "score_config", "SCORABLE_TRACKS"]

#: psybench's own tracks, each with its ``pipeline`` (:func:`score` runs any track that has one).
SCORABLE_TRACKS = ("motion", "attention", "intphys")
DEFAULT_CONFIG = PROJECT_ROOT / "config" / "config.yaml"


def parse_benchmark(benchmark: str) -> tuple[str, str | None]:
    """``"motion"`` -> ``("motion", None)``, ``"motion/barberpole"`` -> ``("motion", "barberpole")``.

    Raises
    ------
    ValueError
        An unknown track or experiment, naming the known ones.
    """
    track, _, experiment = str(benchmark).partition("/")
    if track not in TRACKS:
        raise ValueError(f"benchmark {benchmark!r}: unknown track {track!r}; tracks: {list(TRACKS)}")
    known = track_package(track).EXPERIMENTS
    if experiment and experiment not in known:
        raise ValueError(f"benchmark {benchmark!r}: unknown {track} experiment {experiment!r}; known: {list(known)}")
    return track, experiment or None


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base`` key by key (mappings merged, anything else replaced), as Snakemake does."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def score_config(
    config: Mapping[str, Any] | str | os.PathLike | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The config a :func:`score` call runs on, checked against the schema with its defaults filled.

    Parameters
    ----------
    config : mapping or path, optional
        A whole config (a mapping or a YAML file); default the repository's
        ``config/config.yaml``, the default run's.
    overrides : mapping, optional
        Laid over ``config`` key by key (``{"motion": {"directions_deg": [0]}}``).
    """
    if config is None:
        config = DEFAULT_CONFIG
    if isinstance(config, (str, os.PathLike)):
        base = read_config_file(config)
    else:
        base = copy.deepcopy(dict(config))
    cfg = _merge(base, overrides or {})
    return check_schema(cfg)


def _config_entry(model: str, cfg: Mapping[str, Any], track: str) -> dict | None:
    """The entry of ``<track>.models`` named ``model`` in the config, if any."""
    for entry in (cfg.get(track) or {}).get("models") or []:
        if isinstance(entry, Mapping) and entry.get("name") == model:
            return copy.deepcopy(dict(entry))
    return None


def _model_entry(model: Any, params: Mapping[str, Any] | None, name: str | None, kind: str | None,
                 configured: Mapping[str, Any] | None = None) -> dict:
    if configured is not None:
        entry = dict(configured)
    elif isinstance(model, Mapping):
        entry = dict(model)
    elif isinstance(model, str) and ":" in model:
        entry = {"callable": model}
    elif isinstance(model, str):
        entry = {"algorithm": model}
    elif callable(model):
        entry = {"callable": model}
    else:
        raise TypeError(f"model must be a registered name, 'package.module:function', a callable or a config "
                        f"entry, got {type(model).__name__}")
    if params is not None:
        entry["params"] = {**(entry.get("params") or {}), **params}
    if kind is not None:
        entry["kind"] = kind
    default_name = entry.get("algorithm") or getattr(entry.get("callable"), "__name__", None) or "model"
    if name is not None:
        entry["name"] = name
    entry.setdefault("name", str(default_name).rpartition(":")[2])
    return entry


def _label_parameters(rows: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """``params_hash``: the model's parameters' hash when they are not its defaults.

    The hash is :func:`psybench.provenance.params_hash` of the parameters, as the long
    table's ``params_hash`` column holds it (:mod:`psybench.aggregate.table`). Only rows
    of a track that leaves the column empty (motion, IntPhys) get it: attention's rows
    already hold their setting there (``params_hash({"L": L})``, the neighbourhood side),
    which the leaderboard names. Rows of a model on its defaults keep the workflow's
    empty value, so that they equal its rows.
    """
    given = params_hash(dict(spec.params))
    empty = rows["params_hash"].isna() | (rows["params_hash"].astype(str) == "")
    if given == params_hash(dict(spec.algorithm.defaults)) or not empty.all():
        return rows
    rows["params_hash"] = given
    return rows


class _Steps:
    """The stages of one :func:`score` call, counted by :class:`psybench.progress.Progress`
    once their number is known (a line per stage: a call has a few dozen)."""

    def __init__(self, what: str, *, enabled: bool) -> None:
        self.what, self.enabled, self.bar = what, enabled, None

    def start(self, total: int) -> None:
        self.bar = Progress(total, self.what, every_s=0.0, **({} if self.enabled else {"stream": None}))

    def step(self, label: str) -> None:
        self.bar.update(note=label)

    def done(self) -> None:
        """Nothing to close: every line is complete."""


def score(
    model: str | Callable[..., Any] | Mapping[str, Any],
    benchmark: str = "motion",
    *,
    params: Mapping[str, Any] | None = None,
    name: str | None = None,
    kind: str | None = None,
    config: Mapping[str, Any] | str | os.PathLike | None = None,
    overrides: Mapping[str, Any] | None = None,
    stimuli: str | os.PathLike | Mapping[str, Any] | None = None,
    gaze: Mapping[str, Any] | None = None,
    L: int | Sequence[int] | None = None,
    workdir: str | os.PathLike | None = None,
    threads: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Score one model on a benchmark; the workflow's score rows for it, as a DataFrame.

    Parameters
    ----------
    model : str, callable or mapping
        The name of an entry of the config's ``<track>.models`` (its name,
        algorithm, parameters and, attention, ``L``), a registered algorithm
        (``"horn_schunck"``, see ``psybench models``), a
        ``"package.module:function"``, a function (``def estimate(frame0, frame1,
        radius=3)``; attention: ``def maps(frames, sigma=1.0)``, frames (t, H, W) ->
        maps (t, H, W, K); see :mod:`psybench.registry` for each kind's signature), or a
        whole config entry ``{name, algorithm | callable, kind, params}`` (attention: and ``L``).
    benchmark : str
        A track (``"motion"``, ``"attention"``, ``"intphys"``) or one experiment of it
        (``"motion/barberpole"``, ``"attention/table1"``, ``"attention/saliency_metrics"``,
        ``"intphys/O1"``: that block's rows).
    params : mapping, optional
        The model's parameters (checked against its signature).
    name : str, optional
        The ``model`` column (default: the config entry's name, else the algorithm's
        or function's name).
    kind : str, optional
        The interface of a user function (default: the track's first: ``pair``, ``saliency``).
    config : mapping or path, optional
        The config to run on (default: the repository's ``config/config.yaml``).
    overrides : mapping, optional
        Laid over ``config`` key by key, e.g. a smaller stimulus set.
    stimuli : path, optional
        Motion: a folder of stimulus stores rendered for this config
        (``results/motion/stimuli`` of a workflow run); default: rendered into ``workdir``.
        Attention: a folder of stimulus stores (``results/attention/stimuli``), or per
        movie a store, an array of frames (T, H, W) or (T, H, W, 3) with the rate of
        ``attention.movies.<movie>.frames_per_s``, or ``{"frames": array,
        "frames_per_s": fps}`` (:func:`psybench.attention.pipeline.score`); default:
        the movies of ``attention.movies`` rendered or ingested into ``workdir``.
        IntPhys reads the tree of ``intphys.data_root`` (or generates one into
        ``workdir`` with ``intphys.generate``).
    gaze : mapping, optional
        Attention: per movie, gaze recordings replacing the configured ones: a file or
        files (read with the movie's ``gaze_format``) or a DataFrame of raw samples
        (``subject, t`` in ms, ``x, y`` in movie pixels, optional ``valid``).
    L : int or sequence of int, optional
        Attention: the neighbourhood side(s) of the Fisher feature vector (Shic &
        Scassellati 2007, sec. 5.2), one Table 1 row each; default the ``L`` of the
        ``attention.models`` entry of the same name, else 1.
    workdir : path, optional
        Where the intermediate stores are written and kept; default a temporary
        folder, removed on return.
    threads : int
        Threads of a pair model's frame pairs, of the attention features (results do
        not depend on it).
    progress : bool
        Show the stages done and the time left on stderr; ``False``: print nothing,
        not even the progress of the loops inside a stage.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`psybench.aggregate.table.SCORE_COLUMNS`, one row per
        (model, experiment, metric), as the workflow's
        ``results/aggregate/scores_<track>.csv`` holds for this model (attention: the
        Table 1 rows of ``model`` and the metrics rows of ``"<model> L=<L> untuned|tuned"``; a
        map-output model, kind ``map`` such as the built-in ``centre_bias``: the untuned
        metrics rows of ``"<model> untuned map"``, no Table 1, no ``L``);
        ``source`` says ``psybench.score(<benchmark>)``. A motion or IntPhys model run
        with parameters other than its defaults has their
        :func:`~psybench.provenance.params_hash` in ``params_hash`` (where the workflow
        leaves it empty), so that two settings of one model stay two leaderboard
        entries; attention's ``params_hash`` holds the setting ``L``, as in the workflow.

    Raises
    ------
    ValueError
        An unknown benchmark, a bad model or parameter (:class:`psybench.registry.ModelError`),
        a bad config (:class:`psybench.config.ConfigError`, naming the key).
    FileNotFoundError
        A missing stimulus store or gaze file, naming it.
    """
    track, experiment = parse_benchmark(benchmark)
    if track != "attention" and (gaze is not None or L is not None):
        raise ValueError(f"psybench.score: gaze= and L= belong to the attention track, not to {benchmark!r}")
    cfg = score_config(config, overrides)
    configured = _config_entry(model, cfg, track) if isinstance(model, str) else None
    entry = _model_entry(model, params, name, kind, configured)
    if L is not None:
        entry["L"] = L
    try:
        spec = resolve_model(entry, track=track)
    except ModelError as exc:
        if configured is None and isinstance(model, str) and ":" not in model:  # maybe a config name, mistyped
            names = [m.get("name") for m in (cfg.get(track) or {}).get("models") or [] if isinstance(m, Mapping)]
            raise ModelError(f"{exc}; nor is it a name of the config's {track}.models: {names}") from None
        raise
    line = _Steps(f"psybench.score({spec.name!r}, {benchmark!r})", enabled=progress)
    quiet = contextlib.nullcontext() if progress else silenced()
    with quiet, tempfile.TemporaryDirectory(prefix="psybench-score-") as tmp:
        work = Path(workdir) if workdir is not None else Path(tmp)
        rows = track_pipeline(track).score(entry, spec, cfg, experiment, work, given_stimuli=stimuli, given_gaze=gaze,
                              threads=threads, progress=line)
    line.done()
    rows["source"] = f"psybench.score({benchmark})"
    return _label_parameters(rows, spec)
