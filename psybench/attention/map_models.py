"""Map-output attention models: one saliency map or log-density per frame, scored untuned.

A model of kind ``map`` outputs one map per frame of the RGB movie, the way the MIT
saliency benchmark scores models (Bylinskii et al. 2019) and DeepGaze-style networks
work (Kummerer, Wallis & Bethge 2016). The map is area-resized to the grid
(:func:`psybench.attention.deep_models.area_resize`; a log-density as its density, so
that the mass of each cell is kept) and scored without any tuning by the MIT metrics
(:func:`psybench.attention.metrics.score_frames`) and by the paper's rank percentile
(Shic & Scassellati 2007, sec. 5.2) of every observer's gaze (:func:`untuned_map_scores`).
:func:`centre_bias` is the built-in: the Gaussian centre prior that every saliency
benchmark reports as its baseline (Judd et al. 2009, sec. 4).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psybench.attention.deep_models import area_resize, rgb_batches
from psybench.attention.models import UNTUNED_MAP, map_row_model
from psybench.registry import ModelError, register

__all__ = ["MAP_OUTPUTS", "UNTUNED_MAP", "centre_bias", "maps_to_grid", "untuned_map_scores", "map_model_scores",
           "map_model_rows"]

#: What a map-output model's ``output`` parameter may say.
MAP_OUTPUTS = ("saliency", "log_density")



@register("centre_bias", track="attention", kind="map", reference="Judd et al. 2009, sec. 4 (centre prior)",
          bounds={"sigma_frac": (0, None)})
def centre_bias(frames: np.ndarray, *, sigma_frac: float = 0.25, output: str = "log_density") -> np.ndarray:
    """Centre-bias log-density, the same map for every frame, shape (B, H, W) float32.

    An isotropic Gaussian centred on the frame, SD ``sigma_frac`` x its larger side
    (:func:`psybench.attention.metrics.centre_baseline`, normalised to sum 1), as a
    log-density: the centre prior that saliency benchmarks report as a baseline
    (Judd et al. 2009, sec. 4). ``output`` says how psybench reads the maps
    (:func:`maps_to_grid`); this model gives a log-density only.
    """
    from psybench.attention.metrics import centre_baseline

    f = np.asarray(frames)
    if f.ndim != 4:
        raise ValueError(f"centre_bias: frames must be (B, H, W, 3), got {f.shape}")
    if not sigma_frac > 0:
        raise ValueError(f"centre_bias: sigma_frac must be > 0, got {sigma_frac!r}")
    if output != "log_density":
        raise ValueError(f"centre_bias: output must be 'log_density' (its maps are log-densities), got {output!r}")
    log_p = np.log(centre_baseline(f.shape[1:3], sigma_frac=sigma_frac)).astype(np.float32)
    return np.broadcast_to(log_p, (f.shape[0], *log_p.shape)).copy()


def maps_to_grid(maps: np.ndarray, grid_shape: Sequence[int], *, output: str = "saliency") -> np.ndarray:
    """A map model's maps (T, h, w) on the model grid (T, H, W), float64.

    ``output="saliency"``: area-resized as they are. ``output="log_density"``: the
    density ``exp(log p)`` (normalised per frame) is area-resized and normalised
    again, so that each grid cell holds the probability mass it covers.
    """
    if output not in MAP_OUTPUTS:
        raise ValueError(f"map output must be one of {list(MAP_OUTPUTS)}, got {output!r}")
    m = np.asarray(maps, np.float64)
    if m.ndim != 3:
        raise ValueError(f"maps must have shape (T, h, w), got {m.shape}")
    if output == "log_density":
        m = np.exp(m - m.max(axis=(1, 2), keepdims=True))
        m /= m.sum(axis=(1, 2), keepdims=True)
    g = area_resize(m, grid_shape).astype(np.float64)
    if output == "log_density":
        g /= g.sum(axis=(1, 2), keepdims=True)
    return g


def untuned_map_scores(maps: np.ndarray, observer_counts: np.ndarray, *, ties: str = "mid",
                       **score_kwargs) -> dict[str, float]:
    """Scores of an untuned map model on one movie's frames: the MIT metrics and the rank percentile.

    Parameters
    ----------
    maps : ndarray, shape (T, H, W)
        The model's maps on the grid (:func:`maps_to_grid`).
    observer_counts : ndarray, shape (N, T, H, W)
        Per-observer fixation counts on the same frames
        (:func:`psybench.attention.metrics.observer_counts`).
    ties, **score_kwargs
        Of :func:`psybench.attention.evaluate.rank_percentiles` and
        :func:`psybench.attention.metrics.score_frames`.

    Returns
    -------
    dict: every MIT metric (mean over frames with fixations) and ``rank_percentile``:
    each observer's median rank percentile (%) of the gazed cell over the frames
    it fixates (sec. 5.2, the paper's tie rule as configured), mean over observers --
    the statistic of the ``n ma`` group, here with the map in place of a tuned filter.
    """
    from psybench.attention.evaluate import rank_percentiles
    from psybench.attention.metrics import score_frames

    maps = np.asarray(maps, np.float64)
    oc = np.asarray(observer_counts)
    if oc.ndim != 4 or oc.shape[1:] != maps.shape:
        raise ValueError(f"observer counts {oc.shape} must be (N, *maps.shape) with maps {maps.shape}")
    scores = score_frames(maps, oc.sum(0), **score_kwargs)
    meds = []
    for o in range(oc.shape[0]):
        t_ok = oc[o].sum((1, 2)) > 0
        if t_ok.any():
            cells = oc[o][t_ok].reshape(int(t_ok.sum()), -1).argmax(1)
            R = rank_percentiles(maps[t_ok].reshape(int(t_ok.sum()), -1), cells, ties=ties)
            meds.append(float(np.median(R)) * 100)
    scores["rank_percentile"] = float(np.mean(meds)) if meds else float("nan")
    return scores


def map_model_scores(
    model: Any,
    stimulus: str | os.PathLike,
    gaze_table: Any,
    *,
    movie_file: str | os.PathLike | None = None,
    same_movie: bool = False,
    lags_ms: Sequence[float] | None = None,
    threads: int = 1,
    density_sigma: float | None = None,
    n_splits: int | None = None,
    seed: int | None = None,
    evaluation: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, float]]:
    """A map-output model scored untuned on one test movie, with the leave-one-observer-out ceiling.

    The model (a resolved spec, its description or config entry, kind ``map``) is built
    once (:func:`psybench.deep.built`), run on the movie's RGB frames in batches of its
    ``batch_size`` (:func:`rgb_batches`), put on the grid (:func:`maps_to_grid`, its
    ``output`` parameter, default "saliency") and scored on the test frames of
    :func:`psybench.attention.split.pair_frames` under ``evaluation`` (the
    ``attention.evaluation`` split keys; the held-out frames when the movie also trained
    the other models, ``same_movie``, the gap from this model's maps), frame t by the map of the frame shown
    ``lags_ms[0]`` before it, as the metrics' untuned feature maps are.

    Returns
    -------
    ``{"scores": untuned_map_scores(...), "ceiling": loo_ceiling(...), "chance": noise_chance(...)}``
    (:func:`psybench.attention.metrics.noise_chance`: levels and standard errors).
    """
    from psybench.deep import built
    from psybench.handoff import as_model

    spec = as_model(model, track="attention")
    if spec.kind != "map":
        raise ModelError(f"model {spec.name!r} is of kind {spec.kind!r}, not 'map'")
    with built(spec, threads=threads) as (net, _device):
        grid = _grid_maps(spec, net, stimulus, movie_file)
    return _score_grid(grid, stimulus, gaze_table, same_movie=same_movie, lags_ms=lags_ms,
                       density_sigma=density_sigma, n_splits=n_splits, seed=seed, evaluation=evaluation)


def _grid_maps(spec: Any, net: Any, stimulus: str | os.PathLike, movie_file: str | os.PathLike | None) -> np.ndarray:
    """A built map model's maps of every frame of the movie, on the stimulus's grid (T, H, W) float64."""
    from psybench.attention.stimuli import read_stimulus

    output = spec.params.get("output", "saliency")
    stim = read_stimulus(stimulus)
    gw, gh = (int(g) for g in stim.attrs["grid"])
    raw = []
    for batch in rgb_batches(stim, movie_file=movie_file, batch_size=spec.batch_size):
        m = np.asarray(net(batch))
        if m.shape[:1] != (len(batch),) or m.ndim != 3:
            raise ModelError(f"model {spec.name!r}: maps of a batch of {len(batch)} frames must be (b, h, w), "
                             f"got {m.shape}")
        raw.append(area_resize(m, (gh, gw)) if output == "saliency" else maps_to_grid(m, (gh, gw), output=output))
    return np.concatenate(raw).astype(np.float64)


def _score_grid(grid: np.ndarray, stimulus: str | os.PathLike, gaze_table: Any, *, same_movie: bool,
                lags_ms: Sequence[float] | None, density_sigma: float | None, n_splits: int | None,
                seed: int | None, evaluation: Mapping[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """:func:`map_model_scores` of maps already on the grid."""
    from psybench.attention.defaults import DENSITY_SIGMA, LAGS_MS, N_SPLITS, SEED, EvaluationSettings
    from psybench.attention.metrics import loo_ceiling, noise_chance, observer_counts
    from psybench.attention.movies import MovieData
    from psybench.attention.split import pair_frames
    from psybench.attention.stimuli import read_stimulus
    from psybench.attention.tuning import lag_frames, test_frames
    from psybench.io.tables import read_table

    stim = read_stimulus(stimulus)
    gaze = gaze_table if not isinstance(gaze_table, (str, os.PathLike)) else read_table(gaze_table)
    movie = MovieData(name=Path(stimulus).stem, maps=grid[..., None], frames_per_s=float(stim.attrs["frames_per_s"]),
                      source_size=tuple(stim.attrs["source_size"]), gaze=gaze)
    lags = lag_frames(LAGS_MS if lags_ms is None else lags_ms, movie.frames_per_s)
    if same_movie:
        frames = pair_frames(movie, movie, lags, EvaluationSettings.from_config(dict(evaluation or {})))[1]
    else:
        frames = test_frames(len(grid), lags, same_movie=False)
    oc = observer_counts(movie, frames)
    settings = {"density_sigma": DENSITY_SIGMA if density_sigma is None else density_sigma,
                "n_splits": N_SPLITS if n_splits is None else n_splits, "seed": SEED if seed is None else seed}
    return {"scores": untuned_map_scores(grid[frames - lags[0]], oc, **settings),
            "ceiling": loo_ceiling(oc, **settings), "chance": noise_chance(oc.sum(0), **settings)}


def map_model_rows(
    model: Any,
    test: str,
    trains: Sequence[str],
    stimulus: str | os.PathLike,
    gaze_table: Any,
    *,
    movie_file: str | os.PathLike | None = None,
    lags_ms: Sequence[float] | None = None,
    threads: int = 1,
    density_sigma: float | None = None,
    n_splits: int | None = None,
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    evaluation: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """A map model's rows of the metrics table on one test movie, one set per (train, ``test``) pair.

    The model is built once (:func:`psybench.deep.built`) and run once on the test
    movie; each pair is scored as :func:`map_model_scores` scores it (``same_movie``
    when the training movie is the test movie: the held-out frames of the split in
    ``evaluation``, as for the tuned models). The rows have the columns of
    :func:`psybench.attention.metrics.run_metrics`,
    ``model`` = ``"<name> untuned map"``, ``tuning`` = ``"untuned map"`` (no Fisher
    tuning: the map is scored as the model gives it), ``L`` empty, and the
    leave-one-observer-out ceiling of the same frames; ``rank_percentile`` is the
    paper's statistic (Shic & Scassellati 2007, sec. 5.2), higher is better.
    """
    from psybench.attention.chance import chance_columns
    from psybench.attention.metrics import METRIC_DIRECTIONS
    from psybench.deep import built
    from psybench.handoff import as_model
    from psybench.io.tables import write_table

    spec = as_model(model, track="attention")
    if spec.kind != "map":
        raise ModelError(f"model {spec.name!r} is of kind {spec.kind!r}, not 'map'")
    with built(spec, threads=threads) as (net, _device):
        grid = _grid_maps(spec, net, stimulus, movie_file)
    rows = []
    for tr in trains:
        result = _score_grid(grid, stimulus, gaze_table, same_movie=tr == test, lags_ms=lags_ms,
                             density_sigma=density_sigma, n_splits=n_splits, seed=seed, evaluation=evaluation)
        for metric, value in result["scores"].items():
            rows.append({
                "model": map_row_model(spec.name), "metric": metric, "value": value,
                "direction": METRIC_DIRECTIONS.get(metric, "higher"), "features": spec.name, "L": None,
                "tuning": UNTUNED_MAP, "train": tr, "test": test,
                "ceiling": result["ceiling"].get(metric, float("nan")),
                **chance_columns(metric, value, *result["chance"], result["ceiling"].get(metric, float("nan"))),
            })
    table = pd.DataFrame(rows)
    if out is not None:
        write_table(table, out)
    return table


def write_map_model_rows(out: str | os.PathLike, *args: Any, **kwargs: Any) -> Path:
    """:func:`map_model_rows` written to the table ``out`` (CSV and Parquet): the workflow's map-scores stage."""
    from psybench.io.tables import write_table

    return write_table(map_model_rows(*args, **kwargs), out)
