"""Entry points of the attention track's Snakemake rules, one per rule, driven by config dicts.

Each function validates its part of the ``attention`` config section (errors name
the key) and calls the library; the scripts in ``scripts/attention_*.py`` only
forward ``snakemake.input``/``params``/``output`` here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from psybench.attention import gaze as gz
from psybench.attention import stimuli as st
from psybench.io.store import open_store
from psybench.io.tables import write_table

__all__ = ["make_stimulus", "make_gaze", "make_features", "make_table1", "make_metrics"]


def make_stimulus(movie: str, spec: Mapping[str, Any], out: str | os.PathLike, *, grid: Sequence[int], chunk_frames: int = 256) -> Path:
    """Render (``popout``) or ingest (``file``) movie ``movie`` of the config to ``out``."""
    if "popout" in spec and "file" in spec:
        raise ValueError(f"attention.movies.{movie}: give either 'popout' or 'file', not both")
    if "popout" in spec:
        return st.write_popout_store(out, grid=tuple(grid), **dict(spec["popout"] or {}))
    if "file" in spec:
        return st.ingest_movie(
            spec["file"], out, grid=tuple(grid), chunk_frames=chunk_frames,
            frames_per_s=spec.get("frames_per_s"), px_per_deg=spec.get("px_per_deg"),
            max_frames=spec.get("max_frames"),
        )
    raise ValueError(f"attention.movies.{movie}: needs a 'popout' or a 'file' entry")


def make_gaze(movie: str, spec: Mapping[str, Any], stimulus: str | os.PathLike, out: str | os.PathLike) -> pd.DataFrame:
    """Per-frame gaze table of ``movie``: synthetic observers (``observers``) or loaded files (``gaze``)."""
    store = open_store(stimulus)
    fps = float(store.attrs["frames_per_s"])
    n_frames = int(store["frames"].shape[0])
    if "observers" in spec:
        if "target_xy" not in store.arrays:
            raise ValueError(f"attention.movies.{movie}.observers needs a rendered popout movie (with a planted target)")
        obs = dict(spec["observers"])
        if "p_target" not in obs:
            raise ValueError(f"attention.movies.{movie}.observers lacks 'p_target' (one preference per observer)")
        samples = gz.synthetic_observers(
            np.asarray(store["target_xy"]), np.asarray(store["lure_xy"]),
            frames_per_s=fps, source_size=tuple(store.attrs["source_size"]), movie=movie, **obs,
        )
    elif "gaze" in spec:
        files = spec["gaze"] if isinstance(spec["gaze"], (list, tuple)) else [spec["gaze"]]
        if not files:
            raise ValueError(f"attention.movies.{movie}.gaze lists no file")
        fmt = spec.get("gaze_format", "auto")
        samples = pd.concat([gz.load_gaze(f, fmt=fmt) for f in files], ignore_index=True)
        samples["movie"] = movie
    else:
        raise ValueError(f"attention.movies.{movie}: needs 'observers' (synthetic) or 'gaze' (files)")
    ivt = spec.get("ivt") or {}
    if ivt.get("enabled", False):
        ppd = ivt.get("px_per_deg") or store.attrs.get("px_per_deg")
        if not ppd:
            raise ValueError(f"attention.movies.{movie}.ivt: px_per_deg is unknown; set ivt.px_per_deg")
        samples = gz.ivt_filter(samples, px_per_deg=float(ppd), threshold_deg_s=float(ivt.get("threshold_deg_s", 30.0)))
    table = gz.resample_to_frames(samples, frames_per_s=fps, n_frames=n_frames, movie=movie)
    write_table(table, out)
    return table


def make_features(kind: str, params: Mapping[str, Any], stimulus, out, *, chunk_frames: int, lags_ms, threads: int = 1, code_hash=None) -> Path:
    """Feature store of one stimulus for one feature kind."""
    from psybench.attention.features import FEATURE_KINDS, write_feature_store

    if kind not in FEATURE_KINDS:
        raise ValueError(f"attention.features: unknown kind {kind!r}; known: {FEATURE_KINDS}")
    return write_feature_store(
        stimulus, out, kind=kind, chunk_frames=int(chunk_frames), lags_ms=tuple(lags_ms),
        num_workers=max(1, int(threads)), code_hash=code_hash, **dict(params or {}),
    )


def _stores(paths: Sequence[str], kinds_movies: Sequence[tuple[str, str]]):
    out: dict[str, dict[str, str]] = {}
    for p, (kind, movie) in zip(paths, kinds_movies):
        out.setdefault(movie, {})[kind] = p
    return out


def make_table1(feature_paths, feature_keys, gaze_paths, gaze_movies, *, table, curves, figure, cfg: Mapping[str, Any]):
    """Table 1, curves and figure (see :func:`psybench.attention.evaluate.run_evaluation`)."""
    from psybench.attention.evaluate import run_evaluation

    ev = dict(cfg.get("evaluation") or {})
    return run_evaluation(
        _stores(feature_paths, feature_keys), dict(zip(gaze_movies, gaze_paths)),
        table_path=table, curves_path=curves, figure_path=figure,
        models=cfg["models"], pairs=[tuple(p) for p in cfg["pairs"]], lags_ms=tuple(cfg.get("lags_ms", (100, 300))),
        **ev,
    )


def make_metrics(feature_paths, feature_keys, gaze_paths, gaze_movies, *, out, cfg: Mapping[str, Any]):
    """Saliency metrics table (see :func:`psybench.attention.metrics.run_metrics`)."""
    from psybench.attention.metrics import run_metrics

    ev = dict(cfg.get("evaluation") or {})
    m = dict(cfg.get("metrics") or {})
    return run_metrics(
        _stores(feature_paths, feature_keys), dict(zip(gaze_movies, gaze_paths)),
        models=cfg["models"], pairs=[tuple(p) for p in cfg["pairs"]], out=out,
        lags_ms=tuple(cfg.get("lags_ms", (100, 300))),
        n_negatives=int(ev.get("n_negatives", 15)), min_dist_frac=float(ev.get("min_dist_frac", 0.3125)),
        seed=int(ev.get("seed", 0)), in_memory_mb=ev.get("in_memory_mb"), **m,
    )


# --- helpers for rules/attention.smk (kept here so the rule file holds rules only) -----
def rule_movies(att: Mapping[str, Any]) -> list[str]:
    """Movie names used by the (train, test) pairs of the ``attention`` config."""
    movies = sorted({m for pair in att.get("pairs", []) for m in pair})
    unknown = [m for m in movies if m not in (att.get("movies") or {})]
    if unknown:
        raise ValueError(f"attention.pairs name movie(s) {unknown} missing from attention.movies")
    return movies


def rule_kinds(att: Mapping[str, Any]) -> list[str]:
    """Feature kinds used by ``attention.models``."""
    return sorted({m["features"] for m in att.get("models", [])})


def rule_feature_keys(att: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, movie) of every feature store the evaluation reads, in input order."""
    return [(k, m) for k in rule_kinds(att) for m in rule_movies(att)]


def rule_feature_paths(att: Mapping[str, Any]) -> list[str]:
    return [f"results/attention/features/{k}/{m}.zarr" for k, m in rule_feature_keys(att)]


def rule_gaze_paths(att: Mapping[str, Any]) -> list[str]:
    return [f"results/attention/gaze/{m}.csv" for m in rule_movies(att)]


def rule_targets(att: Mapping[str, Any]) -> list[str]:
    """Final outputs of the attention track (for the main ``rule all``)."""
    if not att:
        return []
    return [
        "results/attention/table1.csv",
        "results/attention/curves.csv",
        "results/attention/curves.png",
        "results/attention/metrics.csv",
    ]


def rule_movie_spec(att: Mapping[str, Any], wildcards) -> Mapping[str, Any]:
    """``attention.movies[<movie>]`` for a rule's wildcards."""
    try:
        return att["movies"][wildcards.attention_movie]
    except KeyError:
        raise ValueError(f"attention.movies has no movie {wildcards.attention_movie!r}") from None


def rule_feature_params(att: Mapping[str, Any], wildcards) -> Mapping[str, Any]:
    """``attention.features[<kind>]`` (parameters of the feature model) for a rule's wildcards."""
    return dict((att.get("features") or {}).get(wildcards.attention_kind) or {})
