"""Temporaries of killed writers are removed when the next run starts; those of live writers are kept."""

from __future__ import annotations

import os
import subprocess
import sys

from psybench.io.atomic import remove_stale_temporaries, temporary_sibling


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leftovers_of_dead_writers_removed_live_ones_kept(tmp_path):
    root = tmp_path / "results"
    dead, live = _dead_pid(), os.getpid()
    report = temporary_sibling(root / "report", directory=True, pid=dead)  # a killed report job's folder
    (report / "figures").mkdir(parents=True)
    (report / "index.html").write_text("<html>half")
    half_table = temporary_sibling(root / "aggregate" / "scores_long.csv", pid=dead)
    half_table.parent.mkdir(parents=True)
    half_table.write_text("model,score\na,")
    old_store = root / "stimuli" / f"a.zarr.old-{dead}"
    old_store.mkdir(parents=True)
    writing = temporary_sibling(root / "aggregate" / "motion_table1.csv", pid=live)  # still being written
    writing.write_text("model")
    final = root / "aggregate" / "scores_long.csv"
    final.write_text("model,score\n")
    inside_store = root / "stimuli" / "b.zarr" / "x" / f".c.tmp-{dead}.bin"  # stores are never entered
    inside_store.parent.mkdir(parents=True)
    inside_store.write_text("")
    removed = remove_stale_temporaries(root)
    assert removed == sorted([report, half_table, old_store])
    assert not report.exists() and not half_table.exists() and not old_store.exists()
    assert writing.exists() and final.exists() and inside_store.exists()


def test_missing_root_is_nothing_to_do(tmp_path):
    assert remove_stale_temporaries(tmp_path / "results") == []
