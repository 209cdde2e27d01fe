"""Motion-track aggregation: the paper's Table 1 (Tlapale et al. 2010, RR-7317) and the Pareto view of it.

Inputs are the per-model score tables written by :mod:`psybench.motion.scores`
(columns ``experiment, model, passed, error, details``). Outputs:

* ``motion_table1.csv``: tidy, one row per experiment x model, columns
  ``experiment, model, passed, error`` (error: lower is better).
* ``motion_table1.md``: the same in RR-7317's layout (rows = stimuli,
  columns = models, pass/fail marks).
* ``motion_pareto.csv``: one row per model with its error per experiment, whether
  it is Pareto-optimal, its front (1 = Pareto set) from iterated removal
  (Cabezas & Trujillo 2011 (Pareto dominance for disparity evaluation,
  VISAPP), sec. 3.3), and its Middlebury-style average rank. A missing error
  (an experiment a model could not be scored on) stays NaN and is ignored for
  that pair of models in dominance and averaged over the available experiments
  in the rank (``n_ranked`` says how many).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from psybench.aggregate.pareto import pareto_table
from psybench.io.atomic import atomic_output
from psybench.io.tables import write_table
from psybench.motion import EXPERIMENT_LABELS, EXPERIMENTS

__all__ = ["EXPERIMENTS", "EXPERIMENT_LABELS", "table1", "table1_markdown", "motion_pareto", "write_table1"]

TABLE1_COLUMNS = ["experiment", "model", "passed", "error"]


def table1(score_tables: Sequence[pd.DataFrame], *, experiments: Sequence[str] = EXPERIMENTS) -> pd.DataFrame:
    """Concatenate per-model score tables into the tidy Table 1 (experiment order, then model order)."""
    frames = []
    for df in score_tables:
        missing = [c for c in TABLE1_COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"score table lacks column(s) {missing}")
        frames.append(df[TABLE1_COLUMNS])
    out = pd.concat(frames, ignore_index=True)
    models = list(dict.fromkeys(out["model"]))
    unknown = sorted(set(out["experiment"]) - set(experiments))
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; expected {list(experiments)}")
    out["experiment"] = pd.Categorical(out["experiment"], categories=list(experiments), ordered=True)
    out["model"] = pd.Categorical(out["model"], categories=models, ordered=True)
    out = out.sort_values(["experiment", "model"], kind="stable").reset_index(drop=True)
    out["experiment"] = out["experiment"].astype(str)
    out["model"] = out["model"].astype(str)
    out["passed"] = out["passed"].astype(bool)
    out["error"] = out["error"].astype(float)
    return out


def table1_markdown(table: pd.DataFrame) -> str:
    """RR-7317 Table 1 layout: rows = stimuli, columns = models, pass (✔) / fail (✘)."""
    models = list(dict.fromkeys(table["model"]))
    lines = ["| Stimulus | " + " | ".join(models) + " |", "|---" * (len(models) + 1) + "|"]
    for exp in dict.fromkeys(table["experiment"]):
        cells = []
        for m in models:
            row = table[(table["experiment"] == exp) & (table["model"] == m)]
            if row.empty:
                cells.append("n/a")
            else:
                r = row.iloc[0]
                cells.append(f"{'✔' if r['passed'] else '✘'} ({r['error']:.3g})")
        lines.append(f"| {EXPERIMENT_LABELS.get(exp, exp)} | " + " | ".join(cells) + " |")
    lines.append("")
    # The footnote names the rules' old module path: the table is a result users'
    # scripts read and must stay byte-identical (the rules now live in psybench/motion/criteria/).
    lines.append("✔ passed, ✘ failed; in brackets the continuous error (lower is better) of each rule "
                 "(psybench/scores/motion.py).")
    return "\n".join(lines) + "\n"


def motion_pareto(table: pd.DataFrame) -> pd.DataFrame:
    """Pareto set, fronts and average ranks over the models' error vectors (one criterion per experiment)."""
    wide = table.pivot(index="model", columns="experiment", values="error")
    criteria = [e for e in EXPERIMENTS if e in wide.columns] + [e for e in wide.columns if e not in EXPERIMENTS]
    wide = wide[criteria].reset_index()
    wide.columns.name = None
    out = pareto_table(wide, criteria=criteria, label_col="model", missing="ignore")
    return out.rename(columns={c: f"error_{c}" for c in criteria})


def write_table1(
    score_csvs: Sequence[str | os.PathLike],
    *,
    table_csv: str | os.PathLike,
    markdown: str | os.PathLike,
    pareto_csv: str | os.PathLike,
    experiments: Sequence[str] = EXPERIMENTS,
) -> pd.DataFrame:
    """Read per-model score CSVs and write Table 1 (CSV, Parquet, Markdown) and the Pareto table."""
    tables = []
    for p in score_csvs:
        try:
            tables.append(pd.read_csv(p))
        except Exception as exc:
            raise ValueError(f"cannot read score table {p}: {exc}") from exc
    t1 = table1(tables, experiments=experiments)
    write_table(t1, table_csv)
    with atomic_output(markdown) as tmp:
        tmp.write_text(table1_markdown(t1))
    write_table(motion_pareto(t1), pareto_csv)
    return t1
