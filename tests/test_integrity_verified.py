"""The record of verified artifacts (psybench.io.verified): unchanged ones are not re-read, changed ones are caught.

The planning check (quarantine_damaged) records each store and table that passed by
the stat of its paths; the next check skips an artifact whose paths all have the
recorded stat, and hashes every file of one changed in place since, so that even a
flipped byte whose modification time was put back is caught before any job.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest
from test_integrity_damage import _chunk, _flip, _store

from psybench.io import integrity, quarantine_damaged, write_table
from psybench.io.verified import VERIFIED_NAME


def _table(tmp_path):
    path = tmp_path / "results" / "t" / "scores.csv"
    write_table(pd.DataFrame({"model": ["a", "b"], "score": [0.25, 0.75]}), path)
    return path


@pytest.fixture
def recorded(tmp_path):
    """A store and a table that passed one check, so that both are recorded."""
    store, csv = _store(tmp_path), _table(tmp_path)
    assert quarantine_damaged(tmp_path / "results") == []
    keys = set(json.loads((tmp_path / "results" / VERIFIED_NAME).read_text())["artifacts"])
    assert keys == {"s/a.zarr", "t/scores.csv"}
    return store, csv


def _no_reads(monkeypatch):
    """Make any full check of a store or table fail the test."""
    def fail(*args, **kwargs):
        raise AssertionError("an unchanged artifact was checked again")

    monkeypatch.setattr(integrity, "_quick_verify", fail)
    monkeypatch.setattr(integrity, "check_table", fail)


def test_unchanged_artifacts_are_not_read_again(tmp_path, recorded, monkeypatch):
    _no_reads(monkeypatch)
    assert quarantine_damaged(tmp_path / "results") == []
    assert quarantine_damaged(tmp_path / "results") == []


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_flipped_chunk_byte_is_caught_after_recording(tmp_path, recorded, keep_mtime):
    """A byte flipped in place in a response-like chunk, even with its mtime put back (ctime moves)."""
    store, _ = recorded
    _flip(_chunk(store), keep_mtime=keep_mtime)
    moved = quarantine_damaged(tmp_path / "results")
    assert [p for p, _ in moved] == [store]
    assert "does not match its checksum" in moved[0][1]


def test_edited_table_with_mtime_put_back_is_caught(tmp_path, recorded):
    _, csv = recorded
    st = csv.stat()
    csv.write_text(csv.read_text().replace("0.25", "0.95"))
    os.utime(csv, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [p for p, _ in quarantine_damaged(tmp_path / "results")] == [csv]


def test_file_added_after_recording_is_caught(tmp_path, recorded):
    store, _ = recorded
    shutil.copy(_chunk(store), _chunk(store).with_name("9"))
    moved = quarantine_damaged(tmp_path / "results")
    assert [p for p, _ in moved] == [store]


def test_touched_and_rewritten_artifacts_pass_and_are_recorded_again(tmp_path, recorded, monkeypatch):
    store, csv = recorded
    for p in store.rglob("*"):
        os.utime(p)  # snakemake --touch: in place, same bytes: hashed, and passes
    _store(tmp_path)  # the writer replaces the store: a new artifact, the usual check
    _table(tmp_path)
    assert quarantine_damaged(tmp_path / "results") == []
    _no_reads(monkeypatch)
    assert quarantine_damaged(tmp_path / "results") == []


def test_unreadable_record_means_a_full_check(tmp_path, recorded):
    store, _ = recorded
    (tmp_path / "results" / VERIFIED_NAME).write_text("{not json")
    _flip(_chunk(store))
    assert [p for p, _ in quarantine_damaged(tmp_path / "results")] == [store]
    assert json.loads((tmp_path / "results" / VERIFIED_NAME).read_text())["artifacts"].keys() == {"t/scores.csv"}
    np.testing.assert_equal(len(list((tmp_path / "results" / ".damaged").rglob("*.zarr"))), 1)


def _count_hashing(monkeypatch):
    """Count the files hashed and the arrays decoded against their digests."""
    from psybench.io import filecheck

    calls = {"sha256": 0, "decode": 0}
    sha, digest = filecheck._sha256, integrity.digest_block

    def counted_sha(path):
        calls["sha256"] += 1
        return sha(path)

    def counted_digest(*args, **kwargs):
        calls["decode"] += 1
        return digest(*args, **kwargs)

    monkeypatch.setattr(filecheck, "_sha256", counted_sha)
    monkeypatch.setattr(integrity, "digest_block", counted_digest)
    return calls


def test_a_reader_trusts_the_writers_stamp_until_a_file_changes(tmp_path, monkeypatch):
    """Stamped: no file hashed, no chunk decoded; touched (same bytes): all hashed again, and it passes."""
    from psybench.io.store import open_store

    store = _store(tmp_path)
    assert (store.parent / ".a.zarr.psybench-stat").is_file()
    calls = _count_hashing(monkeypatch)
    open_store(store, deep=True)
    assert calls == {"sha256": 0, "decode": 0}
    os.utime(_chunk(store))
    open_store(store, deep=True)
    n_files = len(json.loads((store / ".psybench-files" / "zarr.json").read_text())["attributes"]["files"])
    assert calls == {"sha256": n_files, "decode": 2}  # every listed file, and the array's 2 chunks


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_a_reader_catches_a_flipped_byte_of_a_stamped_store(tmp_path, keep_mtime):
    from psybench.io.store import open_store

    store = _store(tmp_path)
    _flip(_chunk(store), keep_mtime=keep_mtime)
    with pytest.raises(integrity.StoreError, match="does not match its checksum"):
        open_store(store)


def test_planning_catches_an_edit_with_mtime_put_back_before_the_store_was_recorded(tmp_path):
    """The first check after a write: the writer's stamp no longer matches, so every file is hashed."""
    store = _store(tmp_path)
    _flip(_chunk(store), keep_mtime=True)
    moved = quarantine_damaged(tmp_path / "results")
    assert [p for p, _ in moved] == [store]
    assert "does not match its checksum" in moved[0][1]
