"""Fault tolerance: a run killed while writing a store resumes to identical results;
damaged stores are detected; identical configs give byte-identical tables."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.workflow

# hs (already computed in the shared base run) plus a user model that sleeps per frame pair
SLOW = [
    {"name": "hs", "algorithm": "horn_schunck"},
    {"name": "slow", "callable": "usermodels.flow:slow", "kind": "pair", "params": {"delay_s": 0.1}},
]


def aggregate_bytes(work: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((work / "results/aggregate").glob("*.csv"))}


def store_digests(work: Path, stage: str) -> dict[str, dict]:
    from psybench.io import verify_store
    from psybench.io.integrity import array_digest

    return {
        p.relative_to(work).as_posix(): {k: array_digest(v) for k, v in verify_store(p, deep=True)["arrays"].items()}
        for p in sorted((work / "results" / stage).rglob("*.zarr"))
        if ".tmp-" not in p.name
    }


def with_slow_model(harness, completed_workflow, tmp_path_factory, name: str) -> Path:
    work = harness.clone(completed_workflow, tmp_path_factory.mktemp(name) / "wf")
    harness.write_config(work, harness.tiny_config(models=SLOW))
    return work


@pytest.fixture(scope="module")
def reference(harness, completed_workflow, tmp_path_factory):
    """An uninterrupted run with the slow user model."""
    work = with_slow_model(harness, completed_workflow, tmp_path_factory, "ref")
    harness.run(work, "--cores", "2", harness.table)
    return work


def test_sigkill_while_writing_a_store_then_resume(harness, completed_workflow, reference, tmp_path_factory):
    from psybench.io import StoreError, verify_store

    work = with_slow_model(harness, completed_workflow, tmp_path_factory, "killed")
    out_dir = work / "results/motion/responses/slow"
    seen_partial: list[str] = []
    stop = threading.Event()

    def incomplete(p):
        try:
            verify_store(p)
        except StoreError as exc:
            return str(exc)
        return None

    def watch():  # no store under a final name may ever be incomplete
        while not stop.is_set():
            for p in out_dir.glob("*.zarr") if out_dir.exists() else ():
                why = incomplete(p)
                # Snakemake removes a killed batch job's outputs (complete stores among them) before
                # the rerun: a store seen mid-removal is gone moments later. A partial store left under
                # its final name by a writer stays until the rerun, seconds later.
                if why and not stop.wait(0.5) and p.exists() and incomplete(p) == why:
                    seen_partial.append(f"{p.name}: {why}")
            stop.wait(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    proc = harness.popen(work, "--cores", "1", harness.table)
    try:
        # the second response store being written: kill in the middle of it
        writing = lambda: len(list(out_dir.glob("*.zarr"))) >= 1 and any(out_dir.glob("*.tmp-*"))  # noqa: E731
        assert harness.wait_for(writing, timeout=300), "no response store was ever being written"
    finally:
        harness.kill_group(proc)
    tmp_stores = sorted(p.name for p in out_dir.glob("*.tmp-*"))
    assert tmp_stores, "the kill came after the store was complete"
    # the store being written at the kill has no final name, and every store under a final name is complete
    for name in tmp_stores:
        assert not (out_dir / name.split(".tmp-")[0]).exists()
    assert [(p.name, incomplete(p)) for p in out_dir.glob("*.zarr") if incomplete(p)] == []

    # after SIGKILL the lock remains: unlock (README), then rerun; the profile sets rerun-incomplete
    harness.run(work, "--unlock")
    harness.run(work, "--cores", "2", harness.table)
    stop.set()
    watcher.join(timeout=5)
    assert seen_partial == []
    assert aggregate_bytes(work) == aggregate_bytes(reference)
    assert store_digests(work, "responses") == store_digests(reference, "responses")
    assert store_digests(work, "stimuli") == store_digests(reference, "stimuli")


@pytest.fixture(scope="module")
def complete(completed_workflow):
    return completed_workflow


def test_two_runs_give_byte_identical_tables(harness, complete, tmp_path):
    again = harness.copy(tmp_path / "again", harness.tiny_config())
    harness.run(again, "--cores", "2", harness.table)
    first, second = aggregate_bytes(complete), aggregate_bytes(again)
    assert first and first == second
    assert (complete / "results/motion/motion_table1.md").read_bytes() == (
        again / "results/motion/motion_table1.md"
    ).read_bytes()
    assert store_digests(complete, "responses") == store_digests(again, "responses")


def _first_chunk(store: Path, array: str) -> Path:
    return sorted(p for p in (store / array / "c").rglob("*") if p.is_file())[0]


def _corrupt_silently(store: Path, array: str) -> None:
    """Flip one byte of a chunk such that it still decodes, to different values."""
    import numpy as np
    import zarr

    arr = zarr.open_array(str(store / array), mode="r")
    good = arr[:]
    chunk = _first_chunk(store, array)
    original = chunk.read_bytes()
    for offset in range(len(original) // 10, len(original)):
        data = bytearray(original)
        data[offset] ^= 0x01
        chunk.write_bytes(bytes(data))
        try:
            if not np.array_equal(zarr.open_array(str(store / array), mode="r")[:], good):
                return
        except Exception:  # noqa: BLE001 - the codec noticed: try another byte
            pass
    raise AssertionError(f"no silent corruption found in {chunk}")


@pytest.mark.parametrize("damage", ["truncated", "corrupted"])
def test_damaged_store_is_detected_not_silently_read(harness, complete, tmp_path, damage):
    from psybench.io import StoreError, verify_store

    work = harness.clone(complete, tmp_path / "wf")
    store = sorted((work / "results/motion/stimuli").glob("*.zarr"))[0]
    if damage == "truncated":
        _first_chunk(store, "frames").unlink()
        expected = "truncated"
    else:
        _corrupt_silently(store, "frames")
        expected = "checksum"
    with pytest.raises(StoreError, match=expected):
        verify_store(store, deep=True)
    # the consumer of the store refuses it, naming it and what is wrong (the check
    # before planning is switched off here, or it would move the store aside first)
    response = f"results/motion/responses/hs/{store.name}"
    proc = harness.run(work, "--cores", "1", "--force", response, "--config", "verify_stores=off", check=False)
    log = (work / "logs/motion/responses/hs/batch.log").read_text()  # one job per model
    assert proc.returncode != 0, log
    assert "StoreError" in log and store.name in log and expected in log, log


def test_damaged_store_is_rebuilt_on_rerun(harness, complete, tmp_path):
    from psybench.io import verify_store

    work = harness.clone(complete, tmp_path / "wf")
    store = sorted((work / "results/motion/stimuli").glob("*.zarr"))[0]
    _first_chunk(store, "frames").unlink()
    # the next run detects it before planning and moves it aside, naming it ...
    proc = harness.run(work, "--cores", "2", harness.table)
    assert f"moved damaged store results/motion/stimuli/{store.name}" in proc.stdout + proc.stderr
    assert (work / "results/.damaged/motion/stimuli" / store.name).is_dir()
    # ... so nothing reads it; the results that were computed from the good store stand
    assert aggregate_bytes(work) == aggregate_bytes(complete)
    # and Snakemake rebuilds it as soon as it is needed or asked for
    harness.run(work, "--cores", "2", f"results/motion/stimuli/{store.name}")
    verify_store(store, deep=True)
    assert aggregate_bytes(work) == aggregate_bytes(complete)
