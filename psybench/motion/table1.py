"""Motion-track aggregation: the paper's Table 1 (Tlapale et al. 2010, RR-7317) and the Pareto view of it.

Inputs are the per-model score tables written by :mod:`psybench.motion.scores`
(columns ``experiment, model, passed, error, details``). Outputs:

* ``motion_table1.csv``: tidy, one row per experiment x model, columns
  ``experiment, model, passed, error`` (error: lower is better), then, when the
  score tables have them, ``n_directions``, ``passed_dir{DDD}``, ``error_dir{DDD}``
  (the verdict and error at each motion direction; ``passed`` holds only if every
  direction passed) and ``integration_passed``, ``integration_error``.
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
from psybench.io.tables import read_csv_checked, write_table
from psybench.motion import EXPERIMENT_LABELS, EXPERIMENTS
from psybench.motion.criteria.directions import _column_order

__all__ = ["EXPERIMENTS", "EXPERIMENT_LABELS", "table1", "table1_markdown", "motion_pareto", "write_table1"]

TABLE1_COLUMNS = ["experiment", "model", "passed", "error"]


def table1(score_tables: Sequence[pd.DataFrame], *, experiments: Sequence[str] = EXPERIMENTS) -> pd.DataFrame:
    """Concatenate per-model score tables into the tidy Table 1 (experiment order, then model order)."""
    frames = []
    for df in score_tables:
        missing = [c for c in TABLE1_COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"score table lacks column(s) {missing}")
        frames.append(df[TABLE1_COLUMNS + [c for c in df.columns if _is_extra(c)]])
    out = pd.concat(frames, ignore_index=True)
    extra = sorted({c for df in frames for c in df.columns if _is_extra(c)}, key=_column_order)
    out = out[TABLE1_COLUMNS + extra]
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


def _is_extra(column: str) -> bool:
    """Per-direction and separately reported columns of the score tables, carried into Table 1."""
    return column == "n_directions" or column.startswith(("passed_dir", "error_dir", "integration_"))


def _mark(passed) -> str:
    return "✔" if bool(passed) else "✘"


def _direction_cells(row: pd.Series) -> str:
    """`` [0°: ✔, 15°: ✘]``: the verdict at each direction, when the table has them."""
    cells = []
    for col in row.index:
        if col.startswith("passed_dir") and pd.notna(row[col]):
            angle = float(col.removeprefix("passed_dir").replace("p", "."))
            cells.append(f"{angle:g}°: {_mark(row[col])}")
    return f" [{', '.join(cells)}]" if cells else ""


def table1_markdown(table: pd.DataFrame) -> str:
    """RR-7317 Table 1 layout: rows = stimuli, columns = models, pass (✔) / fail (✘).

    When the table has per-direction columns, each cell adds the verdict at every
    motion direction after the overall one (``✘ (3.1) [0°: ✔, 15°: ✘]``), and the
    separately reported integration-area criterion of the grating-size experiment
    gets a row of its own below (not part of the paper's four).
    """
    models = list(dict.fromkeys(table["model"]))
    lines = ["| Stimulus | " + " | ".join(models) + " |", "|---" * (len(models) + 1) + "|"]
    integration = []
    for exp in dict.fromkeys(table["experiment"]):
        cells = []
        for m in models:
            row = table[(table["experiment"] == exp) & (table["model"] == m)]
            if row.empty:
                cells.append("n/a")
            else:
                r = row.iloc[0]
                cells.append(f"{_mark(r['passed'])} ({r['error']:.3g}){_direction_cells(r)}")
                if pd.notna(r.get("integration_passed", float("nan"))):
                    integration.append((m, f"{_mark(r['integration_passed'])} ({r['integration_error']:.3g})"))
        lines.append(f"| {EXPERIMENT_LABELS.get(exp, exp)} | " + " | ".join(cells) + " |")
    if integration:
        found = dict(integration)
        lines.append("| Integration area grows with time (separate, not a Table 1 row) | "
                     + " | ".join(found.get(m, "n/a") for m in models) + " |")
    lines.append("")
    lines.append("✔ passed, ✘ failed; in brackets the continuous error (lower is better) of each rule "
                 "(psybench/motion/criteria/, one module per experiment).")
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
            tables.append(read_csv_checked(p))
        except Exception as exc:
            raise ValueError(f"cannot read score table {p}: {exc}") from exc
    t1 = table1(tables, experiments=experiments)
    write_table(t1, table_csv)
    with atomic_output(markdown) as tmp:
        tmp.write_text(table1_markdown(t1))
    write_table(motion_pareto(t1), pareto_csv)
    return t1
