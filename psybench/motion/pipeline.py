"""The motion track's chain: each stage's function, named once, for the workflow and for ``psybench.score``.

``scripts/motion_<stage>.py`` call these names, one per rule of ``rules/motion.smk``,
and :func:`score` calls the same functions in the rules' order for one model in one
process (Tlapale et al. 2010, sec. 3-4): stimuli -> responses -> readouts -> scores ->
Table 1 -> score rows; the figures and the generalisation runs are :data:`OTHER_STAGES`.
Each name is loaded on first use (:mod:`psybench._lazy`), so a job imports, and its
rule's code hash covers (:func:`psybench.provenance.rule_code_hash`), its own stage only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psybench._lazy import lazy_exports

if TYPE_CHECKING:
    import pandas as pd

    from psybench.registry import ModelSpec

#: The stages in the order the rules and :func:`score` run them: name -> ``module:function``.
STAGES = {
    "stimuli": "psybench.motion.stimuli.store:write_stimuli",
    "responses": "psybench.motion.responses:run_motion_model_batch",
    "readouts": "psybench.motion.readouts:compute_readouts",
    "scores": "psybench.motion.scores:score_model_stores",
    "table1": "psybench.motion.table1:write_table1",
    "score_rows": "psybench.motion.score_rows:score_rows",
}
#: The workflow's other motion stages (rules ``motion_<stage>``), not part of a score.
OTHER_STAGES = {
    "figures_stimuli": "psybench.motion.figures:stimuli_montage",
    "figures_model": "psybench.motion.figures:model_figures",
    "figures_barberpole": "psybench.motion.figures:barberpole_figure",
    "generalisation_readouts": "psybench.motion.generalisation_runs:run_readouts",
    "generalisation_scores": "psybench.motion.generalisation_runs:run_scores",
    "generalisation": "psybench.motion.generalisation:write_generalisation",
}
__all__ = ["STAGES", "OTHER_STAGES", *STAGES, *OTHER_STAGES, "score"]
__getattr__, __dir__ = lazy_exports(__name__, {**STAGES, **OTHER_STAGES})


def _literature_path(cfg: Mapping[str, Any]) -> Path:
    """The literature file: as configured (relative to the working folder), else in the repository."""
    from psybench.config import PROJECT_ROOT

    path = Path(cfg["literature"])
    if not path.is_absolute() and not path.exists() and (PROJECT_ROOT / path).exists():
        return PROJECT_ROOT / path
    return path


def score(entry: Mapping[str, Any], spec: ModelSpec, cfg: Mapping[str, Any], experiment: str | None, work: Path, *,
          given_stimuli: str | os.PathLike | None = None, given_gaze: None = None, threads: int = 1,
          progress) -> pd.DataFrame:
    """One model through :data:`STAGES`; its rows of ``results/aggregate/scores_motion.csv``.

    ``entry`` is the model's entry, ``spec`` it resolved; ``cfg`` a validated config
    with its defaults filled; ``experiment`` one of :data:`psybench.motion.EXPERIMENTS`
    or None (all). ``given_stimuli``: a folder of the config's stimulus stores (a
    run's ``results/motion/stimuli``), else they are rendered into ``work / "stimuli"``.
    ``given_gaze`` belongs to the attention track (``psybench.score`` refuses it here).
    ``progress`` (``psybench.api._Steps``) counts the stages.
    """
    from psybench.motion import EXPERIMENTS
    from psybench.motion import pipeline as stage
    from psybench.motion.display import Display
    from psybench.motion.stimuli import stimulus_set

    stimulus_stores = Path(given_stimuli) if given_stimuli else None
    experiments = [experiment] if experiment else list(EXPERIMENTS)
    specs = stimulus_set(cfg["motion"], display=Display.from_config(cfg["display"]), experiments=experiments)
    progress.start(total=2 * len(specs) + 2)
    response_stores, readout_stores = [], []
    for name, stim in specs.items():
        if stimulus_stores is None:
            (path,) = stage.stimuli([(name, stim, dict(cfg["display"]))], [work / "stimuli" / f"{name}.zarr"])
        else:
            path = stimulus_stores / f"{name}.zarr"
            if not path.exists():
                raise FileNotFoundError(f"stimulus store {path} is missing (stimuli={str(stimulus_stores)!r} must "
                                        f"hold every stimulus of the config, {len(specs)} stores)")
        progress.step(f"stimulus {name}")
        response_stores += stage.responses(spec, [path], [work / "responses" / spec.name / f"{name}.zarr"],
                                           threads=threads)
        readout_stores.append(work / "readouts" / spec.name / f"{name}.zarr")
        progress.step(f"{spec.name} on {name}")
    stage.readouts(response_stores, readout_stores, lambda_ms=cfg["motion"]["readout"]["lambda_ms"])
    progress.step("pursuit readouts")
    score_csv, fits = work / "scores" / f"{spec.name}.csv", work / "fits" / f"{spec.name}.csv"
    stage.scores(readout_stores, score_csv, fits, criteria=cfg["motion"]["criteria"],
                 literature_path=_literature_path(cfg))
    table = work / "table1.csv"
    stage.table1([score_csv], table_csv=table, markdown=work / "table1.md", pareto_csv=work / "pareto.csv",
                 experiments=experiments)
    progress.step("criteria and scores")
    return stage.score_rows(table, fits=[fits], results_root=work)
