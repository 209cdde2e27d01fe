"""Each track declares the metrics it writes (name, label, unit, direction) and owns its config checks."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import psybench
from psybench.aggregate.labels import criterion_label, criterion_unit
from psybench.aggregate.table import concat_scores
from psybench.attention.metrics import score_frames
from psybench.attention.score_rows import score_rows as attention_rows
from psybench.benchmarks import benchmarks
from psybench.intphys.metrics import score_table
from psybench.intphys.score_rows import score_rows as intphys_rows
from psybench.motion.score_rows import score_rows as motion_rows
from psybench.registry import TRACKS
from psybench.tracks import Metric, find_metric, track_metrics


def _motion(tmp_path: Path) -> pd.DataFrame:
    table1 = tmp_path / "motion_table1.csv"
    pd.DataFrame([("barberpole", "HS", True, 0.1), ("grating_size", "HS", False, 0.9)],
                 columns=["experiment", "model", "passed", "error"]).to_csv(table1, index=False)
    fits = tmp_path / "HS.csv"
    pd.DataFrame([("diamonds", "HS", "half_differential", 1.0, 80.0, 0.0, 0.7)],
                 columns=["experiment", "model", "curve", "A", "tau_ms", "B", "gaussian_score"]).to_csv(
        fits, index=False)
    return motion_rows(table1, fits=[fits])


def _intphys(tmp_path: Path) -> pd.DataFrame:
    """Scores computed by the track's own scorer (psybench.intphys.metrics.score_table) on 6 quadruplets."""
    rows = [{"movie": f"O1/{q:04d}/{r}", "quadruplet": f"O1/{q:04d}", "possible": r <= 2, "block": "O1",
             "visibility": "visible", "motion": "static", "n_objects": 1} for q in range(6) for r in range(1, 5)]
    meta = pd.DataFrame(rows)
    p = pd.Series(np.random.default_rng(0).random(len(meta)), index=meta["movie"])
    path = tmp_path / "scores.csv"
    score_table(p, meta, model="rand", n_boot=0).to_csv(path, index=False)
    return intphys_rows(path)


def _attention(tmp_path: Path) -> pd.DataFrame:
    """Saliency metrics computed by the track's own scorer (score_frames) plus Table 1 rows."""
    rng = np.random.default_rng(1)
    maps = rng.random((4, 6, 8))
    counts = np.zeros((4, 6, 8), dtype=np.int64)
    for t in range(4):
        counts[t, rng.integers(0, 6, 3), rng.integers(0, 8, 3)] += 1
    values = score_frames(maps, counts, n_splits=2)
    assert all(np.isfinite(v) for v in values.values()), values  # every metric it writes is computed
    metrics = tmp_path / "metrics.csv"
    pd.DataFrame([("raw", k, v) for k, v in values.items()], columns=["model", "metric", "value"]).to_csv(
        metrics, index=False)
    table1 = tmp_path / "table1.csv"
    pd.DataFrame([("A", "A", "raw", 1, 6, "n ma", 71.0, 5.0)],
                 columns=["train", "test", "features", "L", "ND", "group", "median", "sd"]).to_csv(table1, index=False)
    return attention_rows(metrics=metrics, table1=table1)


WRITERS = {"motion": _motion, "intphys": _intphys, "attention": _attention}


@pytest.mark.parametrize("track", TRACKS)
def test_every_metric_written_is_declared_and_the_reverse(track, tmp_path):
    rows = WRITERS[track](tmp_path)
    declared = track_metrics(track)
    for metric, direction in rows[["metric", "direction"]].drop_duplicates().itertuples(index=False):
        m = find_metric(track, metric)
        assert m is not None, f"{track} writes {metric!r}, which it does not declare"
        assert direction == m.direction, (track, metric)
    written = set(rows["metric"])
    for m in declared:
        assert any(m.matches(w) for w in written), f"{track} declares {m.name!r} but writes none"


def test_long_table_labels_and_units_come_from_the_declarations(tmp_path):
    """Every criterion of the long table has the label and unit its track declares."""
    parts = []
    for track in TRACKS:
        (tmp_path / track).mkdir()
        parts.append(WRITERS[track](tmp_path / track))
    long_df = concat_scores(parts)
    assert set(long_df["track"]) == set(TRACKS)
    for track, exp, metric in long_df[["track", "experiment", "metric"]].drop_duplicates().itertuples(index=False):
        m = find_metric(track, metric)
        criterion = f"{track}/{exp}/{metric}"
        assert criterion_unit(criterion) == m.unit_of(exp.split("/")[0])
        label = criterion_label(criterion)
        assert (f"{m.label} {metric[len(m.name):].replace('_', ' ')}" if m.prefix else m.label) in label
    # the units a reader sees (Tlapale et al. 2010, RR-7317: direction errors in deg)
    assert criterion_label("motion/barberpole/error") == "Motion barber pole: error (deg)"
    assert criterion_unit("motion/grating_size/error") == "a.u."
    assert criterion_unit("attention/A_on_B/median_rp_n_ma") == "%"  # Table 1 prints percentages
    assert criterion_label("attention/A_on_B/median_rp_n_un") == (
        "Attention trained on A, tested on B: median rank percentile n un (%)")
    assert criterion_label("attention/A_on_B/sAUC") == "Attention trained on A, tested on B: shuffled AUC (fraction)"


def test_benchmarks_list_the_written_names():
    by_track = {b.track: b.metrics for b in benchmarks()}
    assert "AUC-Judd" in by_track["attention"] and "median_rp_*" in by_track["attention"]
    assert "auc_judd" not in by_track["attention"]
    assert by_track["motion"] == ("passed", "error", "gaussian_score")


def test_a_metric_needs_a_direction():
    with pytest.raises(ValueError, match="direction"):
        Metric("x", "x", "", "smaller")


def test_core_config_checks_import_no_track():
    """The core's config checks reach the tracks' only through psybench.tracks (no import cycle)."""
    root = Path(psybench.__file__).parent
    for f in ("config_checks.py", "config.py", "tracks.py", "registry.py", "aggregate/labels.py"):
        tree = ast.parse((root / f).read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [m for m in names if m.split(".")[:2] in (["psybench", t] for t in TRACKS)], f
