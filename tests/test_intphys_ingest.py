"""Ingestion of IntPhys trees: roundtrip vs cv2.imread, both variants, errors naming the file."""
import json
import shutil

import cv2
import numpy as np
import pandas as pd
import pytest

from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import IntPhysFormatError, ingest_shard, list_movies, shard_movies
from psybench.intphys.models.observation import observe
from psybench.io.store import open_store


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("ip")
    generate_intphys(root, "dev", blocks=("O2",), n_frames=8, height=32, width=32)
    generate_intphys(root, "train", n_train=5, n_frames=8, height=32, width=32, status_variant="header",
                     depth_encoding="16bit")
    return root


@pytest.mark.parametrize("split", ["dev", "train"])
def test_roundtrip_equals_imread(tree, tmp_path, split):
    table = ingest_shard(tree, split, tmp_path / "s.zarr", tmp_path / "s.csv", shard=1, shard_size=4, threads=2)
    store = open_store(tmp_path / "s.zarr", deep=True)
    movies = [m for m in list_movies(tree, split)][4:8]
    assert store.attrs["movies"] == [m.movie_id for m in movies] == list(table["movie"])
    assert store.dims["scene"] == ("movie", "t", "y", "x", "c")
    scene, depth, masks = (np.asarray(store[k]) for k in ("scene", "depth", "masks"))
    for i, m in enumerate(movies):
        st = json.loads((m.path / "status.json").read_text())
        for t in (0, 7):
            rgb = cv2.imread(str(m.path / "scene" / f"scene_{t + 1:03d}.png"))[..., ::-1]
            np.testing.assert_array_equal(scene[i, t], rgb)
            raw = cv2.imread(str(m.path / "depth" / f"depth_{t + 1:03d}.png"), cv2.IMREAD_UNCHANGED)
            if split == "train":  # 16-bit: 65535 - mm
                np.testing.assert_array_equal(depth[i, t], 65535.0 - raw)
                assert table["depth_encoding"].iloc[i] == "uint16_inverse_mm"
            else:  # 8-bit V1.0: value / 255 * max_depth
                np.testing.assert_allclose(depth[i, t], raw / 255.0 * st["max_depth"], rtol=1e-6)
                assert table["depth_encoding"].iloc[i] == "uint8_max_depth"
            np.testing.assert_array_equal(masks[i, t], cv2.imread(str(m.path / "masks" / f"masks_{t + 1:03d}.png"), -1))
    if split == "dev":
        assert table["possible"].sum() == 2 and set(table["quadruplet"]) == {"O2/0002"}
        assert table["status_variant"].iloc[0] == "v1"
    else:
        assert table["status_variant"].iloc[0] == "header" and table["possible"].all()
    assert (tmp_path / "s.parquet").exists()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "s.parquet"), table, check_dtype=False)


def test_shards_cover_all_movies(tree):
    movies = list_movies(tree, "dev")
    shards = shard_movies(movies, 50)
    assert [len(s) for s in shards] == [50, 22]
    assert sum(shards, []) == movies


def _copy(tree, tmp_path):
    dst = tmp_path / "tree"
    shutil.copytree(tree / "dev", dst / "dev")
    return dst


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda m: (m / "depth" / "depth_005.png").unlink(), r"missing frame .*depth_005\.png"),
        (
            lambda m: (m / "scene" / "scene_003.png").write_bytes(b"\x89PNG garbage"),
            r"scene_003\.png cannot be decoded",
        ),
        (lambda m: (m / "status.json").unlink(), r"missing status file .*0001/2/status\.json"),
    ],
)
def test_damaged_movie_names_file_and_leaves_no_store(tree, tmp_path, damage, message):
    root = _copy(tree, tmp_path)
    damage(root / "dev" / "O2" / "0001" / "2")
    out = tmp_path / "out" / "s.zarr"
    with pytest.raises(IntPhysFormatError, match=message):
        ingest_shard(root, "dev", out, tmp_path / "out" / "s.csv", shard=0, shard_size=8, threads=2)
    assert not out.exists()
    assert not list((tmp_path / "out").glob("*.tmp-*")) if (tmp_path / "out").exists() else True


def test_not_an_intphys_tree_names_directory(tmp_path):
    (tmp_path / "dev" / "videos" / "a").mkdir(parents=True)
    with pytest.raises(IntPhysFormatError, match=r"dev/videos is not an IntPhys block directory"):
        list_movies(tmp_path, "dev")
    (tmp_path / "train" / "clip_a").mkdir(parents=True)
    with pytest.raises(IntPhysFormatError, match=r"train/clip_a is not an IntPhys training movie"):
        list_movies(tmp_path, "train")
    with pytest.raises(IntPhysFormatError, match=r"test does not exist"):
        list_movies(tmp_path, "test")
    (tmp_path / "x" / "dev" / "O1" / "0001" / "1").mkdir(parents=True)
    with pytest.raises(IntPhysFormatError, match=r"O1/0001 holds runs \['1'\]"):
        list_movies(tmp_path / "x", "dev")


def test_unlabelled_8bit_test_split_keeps_relative_depth(tmp_path):
    """The V1.0 test set is raw RGBD without metadata (Riochet et al. 2018, IntPhys V1.0, "Dev and Test"): 8-bit
    depth PNGs and no status.json, hence no max_depth. It ingests with the gray values kept unscaled, and the store
    says so; a labelled movie whose status.json lacks max_depth still stops the ingest (fails on the former code,
    which stopped on the test split too)."""
    root = tmp_path / "data"
    generate_intphys(root, "test", blocks=("O1",), n_frames=8, height=16, width=16, quadruplet_names="descriptive")
    for status in (root / "test").glob("O1/*/*/status.json"):
        status.unlink()
    table = ingest_shard(root, "test", tmp_path / "t.zarr", tmp_path / "t.csv", shard_size=100)
    store = open_store(tmp_path / "t.zarr", deep=True)
    assert store.attrs["depth_units"] == "relative (8-bit, unscaled)"
    assert store.array_attrs["depth"]["units"] == "relative (8-bit, unscaled)"
    assert set(table["depth_encoding"]) == {"uint8_unscaled"} and table["possible"].isna().all()
    assert set(table["status_variant"]) == {"absent"} and len(table) == 72
    depth = np.asarray(store["depth"])
    movies = list_movies(root, "test")
    for i in (0, 71):
        for t in (0, 7):
            raw = cv2.imread(str(movies[i].path / "depth" / f"depth_{t + 1:03d}.png"), cv2.IMREAD_UNCHANGED)
            assert raw.dtype == np.uint8
            np.testing.assert_array_equal(depth[i, t], raw.astype(np.float32))  # unscaled, exactly
    # a model is told the units (it cannot read the store's attributes)
    assert observe(tmp_path / "t.zarr", tmp_path / "t.csv").depth_units == "relative (8-bit, unscaled)"
    # a labelled split keeps today's rule: 8-bit depth needs max_depth
    generate_intphys(root, "dev", blocks=("O1",), n_frames=8, height=16, width=16)
    status = root / "dev" / "O1" / "0001" / "3" / "status.json"
    st = json.loads(status.read_text())
    del st["max_depth"]
    status.write_text(json.dumps(st))
    with pytest.raises(IntPhysFormatError, match=r"8-bit depth frame .*0001/3/depth/depth_001\.png needs 'max_depth'"):
        ingest_shard(root, "dev", tmp_path / "d.zarr", tmp_path / "d.csv", shard_size=100)
    assert not (tmp_path / "d.zarr").exists()
