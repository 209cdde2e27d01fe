"""What the quarantine moves aside is rebuilt by ``snakemake all``, with everything downstream.

Snakemake does not rebuild a missing intermediate whose consumers' outputs are present:
before, a damaged scores table or response store moved to ``results/.damaged/`` stayed
missing and ``all`` said "Nothing to be done". Each moved artifact is recorded in
``results/.psybench-rebuild.json`` (:mod:`psybench.io.rebuild`) and is an input of ``all``
until it exists again; a dry run lists the same jobs without moving anything. The known
answer: every table of the repaired run is byte-identical to the clean run's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from psybench.io.rebuild import REBUILD_NAME, pending_rebuilds, read_rebuilds, record_moved, write_rebuilds
from psybench.io.verified import VERIFIED_NAME

# The IntPhys track generated and scored on a tiny split (one block, 16 x 16 frames, one model).
TINY_INTPHYS = {
    "tracks": ["intphys"],
    "intphys": {"generate": True, "shard_size": 100,
                "generator": {"blocks": ["O1"], "n_frames": 8, "height": 16, "width": 16, "n_train": 2},
                "models": [{"name": "constant", "algorithm": "constant"}]},
}


class TestRecord:
    def test_moved_paths_are_pending_until_they_exist_again(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "results" / "a").mkdir(parents=True)
        assert read_rebuilds("results") == [] and pending_rebuilds("results") == []
        record_moved("results", [Path("results/a/x.csv"), "results/a/y.zarr"])
        record_moved("results", ["results/a/x.csv"])  # moved again before it was rebuilt: once
        assert read_rebuilds("results") == ["results/a/x.csv", "results/a/y.zarr"]
        (tmp_path / "results/a/y.zarr").mkdir()  # rebuilt
        assert pending_rebuilds("results") == ["results/a/x.csv"]
        # a dry run's damaged artifacts are still present: kept as given
        assert pending_rebuilds("results", ["results/a/y.zarr"]) == ["results/a/x.csv", "results/a/y.zarr"]
        write_rebuilds("results", pending_rebuilds("results"))
        assert json.loads((tmp_path / "results" / REBUILD_NAME).read_text()) == {
            "format": 1, "paths": ["results/a/x.csv"]}
        (tmp_path / "results/a/x.csv").write_text("model\n")
        write_rebuilds("results", pending_rebuilds("results"))
        assert not (tmp_path / "results" / REBUILD_NAME).exists()

    @pytest.mark.parametrize("text", ["{", '{"format": 1, "paths": "results/x.csv"}', "[]"])
    def test_bad_record_is_named(self, tmp_path, text):
        (tmp_path / REBUILD_NAME).write_text(text)
        with pytest.raises(ValueError, match=REBUILD_NAME):
            read_rebuilds(tmp_path)


def _flip(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def _largest_chunk(store: Path) -> Path:
    return max((p for p in store.rglob("*") if p.is_file() and "/c/" in p.as_posix()), key=lambda p: p.stat().st_size)


def _tables(work: Path) -> dict[str, bytes]:
    """Every file of results/ outside stores, generated data and the hidden records (tables, figures, report)."""
    out = {}
    for p in sorted((work / "results").rglob("*")):
        rel = p.relative_to(work / "results").as_posix()
        if p.is_file() and ".zarr" not in rel and "generated/" not in rel and not any(
                part.startswith(".") for part in rel.split("/")):
            out[rel] = p.read_bytes()
    return out


def _store_digests(work: Path, stage: str) -> dict[str, dict]:
    from psybench.io import verify_store
    from psybench.io.integrity import array_digest

    return {
        p.relative_to(work).as_posix(): {k: array_digest(v) for k, v in verify_store(p, deep=True)["arrays"].items()}
        for p in sorted((work / "results" / stage).rglob("*.zarr"))}


def _assert_like_clean(harness, clean: Path, work: Path) -> None:
    got, want = _tables(work), _tables(clean)
    assert sorted(got) == sorted(want)
    assert [name for name in want if got[name] != want[name]] == []
    assert "Nothing to be done" in harness.output(harness.run(work, "-n", "all"))
    assert not (work / "results" / REBUILD_NAME).exists()  # nothing left to rebuild


@pytest.fixture(scope="module")
def motion_all(harness, completed_workflow, tmp_path_factory) -> Path:
    """The motion track on the tiny config run to ``all`` (the clean run every repair is compared with)."""
    work = harness.clone(completed_workflow, tmp_path_factory.mktemp("motion_all") / "wf")
    harness.run(work, "--cores", "2", "all")
    return work


@pytest.mark.workflow
def test_damaged_motion_scores_table_is_rebuilt_with_its_consumers(harness, motion_all, tmp_path):
    work = harness.clone(motion_all, tmp_path / "wf")
    table = work / "results/motion/scores/hs.csv"
    os.truncate(table, table.stat().st_size // 2)
    downstream = {"motion_scores", "motion_table1", "motion_score_rows", "aggregate_scores", "report_leaderboard"}
    verified = (work / "results" / VERIFIED_NAME).read_bytes()
    dry = harness.run(work, "-n", "all")
    assert downstream <= set(harness.job_counts(dry)), harness.output(dry)[-3000:]
    assert "results/motion/scores/hs.csv" in harness.planned_outputs(dry)
    # a dry run moves and writes nothing
    assert table.stat().st_size and not (work / "results/.damaged").exists()
    assert not (work / "results" / REBUILD_NAME).exists()
    assert (work / "results" / VERIFIED_NAME).read_bytes() == verified
    proc = harness.run(work, "--cores", "2", "all")
    out = harness.output(proc)
    assert "moved damaged table results/motion/scores/hs.csv" in out, out[-3000:]
    assert downstream <= set(harness.job_counts(proc)), out[-3000:]
    assert (work / "results/.damaged/motion/scores/hs.csv").is_file()
    _assert_like_clean(harness, motion_all, work)


@pytest.mark.workflow
def test_response_store_moved_by_an_earlier_run_is_rebuilt_by_all(harness, motion_all, tmp_path):
    """The store is moved aside by a run to another target, which does not need it; ``all`` then rebuilds it."""
    work = harness.clone(motion_all, tmp_path / "wf")
    store = sorted((work / "results/motion/responses/hs").glob("*.zarr"))[0]
    rel = store.relative_to(work).as_posix()
    _flip(_largest_chunk(store))
    out = harness.output(harness.run(work, "--cores", "1", harness.table))
    assert f"moved damaged store {rel}" in out, out[-3000:]
    assert not store.exists()  # Table 1 is up to date: that run did not need the store
    assert read_rebuilds(work / "results") == [rel]
    dry = harness.run(work, "-n", "all")
    assert {"motion_responses", "motion_table1", "aggregate_scores"} <= set(harness.job_counts(dry))
    assert rel in harness.planned_outputs(dry)
    proc = harness.run(work, "--cores", "2", "all")
    assert {"motion_responses", "motion_table1", "aggregate_scores"} <= set(harness.job_counts(proc))
    assert store.is_dir()
    _assert_like_clean(harness, motion_all, work)
    assert _store_digests(work, "motion/responses") == _store_digests(motion_all, "motion/responses")


@pytest.mark.workflow
def test_artifact_no_longer_configured_is_not_requested(harness, motion_all, tmp_path):
    """A recorded path whose model left the config is dropped with a warning, not an error."""
    work = harness.clone(motion_all, tmp_path / "wf")
    write_rebuilds(work / "results", ["results/motion/scores/gone.csv"])
    out = harness.output(harness.run(work, "-n", "all"))
    assert "results/motion/scores/gone.csv was moved aside, but this configuration no longer produces it" in out
    assert "Nothing to be done" in out, out[-3000:]


@pytest.fixture(scope="module")
def intphys_all(harness, tmp_path_factory) -> Path:
    work = harness.copy(tmp_path_factory.mktemp("intphys_all") / "wf", TINY_INTPHYS)
    harness.run(work, "--cores", "2", "all")
    return work


@pytest.mark.workflow
@pytest.mark.parametrize("damage", ["metadata_table", "touched_frame"])
def test_damaged_intphys_intermediate_is_rebuilt_with_its_consumers(harness, intphys_all, tmp_path, damage):
    work = harness.clone(intphys_all, tmp_path / "wf")
    if damage == "metadata_table":
        table = work / "results/intphys/metadata/dev.csv"
        table.write_text(table.read_text().replace(",", ";", 1))
        expected = {"intphys_metadata", "intphys_scores", "intphys_score_rows", "aggregate_scores"}
    else:  # one frame's modification time changed: the split no longer matches its listing
        frame = sorted((work / "results/intphys/generated/dev").rglob("scene_*.png"))[0]
        st = frame.stat()
        os.utime(frame, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        expected = {"intphys_generate", "intphys_ingest", "intphys_metadata", "intphys_responses", "intphys_scores",
                    "aggregate_scores"}
    dry = harness.run(work, "-n", "all")
    assert expected <= set(harness.job_counts(dry)), harness.output(dry)[-3000:]
    assert not (work / "results/.damaged").exists()
    proc = harness.run(work, "--cores", "2", "all")
    assert expected <= set(harness.job_counts(proc)), harness.output(proc)[-3000:]
    assert (work / "results/.damaged").is_dir()
    _assert_like_clean(harness, intphys_all, work)
    if damage == "touched_frame":
        assert frame.read_bytes() == (intphys_all / frame.relative_to(work)).read_bytes()
        assert _store_digests(work, "intphys/stores") == _store_digests(intphys_all, "intphys/stores")


def test_rebuild_record_is_not_an_artifact(tmp_path):
    """The quarantine's walk never takes the record for a damaged table."""
    from psybench.io import quarantine_damaged

    record_moved(tmp_path, [str(tmp_path / "x.csv")])
    assert quarantine_damaged(tmp_path) == [] and (tmp_path / REBUILD_NAME).is_file()


@pytest.fixture(scope="module")
def attention_all(harness, completed_attention_workflow, tmp_path_factory) -> Path:
    """The attention track on the tiny attention config run to ``all``."""
    work = harness.clone(completed_attention_workflow, tmp_path_factory.mktemp("attention_all") / "wf")
    harness.run(work, "--cores", "2", "all")
    return work


@pytest.mark.workflow
@pytest.mark.parametrize("damage", ["gaze_table", "model_store"])
def test_damaged_attention_intermediate_is_rebuilt_with_its_consumers(harness, attention_all, tmp_path, damage):
    """A truncated gaze table, or a flipped chunk of a model's feature store, is moved aside and rebuilt by
    ``all`` with everything downstream; every table then equals the clean run's."""
    work = harness.clone(attention_all, tmp_path / "wf")
    if damage == "gaze_table":
        path = work / "results/attention/gaze/A.csv"
        os.truncate(path, path.stat().st_size // 2)
        expected = {"attention_gaze", "attention_score_rows", "aggregate_scores"}
    else:  # the model-output stage's first store (the stage folder is the track's model-output stage)
        path = sorted((work / "results/attention").glob("*/raw/A.zarr"))[0]
        _flip(_largest_chunk(path))
        expected = {"attention_score_rows", "aggregate_scores"}
    rel = path.relative_to(work).as_posix()
    dry = harness.run(work, "-n", "all")
    assert expected <= set(harness.job_counts(dry)), harness.output(dry)[-3000:]
    assert rel in harness.planned_outputs(dry)
    assert not (work / "results/.damaged").exists()
    proc = harness.run(work, "--cores", "2", "all")
    out = harness.output(proc)
    assert f"{rel} to results/.damaged/" in out, out[-3000:]
    assert expected <= set(harness.job_counts(proc)), out[-3000:]
    assert path.exists()
    _assert_like_clean(harness, attention_all, work)
