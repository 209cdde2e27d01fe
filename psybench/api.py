"""``psybench.score(model, benchmark)``: score one model from Python, without Snakemake.

The call runs the workflow's own library functions, stage by stage, in the order
the rules run them (``rules/motion.smk``: stimuli -> responses -> readouts ->
scores -> Table 1 -> score rows; ``rules/attention.smk``: stimuli -> gaze -> features ->
control scanpaths -> Table 1 parts -> Table 1 -> metrics -> score rows,
:mod:`psybench.attention.api`; ``rules/intphys.smk``: tree -> ingest -> metadata ->
training -> predictions -> scores -> score rows), on the same config (by default the repository's
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

import copy
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from psybench.config import PROJECT_ROOT, check_schema, read_config_file
from psybench.progress import Progress
from psybench.registry import TRACKS, ModelSpec, resolve_model

__all__ = ["score", "parse_benchmark", "score_config", "SCORABLE_TRACKS"]

#: Tracks :func:`score` runs in-process.
SCORABLE_TRACKS = ("motion", "attention", "intphys")
DEFAULT_CONFIG = PROJECT_ROOT / "config" / "config.yaml"


def parse_benchmark(benchmark: str) -> tuple[str, str | None]:
    """``"motion"`` -> ``("motion", None)``, ``"motion/barberpole"`` -> ``("motion", "barberpole")``.

    Raises
    ------
    ValueError
        An unknown track or experiment, naming the known ones.
    """
    import importlib

    track, _, experiment = str(benchmark).partition("/")
    if track not in TRACKS:
        raise ValueError(f"benchmark {benchmark!r}: unknown track {track!r}; tracks: {list(TRACKS)}")
    known = importlib.import_module(f"psybench.{track}").EXPERIMENTS
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


def _model_entry(model: Any, params: Mapping[str, Any] | None, name: str | None, kind: str | None) -> dict:
    if isinstance(model, Mapping):
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
    entry.setdefault("name", name or str(default_name).rpartition(":")[2])
    return entry


def _literature_path(cfg: Mapping[str, Any]) -> Path:
    """The literature file: as configured (relative to the working folder), else in the repository."""
    path = Path(cfg["literature"])
    if not path.is_absolute() and not path.exists() and (PROJECT_ROOT / path).exists():
        return PROJECT_ROOT / path
    return path


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


def _score_motion(spec: ModelSpec, cfg: Mapping[str, Any], experiment: str | None, work: Path, *,
                  stimuli: Path | None, threads: int, progress: _Steps) -> pd.DataFrame:
    from psybench.motion import EXPERIMENTS
    from psybench.motion.display import Display
    from psybench.motion.readouts import compute_readouts
    from psybench.motion.responses import run_motion_model
    from psybench.motion.score_rows import score_rows
    from psybench.motion.scores import score_model_stores
    from psybench.motion.stimuli import stimulus_set, write_stimulus
    from psybench.motion.table1 import write_table1

    experiments = [experiment] if experiment else list(EXPERIMENTS)
    specs = stimulus_set(cfg["motion"], display=Display.from_config(cfg["display"]), experiments=experiments)
    progress.start(total=2 * len(specs) + 2)
    responses, readouts = [], []
    for name, stim in specs.items():
        if stimuli is None:
            path = write_stimulus(name, stim, dict(cfg["display"]), work / "stimuli" / f"{name}.zarr")
        else:
            path = stimuli / f"{name}.zarr"
            if not path.exists():
                raise FileNotFoundError(f"stimulus store {path} is missing (stimuli={str(stimuli)!r} must hold "
                                        f"every stimulus of the config, {len(specs)} stores)")
        progress.step(f"stimulus {name}")
        out = work / "responses" / spec.name / f"{name}.zarr"
        responses.append(run_motion_model(spec, path, out, threads=threads))
        readouts.append(work / "readouts" / spec.name / f"{name}.zarr")
        progress.step(f"{spec.name} on {name}")
    compute_readouts(responses, readouts, lambda_ms=cfg["motion"]["readout"]["lambda_ms"])
    progress.step("pursuit readouts")
    scores, fits = work / "scores" / f"{spec.name}.csv", work / "fits" / f"{spec.name}.csv"
    score_model_stores(readouts, scores, fits, criteria=cfg["motion"]["criteria"],
                       literature_path=_literature_path(cfg))
    table = work / "table1.csv"
    write_table1([scores], table_csv=table, markdown=work / "table1.md", pareto_csv=work / "pareto.csv",
                 experiments=experiments)
    progress.step("criteria and scores")
    return score_rows(table, fits=[fits], results_root=work)


def _score_intphys(spec: ModelSpec, cfg: Mapping[str, Any], block: str | None,
                   work: Path, *, threads: int, progress: _Steps) -> pd.DataFrame:
    """rules/intphys.smk in order: (generate,) ingest, metadata, (train,) predict, scores, score rows."""
    from psybench.intphys.generate import generate_intphys
    from psybench.intphys.ingest import ingest_shard, merge_metadata
    from psybench.intphys.models.nextframe import train_nextframe_stores
    from psybench.intphys.responses import TRAINED_ALGORITHMS, predict_shard
    from psybench.intphys.score_rows import score_rows
    from psybench.intphys.scores import score_model
    from psybench.intphys.shards import count_movies, shard_ids

    ip = cfg["intphys"]
    trained = spec.algorithm.source == "builtin" and spec.algorithm.name in TRAINED_ALGORITHMS
    splits = [ip["eval_split"]] + ([ip["train_split"]] if trained and ip["train_split"] != ip["eval_split"] else [])
    root = work / "generated" if ip["generate"] else Path(ip["data_root"])
    generator = dict(ip["generator"]) if ip["generate"] else None
    shards = {split: shard_ids(count_movies(root, split, generator=generator), ip["shard_size"]) for split in splits}
    progress.start(total=sum(len(v) for v in shards.values()) + len(shards[ip["eval_split"]]) + 2)
    stores: dict[str, list[tuple[Path, Path]]] = {}
    for split in splits:
        if ip["generate"]:
            generate_intphys(root, split, threads=threads, **generator)
        for shard in shards[split]:
            store, table = (work / "stores" / split / f"shard_{shard}.{ext}" for ext in ("zarr", "csv"))
            ingest_shard(root, split, store, table, shard=int(shard), shard_size=ip["shard_size"], threads=threads)
            stores.setdefault(split, []).append((store, table))
            progress.step(f"ingest {split} shard {shard}")
    weights = None
    if trained:
        weights = train_nextframe_stores([s for s, _ in stores[ip["train_split"]]], work / "train" / "nextframe.npz",
                                         threads=threads, **ip["train"])
    metadata = work / "metadata.csv"
    merge_metadata([t for _, t in stores[ip["eval_split"]]], metadata, conditions=ip["conditions"])
    progress.step("metadata")
    predictions = []
    for i, (store, table) in enumerate(stores[ip["eval_split"]]):
        out = work / spec.name / "predictions" / f"shard_{i:04d}.csv"
        predict_shard(spec, store, table, out, weights=weights, threads=threads)
        predictions.append(out)
        progress.step(f"{spec.name} on shard {i:04d}")
    scores = work / spec.name / "scores.csv"
    score_model(spec.name, metadata, scores, work / spec.name / "answer.txt", predictions=predictions,
                n_boot=ip["n_boot"], seed=ip["seed"], min_ci=ip["min_quadruplets_ci"])
    progress.step("scores")
    rows = score_rows([scores], results_root=work)
    return rows if block is None else rows[rows["experiment"].astype(str).str.startswith(f"{block}/")]


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
        A registered algorithm (``"horn_schunck"``, see ``psybench models``), a
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
        The ``model`` column (default: the algorithm's or function's name).
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
        "frames_per_s": fps}`` (:func:`psybench.attention.api.score_attention`); default:
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
        Show the stages done and the time left on stderr.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`psybench.aggregate.table.SCORE_COLUMNS`, one row per
        (model, experiment, metric), as the workflow's
        ``results/aggregate/scores_<track>.csv`` holds for this model (attention: the
        Table 1 rows of ``model`` and the metrics rows of ``"<model> L=<L> untuned|tuned"``);
        ``source`` says ``psybench.score(<benchmark>)``.

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
    entry = _model_entry(model, params, name, kind)
    if L is not None:
        entry["L"] = L
    spec = resolve_model(entry, track=track)
    line = _Steps(f"psybench.score({spec.name!r}, {benchmark!r})", enabled=progress)
    with tempfile.TemporaryDirectory(prefix="psybench-score-") as tmp:
        work = Path(workdir) if workdir is not None else Path(tmp)
        if track == "motion":
            rows = _score_motion(spec, cfg, experiment, work, stimuli=Path(stimuli) if stimuli else None,
                                 threads=threads, progress=line)
        elif track == "attention":
            from psybench.attention.api import score_attention

            rows = score_attention(entry, spec, cfg, experiment, work, stimuli=stimuli, gaze=gaze, threads=threads,
                                   progress=line)
        else:
            rows = _score_intphys(spec, cfg, experiment, work, threads=threads, progress=line)
    line.done()
    rows["source"] = f"psybench.score({benchmark})"
    return rows
