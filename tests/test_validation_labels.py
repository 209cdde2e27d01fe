"""Label and condition values of the wrong type in IntPhys status.json, and non-UTF-8 answer.txt,
are errors naming the file."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from psybench.intphys.answer import AnswerFormatError, read_answer
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, list_movies
from psybench.intphys.ingest.layout import IntPhysFormatError


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    generate_intphys(root, "dev", n_frames=8, height=16, width=16, seed=3, blocks=("O1",), threads=1)
    return root


@pytest.fixture
def edited(tree, tmp_path):
    """A copy of the tree whose first status.json gets ``{key: value}``; returns (root, status path)."""
    def edit(key, value):
        root = tmp_path / "tree"
        shutil.copytree(tree, root)
        path = sorted(root.rglob("status.json"))[0]
        status = json.loads(path.read_text())
        status[key] = value
        path.write_text(json.dumps(status))
        return root, path
    return edit


@pytest.mark.parametrize("key,value", [
    ("possible", "false"), ("possible", 0), ("possible", None), ("n_objects", "three"), ("n_objects", 7),
    ("n_objects", True),
])
def test_wrong_label_type_names_the_file(edited, tmp_path, key, value):
    root, path = edited(key, value)
    n = len(list_movies(root, "dev"))
    with pytest.raises(IntPhysFormatError, match=rf"status file {path}: '{key}' is {value!r}"):
        ingest_shard(root, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard=0, shard_size=n, threads=1)
    assert not (tmp_path / "s.zarr").exists()


def test_is_occluded_of_a_2019_status_must_be_boolean():
    from psybench.intphys.ingest.status import _status_conditions

    assert _status_conditions({"is_occluded": False, "_path": "s.json"}) == {"visibility": "visible"}
    with pytest.raises(IntPhysFormatError, match=r"status file s\.json: 'is_occluded' is 'no'"):
        _status_conditions({"is_occluded": "no", "_path": "s.json"})


def test_boolean_labels_are_read_as_they_are(edited, tmp_path):
    root, path = edited("possible", False)
    n = len(list_movies(root, "dev"))
    ingest_shard(root, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard=0, shard_size=n, threads=1)
    meta = pd.read_csv(tmp_path / "s.csv")
    movie = "/".join(path.parent.relative_to(root / "dev").parts)
    assert not meta.set_index("movie").loc[movie, "possible"]
    assert meta["possible"].sum() == n // 2 - 1  # the generator's half possible, less the one edited


def test_non_utf8_answer_names_file_and_line(tmp_path):
    meta = pd.DataFrame({"movie": ["O1/0001/1", "O1/0001/2"], "quadruplet": ["O1/0001"] * 2})
    path = tmp_path / "answer.txt"
    path.write_bytes(b"O1/0001/1 0.5\nO1/0001/2 0,\xe9\n")
    with pytest.raises(AnswerFormatError, match=rf"{path}, line 2: not UTF-8 text"):
        read_answer(path, meta, require_all=False)
