"""What people read: criterion labels with units, readable entry names, the headline criteria.

The long score table (:mod:`psybench.aggregate.table`) names a criterion
``track/experiment/metric`` (``intphys/all/all/all/all/L_R``) and an entry
``model`` or ``model@params_hash``.  Those stay the keys of every file; this module
only turns them into what a page or a terminal shows, and says which criteria a
leaderboard ranks by default (the CLI and the report share it, so they rank alike):

* :func:`headline_criteria` drops the verdict columns (``passed``, 1/0): a verdict is
  the thresholded error of the same experiment (Tlapale et al. 2010, RR-7317,
  Table 1 prints it next to the error), so ranking on both counts each experiment
  twice and turns the ranks into a vote of pass marks.
* :func:`criterion_label` / :func:`criterion_unit`: "barber pole: direction error
  (deg)", "IntPhys all blocks: relative error rate L_R (fraction)".
* :func:`setting_names`: a readable name (``L=1``) for each parameter hash, so an
  entry reads ``pyramid L=1`` rather than ``pyramid@ab00194ed2f50575``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from psybench.provenance import params_hash
from psybench.registry import TRACKS
from psybench.tracks import Metric, find_metric, headline_metrics, track_package
from psybench.tracks import track_metrics as declared_metrics

__all__ = [
    "VERDICT_METRICS",
    "headline_criteria",
    "track_metrics",
    "criterion_problem",
    "criterion_unit",
    "criterion_label",
    "setting_name",
    "setting_names",
]

#: Metrics that are 0/1 verdicts derived from another criterion of the same experiment.
VERDICT_METRICS = ("passed",)

_EXPERIMENTS = {"barberpole": "barber pole", "diamonds": "diamonds", "dashed_bars": "dashed bars",
                "grating_size": "grating size"}
# A track's title, and a metric's label, unit and direction, are declared by the track (psybench.tracks.Metric,
# the track package's METRICS), read here through psybench.tracks.
_INTPHYS_PARTS = ("block", "visibility", "motion", "objects")


def headline_criteria(criteria: Iterable[str]) -> list[str]:
    """The criteria a leaderboard ranks by default: all but the 0/1 verdicts (kept if nothing else is left).

    A track that declares ``HEADLINE_METRICS`` (:func:`psybench.tracks.headline_metrics`)
    is ranked on those metrics only, where it has any: attention on Table 1's ``n un``
    group (Shic & Scassellati 2007, sec. 5.2), not on the chance controls scored with the
    same model nor on the map metrics of its tuned and untuned maps, so each model and
    setting is one entry and the fronts separate them.

    Parameters
    ----------
    criteria : iterable of str
        Criterion names ``track/experiment/metric``, in order.

    Returns
    -------
    list of str
        Same order, without criteria whose metric is in :data:`VERDICT_METRICS`.

    Examples
    --------
    >>> headline_criteria(["motion/diamonds/error", "motion/diamonds/passed"])
    ['motion/diamonds/error']
    """
    criteria = list(criteria)
    kept = [c for c in criteria if c.rsplit("/", 1)[-1] not in VERDICT_METRICS]
    by_track: dict[str, list[str]] = {}
    for c in kept:
        by_track.setdefault(c.split("/", 1)[0], []).append(c)
    keep = set()
    for track, names in by_track.items():
        wanted = headline_metrics(track) if track in TRACKS else None
        chosen = [c for c in names if c.rsplit("/", 1)[-1] in wanted] if wanted else []
        keep.update(chosen or names)
    kept = [c for c in kept if c in keep]
    return kept or criteria


# the factors of an IntPhys experiment, psybench.intphys.metrics.FACTORS
_INTPHYS_SHAPE = "intphys/<block>/<visibility>/<motion>/<n_objects>/<metric> (all/all/all/all for every movie)"


def _declared(track: str, metric: str) -> Metric | None:
    """The declaration of ``metric`` by ``track`` (None for an unknown track or metric)."""
    return find_metric(track, metric) if track in TRACKS else None


def track_metrics(track: str) -> list[str]:
    """The metrics the long table holds for ``track`` (those its package declares), sorted.

    Families named by a prefix (attention's ``median_rp_<group>``) are not listed;
    :func:`criterion_problem` matches them by their prefix.
    """
    return sorted(m.name for m in declared_metrics(track) if not m.prefix)


def criterion_problem(criterion: str, *, tracks: Sequence[str],
                      experiments: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """Why ``criterion`` names no score a run with ``tracks`` writes, or None.

    A criterion is ``track/experiment/metric`` (:func:`psybench.aggregate.table.criterion_name`):
    its track must be run, its metric one the track writes (:func:`track_metrics`), its
    experiment's first part one of ``experiments[track]`` where given (the motion
    experiments; attention's ``<train>_on_<test>`` pairs), and an IntPhys experiment
    has the four factors of :data:`psybench.intphys.metrics.FACTORS`.

    Returns
    -------
    str or None
        A sentence to follow the criterion in a message.

    Examples
    --------
    >>> criterion_problem("motion/diamonds/eror", tracks=["motion"])
    "has the metric 'eror', which track motion does not write (its metrics: ['error', 'gaussian_score', 'passed'])"
    """
    track, experiment, metric = _split(criterion)
    if track not in TRACKS:
        return f"names no track ({list(TRACKS)}): write track/experiment/metric, e.g. motion/diamonds/error"
    if track not in tracks:
        return f"belongs to track {track}, which is not run (tracks: {list(tracks)})"
    metrics = track_metrics(track)
    if _declared(track, metric) is None:
        prefixes = [f"{m.name}<group>" for m in declared_metrics(track) if m.prefix]
        return f"has the metric {metric!r}, which track {track} does not write (its metrics: {metrics + prefixes})"
    if track == "intphys" and len(experiment) != 4:
        return f"is not of the form {_INTPHYS_SHAPE}"
    known = (experiments or {}).get(track)
    if known is not None and (not experiment or experiment[0] not in known):
        return (f"has the experiment {'/'.join(experiment)!r}, which track {track} does not run "
                f"(its experiments: {sorted(known)})")
    return None


def _split(criterion: str) -> tuple[str, list[str], str]:
    parts = criterion.split("/")
    if len(parts) == 1:
        return "", [], parts[0]
    return parts[0], parts[1:-1], parts[-1]


def criterion_unit(criterion: str) -> str:
    """Unit of a criterion's value ("deg", "fraction", "SD" ...; "" when unknown), as its track declares it.

    Motion's error is in deg for the direction experiments and dimensionless for the
    grating size; attention's rank-percentile medians (``median_rp_*``, Shic &
    Scassellati 2007, sec. 5) are fractions of the map's cells.
    """
    track, experiment, metric = _split(criterion)
    declared = _declared(track, metric)
    return "" if declared is None else declared.unit_of(experiment[0] if experiment else "")


def _experiment_text(track: str, experiment: list[str]) -> str:
    if track == "intphys" and experiment:
        named = [f"{name} {v}" if name in ("block", "motion") else (f"{v} objects" if name == "objects" else v)
                 for name, v in zip(_INTPHYS_PARTS, experiment) if v != "all"]
        return ", ".join(named) or "all blocks"
    if track == "attention" and experiment and "_on_" in experiment[0]:
        train, test = experiment[0].split("_on_", 1)
        return ", ".join([f"trained on {train}, tested on {test}"] + experiment[1:])
    return ", ".join([_EXPERIMENTS.get(experiment[0], experiment[0].replace("_", " "))] + experiment[1:]
                     if experiment else [])


def criterion_label(criterion: str, *, with_track: bool = True) -> str:
    """A criterion as a person reads it, with its unit.

    Examples
    --------
    >>> criterion_label("motion/barberpole/error")
    'Motion barber pole: error (deg)'
    >>> criterion_label("intphys/all/all/all/all/L_R")
    'IntPhys all blocks: relative error rate L_R (fraction)'
    """
    track, experiment, metric = _split(criterion)
    declared = _declared(track, metric)
    if declared is None:
        name = metric.replace("_", " ")
    elif declared.prefix:  # a family: its label and the member ("median rank percentile n un")
        name = f"{declared.label} {metric[len(declared.name):].replace('_', ' ')}".strip()
    else:
        name = declared.label
    unit = criterion_unit(criterion)
    title = track_package(track).TITLE if track in TRACKS else track
    head = " ".join(p for p in (title if with_track else "", _experiment_text(track, experiment))
                    if p)
    text = f"{head}: {name}" if head else name
    return f"{text} ({unit})" if unit else text


def setting_name(params: Mapping[str, Any]) -> str:
    """Readable name of one parameter set: ``"L=1"``, ``"feedback_gain=0.0, L=3"`` (keys sorted)."""
    return ", ".join(f"{k}={params[k]}" for k in sorted(params))


def setting_names(param_sets: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``{params_hash(p): setting_name(p)}`` for each parameter set (the long table's ``params_hash``)."""
    return {params_hash(dict(p)): setting_name(p) for p in param_sets}


# ---------------------------------------------------------------------------- entries


def _optional(long_df, column: str):
    """An optional text column of the long table ("" where absent or missing)."""
    import pandas as pd

    if column not in long_df.columns:
        return pd.Series("", index=long_df.index, dtype=object)
    return long_df[column].astype(object).where(long_df[column].notna(), "").map(lambda v: str(v).strip())


def in_model(long_df, model: str):
    """Rows of one model for an intra-technique comparison: ``model`` equal to it, or ``algorithm`` (optional)."""
    return (long_df["model"] == model) | (_optional(long_df, "algorithm") == model)


def entry_labels(long_df, *, intra: bool):
    """Entry label of each row of the long table.

    Inter-technique: ``model``; for a model with several parameter sets, ``model
    setting`` when the optional ``setting`` column names the set (``pyramid L=1``),
    else ``model@params_hash``.  Intra-technique (the rows of one model or
    algorithm): the model names when they differ (the settings of one algorithm,
    each configured under its own name, e.g. ``tlapale_v1mt_nofeedback``), else the
    setting, else the parameter hash ("default" if empty).

    Parameters
    ----------
    long_df : pandas.DataFrame, shape (n_rows, ...)
        Long score table (optional columns ``setting``, ``algorithm``).
    intra : bool
        Intra-technique labelling.

    Returns
    -------
    pandas.Series of str, shape (n_rows,)
    """
    setting = _optional(long_df, "setting")
    hashes = long_df["params_hash"]
    if intra and long_df["model"].nunique() <= 1:
        named = setting.where(setting != "", hashes)
        return named.where(named != "", "default")
    n_sets = long_df.groupby("model")["params_hash"].transform("nunique")
    with_hash = (n_sets > 1) & (hashes != "")
    suffix = (" " + setting).where(setting != "", "@" + hashes)
    return long_df["model"].where(~with_hash, long_df["model"] + suffix)


def annotate(long_df, *, algorithms: Mapping[str, str] | None = None, settings: Mapping[str, str] | None = None):
    """Add the optional ``algorithm`` and ``setting`` columns to a long score table.

    Parameters
    ----------
    long_df : pandas.DataFrame
        Long score table.
    algorithms : mapping {model: algorithm}, optional
        The algorithm each configured model runs (its intra-technique family);
        models not in it are their own algorithm.
    settings : mapping {params_hash: name}, optional
        Readable name of each parameter hash (:func:`setting_names`).

    Returns
    -------
    pandas.DataFrame
        A copy with columns ``algorithm`` and ``setting`` ("" where unnamed).
    """
    algorithms, settings = dict(algorithms or {}), dict(settings or {})
    out = long_df.copy()
    out["algorithm"] = [algorithms.get(m, m) for m in out["model"]]
    out["setting"] = [settings.get(h, "") if h else "" for h in out["params_hash"]]
    return out
