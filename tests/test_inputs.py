"""Raw data a rule reads are tracked: a changed, missing or added file reruns what reads it.

Library: :mod:`psybench.io.inputs` (listings and digests of a dataset tree).
Workflow: an IntPhys split's digest is a param of ``intphys_ingest``; an attention
movie file and its gaze recordings are inputs of ``attention_stimuli`` and
``attention_gaze`` (so, with ``--cache``, a movie's content is part of the cache key).
"""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from psybench.intphys.generate import generate_intphys
from psybench.io.inputs import listing_change, quarantine_changed_tree, record_listing, tree_digest, tree_listing


def _tree(tmp_path):
    root = tmp_path / "tree"
    (root / "a" / "scene").mkdir(parents=True)
    for i in range(3):
        (root / "a" / "scene" / f"scene_{i:03d}.png").write_bytes(bytes([i]) * 10)
    (root / "a" / "status.json").write_text('{"header": {}}')
    return root


def _change(root, change):
    """Change the tree of :func:`_tree` in one of the ways a dataset gets edited."""
    frame = root / "a" / "scene" / "scene_001.png"
    if change == "delete":
        frame.unlink()
    elif change == "truncate":
        os.truncate(frame, 5)
    elif change == "replace":  # same size, new content: the new file's mtime differs
        st = frame.stat()
        frame.write_bytes(b"x" * 10)
        os.utime(frame, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    elif change == "add":
        (root / "a" / "scene" / "scene_003.png").write_bytes(b"")
    else:
        (root / "a" / "status.json").write_text('{"header": {"x": 1}}')


class TestTreeDigest:
    def test_listing_is_sorted_relative_paths_with_sizes(self, tmp_path):
        root = _tree(tmp_path)
        rows = tree_listing(root)
        assert [r[0] for r in rows] == ["a/scene/scene_000.png", "a/scene/scene_001.png", "a/scene/scene_002.png",
                                        "a/status.json"]
        assert [r[1] for r in rows] == [10, 10, 10, 14]
        assert tree_digest(root) == tree_digest(root)  # deterministic

    @pytest.mark.parametrize("change", ["delete", "truncate", "replace", "add", "edit_status"])
    def test_every_kind_of_change_changes_the_digest(self, tmp_path, change):
        root = _tree(tmp_path)
        before = tree_digest(root)
        _change(root, change)
        assert tree_digest(root) != before

    def test_missing_tree_is_named(self, tmp_path):
        with pytest.raises(FileNotFoundError, match="nowhere"):
            tree_digest(tmp_path / "nowhere")


class TestRecordedListing:
    """A tree the workflow writes (a generated split): changes since its recorded listing are named."""

    @pytest.mark.parametrize("change, said", [("delete", "removed"), ("truncate", "changed"),
                                              ("replace", "changed"), ("add", "added"), ("edit_status", "changed")])
    def test_every_kind_of_change_is_named(self, tmp_path, change, said):
        root = _tree(tmp_path)
        record_listing(root)
        assert listing_change(root) is None
        _change(root, change)
        name = "a/status.json" if change == "edit_status" else (
            "a/scene/scene_003.png" if change == "add" else "a/scene/scene_001.png")
        assert listing_change(root).startswith(f"{root}/{name} was {said}")

    def test_changed_tree_is_moved_aside_with_its_listing(self, tmp_path):
        root = _tree(tmp_path)
        record_listing(root)
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None and root.is_dir()
        (root / "a" / "status.json").unlink()
        assert "a/status.json was removed" in quarantine_changed_tree(root, tmp_path / "damaged")
        assert not root.exists() and (tmp_path / "damaged" / root.relative_to("/") / "a" / "scene").is_dir()
        derived = tmp_path / "stores"
        derived.mkdir()
        record_listing(_tree(tmp_path))
        os.truncate(root / "a" / "status.json", 1)
        assert "a/status.json was changed" in quarantine_changed_tree(root, tmp_path / "d2", derived=[derived])
        moved = tmp_path / "d2" / tmp_path.relative_to("/")
        assert (moved / "tree").is_dir() and (moved / "stores").is_dir() and not derived.exists()
        assert not (tmp_path / ".tree.listing.json").exists()
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None  # absent: nothing to do

    @pytest.mark.parametrize("change", ["delete", "truncate", "replace", "add", "edit_status"])
    def test_tree_recorded_unchanged_reads_no_listing_until_a_file_changes(self, tmp_path, monkeypatch, change):
        """The stat record beside a tree that matched its listing: the next check lists and compares nothing."""
        from psybench.io import inputs

        root = _tree(tmp_path)
        record_listing(root)
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None
        assert (tmp_path / ".tree.psybench-verified.json").is_file()
        compared = []
        monkeypatch.setattr(inputs, "listing_change", lambda r: compared.append(r) or listing_change(r))
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None and compared == []
        _change(root, change)
        assert "a/" in quarantine_changed_tree(root, tmp_path / "damaged") and compared == [root]
        assert not root.exists() and not (tmp_path / ".tree.psybench-verified.json").exists()

    def test_touched_tree_is_compared_with_its_listing_then_recorded_again(self, tmp_path, monkeypatch):
        from psybench.io import inputs

        root = _tree(tmp_path)
        record_listing(root)
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None
        frame = root / "a" / "scene" / "scene_001.png"
        st = frame.stat()
        os.utime(frame, ns=(st.st_atime_ns, st.st_mtime_ns))  # same times: only its ctime moves
        compared = []
        monkeypatch.setattr(inputs, "listing_change", lambda r: compared.append(r) or listing_change(r))
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None and compared == [root]
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None and compared == [root]

    def test_check_without_move_records_an_intact_tree_and_leaves_a_changed_one(self, tmp_path, monkeypatch):
        """move=False (the workflow's onsuccess): an intact tree is recorded, so the next check reads no
        listing; a changed one is reported and left in place for the next run's check to move."""
        from psybench.io import inputs

        root = _tree(tmp_path)
        record_listing(root)
        assert quarantine_changed_tree(root, None, move=False) is None
        assert (tmp_path / ".tree.psybench-verified.json").is_file()
        compared = []
        monkeypatch.setattr(inputs, "listing_change", lambda r: compared.append(r) or listing_change(r))
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None and compared == []
        _change(root, "delete")
        assert "a/" in quarantine_changed_tree(root, None, move=False)
        assert root.is_dir() and (tmp_path / ".tree.listing.json").is_file()
        assert "a/" in quarantine_changed_tree(root, tmp_path / "damaged")
        assert not root.exists()

    def test_tree_without_listing_is_reported_then_recorded_once(self, tmp_path):
        root = _tree(tmp_path)
        assert "has no recorded listing" in listing_change(root)
        assert quarantine_changed_tree(root, tmp_path / "damaged") is None and root.is_dir()
        assert listing_change(root) is None

    def test_generated_split_records_its_listing(self, tmp_path):
        generate_intphys(tmp_path, "dev", blocks=("O1",), n_frames=8, height=16, width=16)
        assert (tmp_path / ".dev.listing.json").is_file() and listing_change(tmp_path / "dev") is None


def _planned_rules(harness, proc):
    return set(harness.job_counts(proc))


@pytest.mark.workflow
class TestIntphysTreeChangesRerun:
    """A real (not generated) IntPhys split: editing it below the split folder reruns the ingest."""

    TARGET = "results/intphys/stores/dev/shard_0000.csv"

    @pytest.fixture(scope="class")
    def ingested(self, harness, tmp_path_factory):
        work = tmp_path_factory.mktemp("intphys_inputs")
        small = {"blocks": ("O1",), "n_frames": 8, "height": 16, "width": 16}
        generate_intphys(work / "data", "train", n_train=2, **small)
        generate_intphys(work / "data", "dev", **small)
        cfg = {"tracks": ["intphys"],
               "intphys": {"data_root": "data", "generate": False, "shard_size": 100,
                           "models": [{"name": "constant", "algorithm": "constant"}]}}
        harness.copy(work, cfg)
        harness.run(work, "--cores", "1", self.TARGET)
        assert "Nothing to be done" in harness.output(harness.run(work, "-n", self.TARGET))
        return work

    def _frame(self, work):
        return sorted((work / "data" / "dev").rglob("scene_*.png"))[0]

    @pytest.mark.parametrize("change", ["delete", "truncate", "replace", "edit_status"])
    def test_change_below_the_split_reruns_ingest(self, harness, ingested, tmp_path, change):
        work = harness.clone(ingested, tmp_path / "w")
        frame = self._frame(work)
        if change == "delete":
            frame.unlink()
        elif change == "truncate":
            os.truncate(frame, frame.stat().st_size // 2)
        elif change == "replace":
            frame.write_bytes(self._frame(ingested).read_bytes()[::-1])
        else:
            status = next((work / "data" / "dev").rglob("status.json"))
            status.write_text(status.read_text().replace("true", "false", 1))
        proc = harness.run(work, "-n", self.TARGET)
        assert "intphys_ingest" in _planned_rules(harness, proc), harness.output(proc)[-2000:]


@pytest.mark.workflow
def test_edit_inside_a_generated_split_regenerates_it(harness, tmp_path):
    """A generated split is a directory output: a frame truncated in it is noticed before the
    real run plans, the split is generated again (deterministically: the frame comes back) and
    the ingest reruns; nothing happens in a dry run."""
    target = "results/intphys/stores/dev/shard_0000.csv"
    cfg = {"tracks": ["intphys"],
           "intphys": {"generate": True, "shard_size": 100,
                       "generator": {"blocks": ["O1"], "n_frames": 8, "height": 16, "width": 16, "n_train": 2},
                       "models": [{"name": "constant", "algorithm": "constant"}]}}
    work = harness.copy(tmp_path / "w", cfg)
    harness.run(work, "--cores", "1", target)
    frame = sorted((work / "results/intphys/generated/dev").rglob("scene_*.png"))[0]
    original = frame.read_bytes()
    os.truncate(frame, len(original) // 2)
    assert "Nothing to be done" in harness.output(harness.run(work, "-n", target))  # dry run: never repairs
    proc = harness.run(work, "--cores", "1", target)
    out = harness.output(proc)
    assert "moved the generated IntPhys split" in out and "was changed" in out, out[:1500]
    assert {"intphys_generate", "intphys_ingest"} <= set(harness.job_counts(proc)), out[-3000:]
    assert frame.read_bytes() == original
    damaged = work / "results/.damaged/intphys-generated/dev/results/intphys"
    assert (damaged / "generated" / frame.relative_to(work / "results/intphys/generated")).stat().st_size == len(
        original) // 2
    assert (damaged / "stores" / "dev" / "shard_0000.zarr").is_dir()
    assert "Nothing to be done" in harness.output(harness.run(work, "--cores", "1", target))


def _write_avi(path, level, n=6, size=(32, 24)):
    w, h = size
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (w, h))
    for _ in range(n):
        vw.write(np.full((h, w, 3), level, np.uint8))
    vw.release()


@pytest.mark.workflow
def test_second_workflow_with_another_movie_at_same_path_gets_its_own_from_cache(harness, tmp_path):
    """Two workflows share the output cache; the movie at data/clip.avi differs. Each gets its own stimulus."""
    from psybench.io.store import open_store

    cache = tmp_path / "cache"
    cache.mkdir()
    gaze = "t\tx\ty\n0\t10\t10\n100\t12\t11\n"
    cfg = {"tracks": ["attention"],
           "attention": {"grid": [8, 6], "chunk_frames": 4,
                         "movies": {"M": {"file": "data/clip.avi", "gaze": "data/gaze.tsv", "gaze_format": "table",
                                          "gaze_columns": {"time": "t", "time_unit": "ms", "x": "x", "y": "y"}}},
                         "models": [{"name": "raw", "algorithm": "raw", "L": 1}], "pairs": [["M", "M"]]}}
    means = {}
    for name, level in (("a", 200), ("b", 40)):
        work = harness.copy(tmp_path / name, cfg)
        (work / "data").mkdir()
        _write_avi(work / "data" / "clip.avi", level)
        (work / "data" / "gaze.tsv").write_text(gaze)
        env = harness.env(work, SNAKEMAKE_OUTPUT_CACHE=str(cache))
        harness.run(work, "--cache", "--cores", "1", "results/attention/stimuli/M.zarr", env=env)
        means[name] = float(np.asarray(open_store(work / "results/attention/stimuli/M.zarr")["frames"]).mean())
    assert means["a"] == pytest.approx(200 / 255, abs=0.03) and means["b"] == pytest.approx(40 / 255, abs=0.03)
    # editing the clip in place reruns its stimulus; editing the gaze recording reruns the gaze table
    work = tmp_path / "a"
    harness.run(work, "--cores", "1", "results/attention/gaze/M.csv")
    (work / "data" / "gaze.tsv").write_text(gaze + "200\t13\t12\n")
    assert _planned_rules(harness, harness.run(work, "-n", "results/attention/gaze/M.csv")) == {"attention_gaze"}
    _write_avi(work / "data" / "clip.avi", 120)
    assert "attention_stimuli" in _planned_rules(harness, harness.run(work, "-n", "results/attention/gaze/M.csv"))


@pytest.mark.parametrize("value", ["false", "true", 2, 0.5])
def test_label_of_the_wrong_type_is_an_error_naming_the_file(tmp_path, value):
    """The measured fault: ``"possible": "false"`` (a string) was read as possible."""
    import json

    from psybench.intphys.ingest import ingest_shard
    from psybench.intphys.ingest.layout import IntPhysFormatError

    generate_intphys(tmp_path / "data", "dev", blocks=("O1",), n_frames=8, height=16, width=16)
    status = sorted((tmp_path / "data" / "dev").rglob("status.json"))[5]
    doc = json.loads(status.read_text())
    assert isinstance(doc["possible"], bool)
    doc["possible"] = value
    status.write_text(json.dumps(doc))
    with pytest.raises(IntPhysFormatError, match=rf"status file {status}: 'possible' is {value!r}"):
        ingest_shard(tmp_path / "data", "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=100)
    assert not (tmp_path / "s.zarr").exists()
