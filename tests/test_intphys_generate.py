"""Generator of IntPhys-format trees: layout, determinism, both status/depth variants."""
import hashlib
import json

import cv2
import numpy as np
import pytest

from psybench.intphys.generate import expected_movie_ids, generate_intphys
from psybench.intphys.ingest import list_movies


def _digest(root):
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def test_dev_layout_and_determinism(tmp_path):
    a = generate_intphys(tmp_path / "a", "dev", blocks=("O1",), n_frames=10, height=32, width=32, seed=3)
    b = generate_intphys(tmp_path / "b", "dev", blocks=("O1",), n_frames=10, height=32, width=32, seed=3)
    c = generate_intphys(tmp_path / "c", "dev", blocks=("O1",), n_frames=10, height=32, width=32, seed=4)
    assert _digest(a) == _digest(b)
    assert _digest(a) != _digest(c)
    ids = [m.movie_id for m in list_movies(tmp_path / "a", "dev")]
    assert ids == expected_movie_ids("dev", blocks=("O1",))
    assert len(ids) == 18 * 4
    movie = a / "O1" / "0001" / "1"
    for kind in ("scene", "depth", "masks"):
        names = sorted(p.name for p in (movie / kind).iterdir())
        assert names == [f"{kind}_{t:03d}.png" for t in range(1, 11)]
    st = json.loads((movie / "status.json").read_text())
    assert {"block", "possible", "masks_grayscale", "frames", "max_depth"} <= set(st)
    assert len(st["frames"]) == 10
    # every quadruplet: 2 possible + 2 impossible, one condition
    for q in range(1, 19):
        sts = [json.loads((a / "O1" / f"{q:04d}" / str(r) / "status.json").read_text()) for r in range(1, 5)]
        assert sorted(s["possible"] for s in sts) == [False, False, True, True]
        assert len({(s["visibility"], s["motion"], s["n_objects"]) for s in sts}) == 1


def test_o1_visible_static_object_count_changes(tmp_path):
    root = generate_intphys(tmp_path, "dev", blocks=("O1",), n_frames=12, height=48, width=48)
    # index 1 = visible, 1 object (0 vs 1), static
    for r in range(1, 5):
        d = root / "O1" / "0001" / str(r)
        st = json.loads((d / "status.json").read_text())
        obj = [v for v, n in st["masks_grayscale"] if n.startswith("object")]
        present = [bool(np.isin(cv2.imread(str(d / "masks" / f"masks_{t:03d}.png"), -1), obj).any())
                   for t in range(1, 13)]
        if st["possible"]:
            assert len(set(present)) == 1  # always there or never
        else:
            assert present[0] != present[-1] and present[:6] == [present[0]] * 6


def test_header_variant_and_16bit_depth_consistent_with_masks(tmp_path):
    root = generate_intphys(tmp_path, "train", n_train=3, status_variant="header", depth_encoding="16bit",
                            n_frames=8, height=32, width=32)
    d = root / "00001"
    st = json.loads((d / "status.json").read_text())
    assert set(st) == {"header", "frames"} and st["header"]["is_possible"] is True
    depth = cv2.imread(str(d / "depth" / "depth_004.png"), cv2.IMREAD_UNCHANGED)
    mask = cv2.imread(str(d / "masks" / "masks_004.png"), cv2.IMREAD_UNCHANGED)
    assert depth.dtype == np.uint16
    mm = 65535.0 - depth
    # the 2019 saver (bootphon/intphys tools/saver.py) names the gray values per frame: frames[t]["masks"]
    gray = st["frames"][3]["masks"]
    assert np.allclose(mm[mask == gray["sky"]], 10000)
    obj = np.isin(mask, [v for n, v in gray.items() if n.startswith("object")])
    # objects stand in front of the back wall (4 m)
    assert obj.any() and mm[obj].max() < 4000


def test_skeleton_is_fast_and_listable(tmp_path):
    root = generate_intphys(tmp_path, "train", n_train=500, skeleton=True)
    assert len(list_movies(tmp_path, "train")) == 500
    assert not (root / "00001" / "scene").exists() and (root / "00001" / "status.json").exists()


def test_bad_arguments_name_the_key(tmp_path):
    with pytest.raises(ValueError, match="depth_encoding"):
        generate_intphys(tmp_path, "dev", depth_encoding="12bit")
    with pytest.raises(ValueError, match="split"):
        generate_intphys(tmp_path, "val")
