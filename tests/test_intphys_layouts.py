"""Every published IntPhys layout is ingested, detected and recorded.

The trees follow the public code that wrote or read the releases:

* V1.0 (uetorch era): flat status.json with ``possible`` and ``masks_grayscale``,
  frames in ``mask/mask_NNN.png`` (cdoucet/intphys ``NaivePhysicsProject/Scripts/saver.lua``:
  ``mask/mask_<step>.png``, key order block, possible, floor, camera, lights,
  max_depth, masks_grayscale, steps), 8-bit depth scaled by ``max_depth``;
* 2019 generator (bootphon/intphys ``Content/Scripts/tools/saver.py``):
  ``{"header": {..., "is_possible"}, "frames": [{..., "masks": {name: gray}}]}``
  with gray values assigned per frame, ``masks/masks_NNN.png``, 16-bit depth;
  quadruplets ``<block>/<index>/<1..4>`` (``scene.py`` ``get_scene_subdir``);
* the 2018 baselines' reader (rronan/IntPhys-Baselines ``utils.get_mask_index``:
  ``status["header"]["masks"]`` a {name: gray} dict; ``lists/make_list_test.py``
  selects movies by descriptive names such as ``O1_test_visible_static_nobj1``);
* the released archives (bootphon/intphys ``Tools/make_archives.py``): the dev
  archive's status.json cut to ``{"header": {"is_possible": ...}}``, the test
  archive with PNGs only.
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import (
    IntPhysConditionWarning,
    IntPhysFormatError,
    ingest_shard,
    list_movies,
    merge_metadata,
)
from psybench.intphys.metrics import score_table
from psybench.intphys.models.observation import observe
from psybench.intphys.models.tracking import tracking_permanence

SMALL = {"blocks": ("O1",), "n_frames": 8, "height": 24, "width": 24}

LAYOUTS = {
    # name: (generator keywords, split, expected status_variant, condition_source, frame_layout, mask_ids)
    "v1_mask_dir_8bit": ({"status_variant": "v1", "depth_encoding": "8bit", "mask_layout": "mask"},
                         "dev", "v1", "status", "mask/mask_NNN.png", "static"),
    "header_per_frame_ids_descriptive": ({"status_variant": "header", "depth_encoding": "16bit",
                                          "mask_ids": "per_frame", "quadruplet_names": "descriptive"},
                                         "dev", "header", "status", "masks/masks_NNN.png", "per_frame_remapped"),
    "header_masks_dict_descriptive": ({"status_variant": "header_masks", "depth_encoding": "16bit",
                                       "quadruplet_names": "descriptive"},
                                      "dev", "header_masks", "folder", "masks/masks_NNN.png", "static"),
    "header_only_dev_archive": ({"status_variant": "header_only", "depth_encoding": "16bit"},
                                "dev", "header_only", "none", "masks/masks_NNN.png", "unnamed"),
    "test_split_without_status": ({"status_variant": "absent", "depth_encoding": "16bit"},
                                  "test", "absent", "none", "masks/masks_NNN.png", "unnamed"),
}


def _ingest(root, split, tmp_path, conditions=None):
    table = ingest_shard(root, split, tmp_path / "s.zarr", tmp_path / "s.csv", shard=0, shard_size=100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        merged = merge_metadata([tmp_path / "s.csv"], tmp_path / "meta.csv", conditions=conditions)
    return table, merged, [w for w in caught if issubclass(w.category, IntPhysConditionWarning)]


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    out = {}
    for name, (kw, split, *_rest) in LAYOUTS.items():
        root = tmp_path_factory.mktemp(name)
        generate_intphys(root, split, **SMALL, **kw)
        out[name] = root
    return out


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_layout_ingests_detected_and_recorded(trees, tmp_path, name):
    _, split, variant, source, frame_layout, mask_ids = LAYOUTS[name]
    table, merged, warned = _ingest(trees[name], split, tmp_path)
    assert len(table) == 72 and table["movie"].iloc[0] == "O1/0001/1"  # the answer.txt's short ids
    assert set(table["status_variant"]) == {variant}
    assert set(table["condition_source"]) == {source}
    assert set(table["frame_layout"]) == {frame_layout}
    assert set(table["mask_ids"]) == {mask_ids}
    if name.endswith("descriptive"):
        assert table["folder"].iloc[0] == "0001_O1_test_visible_static_nobj1"
    if source == "none":  # the warning names the movies; no fake "unknown" condition
        assert warned and "O1/0001/1" in str(warned[0].message)
        assert merged["visibility"].isna().all() and not (merged["visibility"] == "unknown").any()
    else:
        assert not warned
        assert merged.groupby(["visibility", "motion", "n_objects"]).ngroups == 18
    if split == "dev":
        scores = pd.Series(np.linspace(0, 1, len(merged)), index=merged["movie"])
        t = score_table(scores, merged, model="m", n_boot=0)
        per_condition = t[(t[["block", "visibility", "motion", "n_objects"]] != "all").all(axis=1)]
        assert len(per_condition) == (18 * 3 if source != "none" else 0)
        overall = t[(t[["block", "visibility", "motion", "n_objects"]] == "all").all(axis=1) & (t["metric"] == "L_R")]
        assert overall["n_quadruplets"].iloc[0] == 18
    else:
        assert merged["possible"].isna().all()


def test_condition_table_fills_the_dev_archive(trees, tmp_path):
    """Header-only dev archive + the user's CSV (config key intphys.conditions): 18 conditions again."""
    status_tree = tmp_path / "v1"
    generate_intphys(status_tree, "dev", **SMALL, status_variant="v1", depth_encoding="16bit")
    truth, _, _ = _ingest(status_tree, "dev", tmp_path / "a")
    csv = tmp_path / "conditions.csv"
    quads = truth.drop_duplicates("quadruplet")
    quads.assign(movie=quads["quadruplet"])[["movie", "block", "visibility", "motion", "n_objects"]].to_csv(
        csv, index=False)
    _, merged, warned = _ingest(trees["header_only_dev_archive"], "dev", tmp_path / "b", conditions=csv)
    assert not warned and set(merged["condition_source"]) == {"table"}
    pd.testing.assert_frame_equal(merged[["visibility", "motion", "n_objects"]],
                                  truth[["visibility", "motion", "n_objects"]], check_dtype=False)
    bad = tmp_path / "bad.csv"
    bad.write_text("movie,block,visibility,motion,n_objects\nO1/0001,O1,hidden,static,1\n")
    with pytest.raises(IntPhysFormatError, match=r"bad\.csv, line 2: visibility 'hidden'"):
        _ingest(trees["header_only_dev_archive"], "dev", tmp_path / "c", conditions=bad)


def test_tracking_same_answer_with_reshuffled_mask_ids(tmp_path):
    """Per-frame reshuffled gray values are mapped to stable ids: the tracking model gives the same P as on
    the same movies with static ids, and not a constant."""
    preds = {}
    for ids in ("static", "per_frame"):
        root = tmp_path / ids
        generate_intphys(root, "dev", **SMALL, status_variant="header", depth_encoding="16bit", mask_ids=ids)
        ingest_shard(root, "dev", tmp_path / f"{ids}.zarr", tmp_path / f"{ids}.csv", shard_size=100)
        preds[ids] = tracking_permanence(observe(tmp_path / f"{ids}.zarr", tmp_path / f"{ids}.csv"))
    pd.testing.assert_series_equal(preds["static"], preds["per_frame"])
    assert preds["static"].nunique() > 1


@pytest.mark.parametrize("name", ["header_only_dev_archive", "test_split_without_status"])
def test_tracking_answers_without_mask_names(trees, tmp_path, name):
    """No status.json names the masks (the test split, the dev archive): the model tracks the mask segments
    themselves (psybench.intphys.models.tracking_links) and answers every movie, not a constant."""
    split = LAYOUTS[name][1]
    ingest_shard(trees[name], split, tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=100)
    p = tracking_permanence(observe(tmp_path / "s.zarr", tmp_path / "s.csv"))
    assert len(p) == 72 and p.between(0, 1).all() and p.nunique() > 1


def test_unknown_layouts_name_the_file_and_what_was_expected(trees, tmp_path):
    root = tmp_path / "tree"
    generate_intphys(root, "dev", **SMALL, status_variant="v1", depth_encoding="8bit")
    movie = root / "dev" / "O1" / "0003" / "2"
    (movie / "status.json").write_text(json.dumps({"objects": []}))
    with pytest.raises(IntPhysFormatError, match=r"0003/2/status\.json is not a known IntPhys status: expected a "
                                                  r"flat V1\.0 object with 'possible' or a 2019 object"):
        ingest_shard(root, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=100)
    (movie / "masks").rename(movie / "segmentation")
    (movie / "status.json").unlink()
    with pytest.raises(IntPhysFormatError, match=r"missing status file .*0003/2/status\.json"):
        ingest_shard(root, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=100)
    (movie / "status.json").write_text(json.dumps({"possible": True, "max_depth": 1000.0}))
    with pytest.raises(IntPhysFormatError, match=r"0003/2 has no masks folder: expected masks/masks_NNN\.png .* or "
                                                  r"mask/mask_NNN\.png"):
        ingest_shard(root, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=100)
    (root / "dev" / "O1" / "0004").rename(root / "dev" / "O1" / "quad_4")
    with pytest.raises(IntPhysFormatError, match=r"O1/quad_4 is not an IntPhys quadruplet directory"):
        list_movies(root, "dev")


def test_shard_files_are_few_and_data_unchanged(trees, tmp_path, monkeypatch):
    """Zarr v3 sharding codec: one file per shard of whole-movie chunks, data and
    checksums as without sharding. Chunk = 2 movies, shard = 6 movies: 72 movies -> 12 files per array
    instead of 36."""
    import psybench.intphys.ingest.shard as shard_mod
    from psybench.io.store import open_store

    T, H, W = 8, 24, 24
    monkeypatch.setattr(shard_mod, "_CHUNK_BYTES", 2 * T * H * W * 3)
    monkeypatch.setattr(shard_mod, "_SHARD_BYTES", 6 * T * H * W * 8)
    root = trees["v1_mask_dir_8bit"]
    ingest_shard(root, "dev", tmp_path / "sharded.zarr", tmp_path / "a.csv", shard_size=100)
    monkeypatch.setattr(shard_mod, "_SHARD_BYTES", 1)  # one chunk per shard = one file per chunk, as before
    ingest_shard(root, "dev", tmp_path / "plain.zarr", tmp_path / "b.csv", shard_size=100)
    for name in ("scene", "depth", "masks"):
        files = {k: [p for p in (tmp_path / f"{k}.zarr" / name / "c").rglob("*") if p.is_file()]
                 for k in ("sharded", "plain")}
        assert (len(files["sharded"]), len(files["plain"])) == (12, 36)
    a, b = open_store(tmp_path / "sharded.zarr", deep=True), open_store(tmp_path / "plain.zarr", deep=True)
    assert a.arrays["scene"].chunks[0] == (6,) * 12
    for name in ("scene", "depth", "masks"):
        np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]))


def test_observation_holds_no_labels_even_where_status_has_them(trees, tmp_path):
    """Library level (the workflow test runs a cheating user model): the metadata table
    beside the store has `possible` and the conditions, the Observation a model receives has neither."""
    import dataclasses

    ingest_shard(trees["v1_mask_dir_8bit"], "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=100)
    table = pd.read_csv(tmp_path / "s.csv")
    assert {"possible", "visibility", "motion", "n_objects", "quadruplet"} <= set(table.columns)
    obs = observe(tmp_path / "s.zarr", tmp_path / "s.csv")
    fields = ["movies", "scene", "depth", "masks", "masks_grayscale", "depth_units"]
    assert [f.name for f in dataclasses.fields(obs)] == fields
    reachable = repr(obs.movies) + repr(obs.masks_grayscale) + repr(obs.scene) + repr(vars(obs))
    assert not any(word in reachable for word in ("possible", "occluded", "visible", "dynamic", "s.csv", "s.zarr"))
