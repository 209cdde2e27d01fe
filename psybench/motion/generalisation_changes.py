"""Which generalisation cells change a model's verdict, and why, from the table's own data.

A level that does not change what a person sees (another frame rate, display scale,
a speed or contrast within the range where people's responses keep their form; Tlapale
et al. 2010, RR-7317, sec. 2.1 on the display mapping) should not change a verdict. The
generalisation table therefore flags every cell whose verdict differs from the same
model's baseline cell (same experiment and nuisance, the main run's level), whether the
cell passes or fails, and gives the cause the data show: the criterion's named checks
that flip between the two cells (the ``checks`` each criterion reports,
:mod:`psybench.motion.criteria`), the fitted initial bias ``A`` and time constant
``tau`` of a decay criterion against its bounds, and the continuous error of both.
It computes no verdict: every pass/fail comes from the score tables.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["CHANGE_COLUMNS", "verdict_changes"]

#: Columns added to the generalisation table (after its existing ones).
CHANGE_COLUMNS = ["verdict_changed", "cause"]

_DECAY = ("diamonds", "dashed_bars")


def _g(x: Any) -> str:
    return f"{x:.3g}" if isinstance(x, (int, float)) and math.isfinite(x) else "n/a"


def _checks(details: Any) -> dict[str, bool] | None:
    if not isinstance(details, str) or not details:
        return None
    checks = json.loads(details).get("checks")
    return {str(k): bool(v) for k, v in checks.items()} if isinstance(checks, Mapping) else None


def _cause(row: pd.Series, base: pd.Series, criteria: Mapping[str, Mapping[str, float]]) -> str:
    """One line: what differs between ``row`` and its baseline ``base`` that decides the verdict."""
    nuisance, exp = str(row["nuisance"]), str(row["experiment"])
    verdict = "passes" if bool(row["passed"]) else "fails"
    parts = [f"{verdict} at {nuisance} {_g(float(row['level']))}, "
             f"{'fails' if bool(row['passed']) else 'passes'} at the baseline {_g(float(base['level']))}",
             f"error {_g(float(base['error']))} -> {_g(float(row['error']))}"]
    here, there = _checks(row["details"]), _checks(base["details"])
    if here is not None and there is not None:
        flipped = [f"{k} {there[k]} -> {here[k]}" for k in sorted(set(here) & set(there)) if here[k] != there[k]]
        parts.append("checks changed: " + ", ".join(flipped) if flipped else "no named check changed")
    else:
        parts.append("the criterion's checks are not recorded for the baseline direction")
    if exp in _DECAY:
        k = criteria[exp]
        a0, a1 = float(base["A_deg"]), float(row["A_deg"])
        t0, t1 = float(base["tau_ms"]), float(row["tau_ms"])
        parts.append(f"A {_g(a0)} -> {_g(a1)} deg (bound >= {_g(k['a_min_deg'])}), "
                     f"tau {_g(t0)} -> {_g(t1)} ms (bounds [{_g(k['tau_min_ms'])}, {_g(k['tau_max_ms'])}])")
    return "; ".join(parts)


def verdict_changes(table: pd.DataFrame, criteria: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """``table`` with :data:`CHANGE_COLUMNS`: each cell's verdict against its model's baseline.

    Parameters
    ----------
    table : DataFrame
        Generalisation rows (:data:`psybench.motion.generalisation.GENERALISATION_COLUMNS`),
        baseline rows among them; ``details`` JSON may hold the criterion's ``checks``.
    criteria : mapping
        The merged criteria (:func:`psybench.motion.criteria.merge_criteria`), for the bounds quoted.

    Returns
    -------
    DataFrame
        A copy with ``verdict_changed`` (True where ``passed`` differs from the
        baseline row of the same model, experiment and nuisance; False for baseline
        rows, for rows whose baseline is missing and for the dependence rows, which
        have no level) and ``cause`` (empty unless changed).
    """
    out = table.copy()
    changed, causes = [], []
    base = out[out["baseline"].astype(bool)].set_index(["model", "experiment", "nuisance"])
    for _, r in out.iterrows():
        key = (r["model"], r["experiment"], r["nuisance"])
        if bool(r["baseline"]) or key not in base.index:
            changed.append(False)
            causes.append("")
            continue
        b = base.loc[[key]].iloc[0]
        flip = bool(r["passed"]) != bool(b["passed"])
        changed.append(flip)
        causes.append(_cause(r, b, criteria) if flip else "")
    out["verdict_changed"] = pd.Series(changed, index=out.index, dtype=bool)
    out["cause"] = pd.Series(causes, index=out.index, dtype=object)
    return out
