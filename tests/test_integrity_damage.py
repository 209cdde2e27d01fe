"""Damaged artifacts are never reused: quarantined at planning, refused by the job that reads them.

Every store lists its files (size, mtime, SHA-256) in ``.psybench-files/zarr.json`` and every
table in ``.<stem>.files.json`` (:mod:`psybench.io.filecheck`), written last.
:func:`psybench.io.quarantine_damaged` (planning) moves a damaged one aside so it is
rebuilt; :func:`psybench.io.open_store` and :func:`psybench.io.read_table` (jobs, in
every track) refuse one with an error naming the file.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest
import zarr

from psybench.io import StoreError, open_store, quarantine_damaged, read_table, write_store, write_table
from psybench.io.filecheck import FILES_NAME, FileCheckError, table_manifest
from psybench.io.planning import may_repair
from psybench.io.store import ArraySpec
from psybench.io.verified import VERIFIED_NAME


def _store(root):
    data = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
    return write_store(root / "results" / "s" / "a.zarr", {"x": ArraySpec(data, ("t", "y", "x"), chunks=(2, 6, 5))})


def _chunk(store):
    return sorted(p for p in (store / "x" / "c").rglob("*") if p.is_file())[0]


def _flip(path, keep_mtime=False):
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _truncate(path):
    os.truncate(path, path.stat().st_size // 2)


class TestStoreDamage:
    @pytest.mark.parametrize("damage", ["truncate", "flip", "extra_file", "no_file_manifest", "rewritten_array"])
    def test_damaged_store_is_quarantined_and_refused(self, tmp_path, damage):
        store = _store(tmp_path)
        if damage == "truncate":
            _truncate(_chunk(store))
        elif damage == "flip":
            _flip(_chunk(store))
        elif damage == "extra_file":
            shutil.copy(_chunk(store), _chunk(store).with_name("9"))
        elif damage == "no_file_manifest":
            shutil.rmtree(store / FILES_NAME)
        else:  # valid Zarr, other values, exit 0: what rewrote the IntPhys masks
            zarr.open_array(str(store / "x"), mode="r+")[:] = 7.0
        with pytest.raises(StoreError, match=str(store)):
            open_store(store)
        moved = quarantine_damaged(tmp_path / "results")
        assert [p for p, _ in moved] == [store] and not store.exists()
        assert (tmp_path / "results" / ".damaged" / "s" / "a.zarr").is_dir()

    def test_consumer_error_names_the_file(self, tmp_path):
        store = _store(tmp_path)
        chunk = _chunk(store)
        _flip(chunk, keep_mtime=True)  # same size and mtime; its ctime moved, so the writer's stamp no longer matches
        with pytest.raises(StoreError, match=f"{chunk.relative_to(store)}.*checksum"):
            open_store(store)
        # planning sees it too, although the store was never recorded as intact (psybench.io.verified)
        assert [p for p, _ in quarantine_damaged(tmp_path / "results", move=False)] == [store]

    def test_touched_store_is_not_damage(self, tmp_path):
        store = _store(tmp_path)
        for p in store.rglob("*"):
            os.utime(p)  # snakemake --touch, a copy without -p: new mtimes, same bytes
        assert quarantine_damaged(tmp_path / "results") == []
        np.testing.assert_array_equal(open_store(store)["x"].compute()[0, 0], np.arange(5))

    def test_store_being_replaced_while_checked_is_left_alone(self, tmp_path, monkeypatch):
        """A writer's os.replace during the check: the name now holds another (complete) store."""
        import psybench.io.integrity as integrity

        store = _store(tmp_path)
        real = integrity._quick_verify

        def racing(path):
            fresh = _store(tmp_path / "other")
            os.replace(path, path.with_name("gone"))
            os.replace(fresh, path)  # the writer's rename of its finished store
            raise StoreError(f"store {path} lacks array 'x'")  # what the check saw mid-rename

        monkeypatch.setattr(integrity, "_quick_verify", racing)
        assert quarantine_damaged(tmp_path / "results") == []
        monkeypatch.setattr(integrity, "_quick_verify", real)
        assert store.is_dir() and open_store(store)

    def test_staging_directories_are_never_checked(self, tmp_path):
        store = _store(tmp_path)
        staging = store.with_name("a.zarr.tmp-12345")
        shutil.copytree(store, staging)
        _truncate(_chunk(staging))
        assert quarantine_damaged(tmp_path / "results") == [] and staging.is_dir()


class TestTableDamage:
    def _table(self, tmp_path):
        path = tmp_path / "results" / "t" / "scores.csv"
        write_table(pd.DataFrame({"model": ["a", "b"], "score": [0.25, 0.75]}), path)
        return path

    @pytest.mark.parametrize("damage", ["half_csv", "garbage_parquet", "edited_csv"])
    def test_damaged_table_is_quarantined_and_refused(self, tmp_path, damage):
        csv = self._table(tmp_path)
        if damage == "half_csv":
            _truncate(csv)
            culprit = csv.name
        elif damage == "garbage_parquet":
            csv.with_suffix(".parquet").write_bytes(b"PAR1 not a parquet file")
            culprit = "scores.parquet"
        else:
            csv.write_text(csv.read_text().replace("0.25", "0.95"))
            culprit = csv.name
        with pytest.raises(FileCheckError, match=f"table {csv}: file {culprit}"):
            read_table(csv)
        with pytest.raises(FileCheckError, match=culprit):
            read_table(csv.with_suffix(".parquet"))
        moved = quarantine_damaged(tmp_path / "results")
        assert [p for p, _ in moved] == [csv]
        assert not csv.exists() and not csv.with_suffix(".parquet").exists() and not table_manifest(csv).exists()

    def test_readers_of_csv_text_refuse_a_half_table(self, tmp_path):
        """The measured fault: a fits CSV truncated to half was drawn without error."""
        from psybench.aggregate.cells import ScoreTableError, read_cells
        from psybench.io import read_csv_checked

        csv = self._table(tmp_path)
        _truncate(csv)
        with pytest.raises(FileCheckError, match="scores.csv has .* bytes"):
            read_csv_checked(csv)
        with pytest.raises(ScoreTableError, match="scores.csv"):
            read_cells(csv)

    def test_intact_table_is_kept(self, tmp_path):
        csv = self._table(tmp_path)
        assert quarantine_damaged(tmp_path / "results") == []
        assert read_table(csv)["score"].tolist() == [0.25, 0.75]


class TestEveryTrackRefusesDamagedInput:
    """Each track's consumer reads its store through open_store: a damaged input is an error naming it."""

    def test_intphys_observation(self, tmp_path):
        from psybench.intphys.generate import generate_intphys
        from psybench.intphys.ingest import ingest_shard
        from psybench.intphys.models.observation import observe

        generate_intphys(tmp_path / "data", "dev", blocks=("O1",), n_frames=8, height=16, width=16)
        store, table = tmp_path / "shard.zarr", tmp_path / "shard.csv"
        ingest_shard(tmp_path / "data", "dev", store, table, shard_size=100)
        assert observe(store, table).movies
        masks = zarr.open_array(str(store / "masks"), mode="r+")
        masks[0] = np.asarray(masks[0]) + 1  # the measured fault: masks rewritten, exit 0
        with pytest.raises(StoreError, match=f"store {store}: file masks/c"):
            observe(store, table)

    def test_attention_responses(self, tmp_path):
        from psybench.attention.responses import write_feature_store
        from psybench.attention.stimuli import write_popout_store

        stim = write_popout_store(tmp_path / "A.zarr", seed=1, n_frames=4)
        _flip(sorted((stim / "frames" / "c").rglob("*"))[-1], keep_mtime=True)
        with pytest.raises(StoreError, match=f"store {stim}: file frames/c"):
            write_feature_store(stim, tmp_path / "f.zarr", model="raw")
        assert not (tmp_path / "f.zarr").exists()

    def test_motion_responses(self, tmp_path):
        from psybench.motion.responses import run_motion_model
        from psybench.registry import resolve_model

        store = _store(tmp_path)
        _truncate(_chunk(store))
        spec = resolve_model({"name": "hs", "algorithm": "horn_schunck"}, track="motion")
        with pytest.raises(StoreError, match=f"store {store}"):
            run_motion_model(spec, store, tmp_path / "r.zarr")
        assert not (tmp_path / "r.zarr").exists()


class TestMayRepair:
    @pytest.mark.parametrize("argv", [["-n"], ["--dry-run", "all"], ["-pn"], ["--unlock"], ["--touch"], ["-S"],
                                      ["--cores", "2", "--dag"], ["--list-changes", "params"]])
    def test_read_only_commands_do_not_repair(self, tmp_path, argv):
        ok, why = may_repair(tmp_path, argv)
        assert not ok and "runs no job" in why

    @pytest.mark.parametrize("argv", [[], ["--cores", "2", "all"], ["-j2", "-p"], ["-c1", "--force", "x.csv"]])
    def test_real_runs_repair(self, tmp_path, argv):
        assert may_repair(tmp_path, argv) == (True, "")

    def test_held_lock_or_a_job_process_does_not_repair(self, tmp_path):
        assert may_repair(tmp_path, [], main_process=False)[0] is False
        (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
        assert may_repair(tmp_path, [])[0] is True  # an empty lock folder: no run holds it
        (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("results/x\n")
        ok, why = may_repair(tmp_path, ["--cores", "2"])
        assert not ok and "another run" in why


@pytest.mark.workflow
def test_damaged_artifacts_rebuilt_by_the_real_run_only(harness, completed_workflow, tmp_path):
    work = harness.clone(completed_workflow, tmp_path / "wf")
    store = sorted((work / "results/motion/readouts/hs").glob("*.zarr"))[0]
    _flip(_chunk_of(store))
    table = work / harness.table
    good = table.read_bytes()
    _truncate(table)
    for args in (["-n", harness.table], ["--unlock"]):
        harness.run(work, *args)
        assert store.is_dir() and not (work / "results/.damaged").exists(), args
    lock = work / ".snakemake" / "locks" / "0.input.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("results/x\n")  # another run holds the directory: this one moves nothing
    harness.run(work, "--cores", "1", harness.table, check=False)
    assert store.is_dir() and not (work / "results/.damaged").exists()
    lock.unlink(missing_ok=True)
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftovers = [work / f"results/report.tmp-{dead.pid}", work / f"results/aggregate/.scores.tmp-{dead.pid}.csv"]
    leftovers[0].mkdir()
    leftovers[1].write_text("model,")  # what three killed report jobs left behind, measured
    proc = harness.run(work, "--cores", "2", harness.table)
    out = harness.output(proc)
    assert not any(p.exists() for p in leftovers), out
    assert f"moved damaged store results/motion/readouts/hs/{store.name}" in out, out
    assert f"moved damaged table {harness.table}" in out, out
    assert (work / "results/.damaged/motion/readouts/hs" / store.name).is_dir()
    assert table.read_bytes() == good  # rebuilt, identical to the clean run
    # the store is rebuilt when it is needed or asked for (as test_faults.py measures for stimuli)
    harness.run(work, "--cores", "1", str(store.relative_to(work)))
    open_store(store, deep=True)
    # that run recorded what it rebuilt as intact (onsuccess, psybench.io.verified): a byte
    # flipped since, its mtime put back, is still caught before any job and rebuilt
    record = json.loads((work / "results" / VERIFIED_NAME).read_text())["artifacts"]
    assert store.relative_to(work / "results").as_posix() in record
    _flip(_chunk_of(store), keep_mtime=True)
    out = harness.output(harness.run(work, "--cores", "1", str(store.relative_to(work))))
    assert f"moved damaged store results/motion/readouts/hs/{store.name}" in out, out
    open_store(store, deep=True)


def _chunk_of(store):
    return max((p for p in store.rglob("*") if p.is_file() and "/c/" in str(p)), key=lambda p: p.stat().st_size)
