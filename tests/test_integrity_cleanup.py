"""Temporaries of killed writers are removed when the next run starts; those of live writers are kept."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from psybench.io.atomic import remove_stale_temporaries, temporary_sibling
from psybench.io.integrity import repair_results
from psybench.io.store import ArraySpec, write_store


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _leftovers(tmp_path):
    """A results folder with the leftovers of dead writers, a live writer's temporary and finished artifacts."""
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
    return root, sorted([report, half_table, old_store]), [writing, final, inside_store]


def test_leftovers_of_dead_writers_removed_live_ones_kept(tmp_path):
    root, stale, kept = _leftovers(tmp_path)
    assert remove_stale_temporaries(root) == stale
    assert not any(p.exists() for p in stale) and all(p.exists() for p in kept)


def test_repair_removes_the_same_leftovers_and_quarantines_in_one_walk(tmp_path):
    """The workflow's planning call: the temporaries of remove_stale_temporaries, and a damaged store moved aside."""
    root, stale, kept = _leftovers(tmp_path)
    store = write_store(root / "stimuli" / "c.zarr", {"x": ArraySpec(np.zeros((2, 3)), ("y", "x"))})
    (store / ".psybench-files" / "zarr.json").unlink()
    removed, moved = repair_results(root)
    fake = root / "stimuli" / "b.zarr"  # the folder that holds inside_store is no Zarr store either
    assert removed == stale and [p for p, _ in moved] == [fake, store]
    assert not any(p.exists() for p in stale) and all(p.exists() for p in kept[:2])
    assert (root / ".damaged" / "stimuli" / "c.zarr").is_dir() and (root / ".damaged" / "stimuli" / "b.zarr").is_dir()
    assert repair_results(root) == ([], [])


def test_a_tree_checked_by_its_listing_is_not_entered(tmp_path):
    """A generated IntPhys split holds raw data, checked against its own listing (psybench.io.inputs)."""
    from psybench.io.inputs import record_listing

    root = tmp_path / "results"
    tree = root / "intphys" / "generated" / "dev"
    leftover = tree / "a" / f".x.tmp-{_dead_pid()}.png"  # not a writer's temporary of ours: raw data
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"png")
    record_listing(tree)
    assert repair_results(root) == ([], []) and leftover.exists()


def test_missing_root_is_nothing_to_do(tmp_path):
    assert remove_stale_temporaries(tmp_path / "results") == []
