"""The readouts, then the scores, of one model on every generalisation run, one process each.

The generalisation runs (:mod:`psybench.motion.generalisation`) go through the same
stages as the main run: pursuit readouts (:mod:`psybench.motion.readouts`, Tlapale et
al. 2010, RR-7317 eq. 3) and criteria and fits (:mod:`psybench.motion.scores`). The
workflow runs each stage in one job per model for all runs (:func:`run_readouts`, then
:func:`run_scores`: start-up paid once per batch, not per run); every run keeps its own
readout folder and its own score and fit tables, identical to those of a run scored alone. Held out: nothing here is
tuned on them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run_readouts", "run_scores"]


def _same_runs(what: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    if set(a) != set(b):
        raise ValueError(f"{what}: runs {sorted(a)} do not match outputs {sorted(b)}")


def run_readouts(
    responses: Mapping[str, Sequence[str | os.PathLike]],
    out_dirs: Mapping[str, str | os.PathLike],
    **kwargs: Any,
) -> dict[str, list[Path]]:
    """Readout stores of every run: ``out_dirs[run]/<stimulus>.zarr`` per response store.

    Parameters
    ----------
    responses : mapping of str to sequence of path-like
        Per run, one model's response stores (one per stimulus).
    out_dirs : mapping of str to path-like
        Per run, the folder of its readout stores (same runs as ``responses``).
    **kwargs
        Passed to :func:`psybench.motion.readouts.compute_readout` (``lambda_ms``,
        ``code_hash``).

    Returns
    -------
    dict of str to list of pathlib.Path
        Per run, its readout stores in the order of its responses.

    Raises
    ------
    ValueError
        If the runs of the two mappings differ.
    """
    from psybench.motion.readouts import compute_readouts

    _same_runs("generalisation readouts", responses, out_dirs)
    out = {}
    for run, paths in responses.items():
        paths = [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
        Path(out_dirs[run]).mkdir(parents=True, exist_ok=True)
        out[run] = compute_readouts(paths, [Path(out_dirs[run]) / p.name for p in paths], **kwargs)
    return out


def run_scores(
    readout_dirs: Mapping[str, str | os.PathLike],
    scores_out: Mapping[str, str | os.PathLike],
    fits_out: Mapping[str, str | os.PathLike],
    **kwargs: Any,
) -> dict[str, tuple[Path, Path]]:
    """Score and fit tables of every run from its readout folder.

    Parameters
    ----------
    readout_dirs : mapping of str to path-like
        Per run, the folder of one model's readout stores (``*.zarr``).
    scores_out, fits_out : mapping of str to path-like
        Per run, its score and fit tables (same runs as ``readout_dirs``).
    **kwargs
        Passed to :func:`psybench.motion.scores.score_model_stores` (``criteria``,
        ``literature_path``).

    Returns
    -------
    dict of str to (pathlib.Path, pathlib.Path)

    Raises
    ------
    ValueError
        If the runs differ, or a run's folder holds no readout store.
    """
    from psybench.motion.scores import score_model_stores

    _same_runs("generalisation scores", readout_dirs, scores_out)
    _same_runs("generalisation fits", readout_dirs, fits_out)
    out = {}
    for run, folder in readout_dirs.items():
        stores = sorted(Path(folder).glob("*.zarr"))
        if not stores:
            raise ValueError(f"generalisation run {run!r}: no readout store in {folder}")
        out[run] = score_model_stores(stores, scores_out[run], fits_out[run], **kwargs)
    return out
