"""Shard planning from the configuration: generator sizes or a listing of a real tree."""
import pytest

from psybench.intphys.generate import expected_movie_ids, generate_intphys
from psybench.intphys.ingest import IntPhysFormatError
from psybench.intphys.shards import count_movies, shard_ids

GENERATOR = {"blocks": ["O1", "O3"], "per_condition": 2, "n_train": 7}


def test_generated_counts_need_no_tree(tmp_path):
    assert count_movies(tmp_path / "absent", "dev", generator=GENERATOR) == 2 * 18 * 2 * 4
    assert count_movies(tmp_path / "absent", "train", generator=GENERATOR) == 7


def test_real_tree_is_listed_and_agrees_with_the_generator(tmp_path):
    generate_intphys(tmp_path, "dev", blocks=("O1", "O3"), per_condition=2, skeleton=True)
    generate_intphys(tmp_path, "train", n_train=7, skeleton=True)
    for split in ("dev", "train"):
        n = count_movies(tmp_path, split)
        assert n == count_movies(tmp_path, split, generator=GENERATOR)
        assert n == len(expected_movie_ids(split, blocks=("O1", "O3"), per_condition=2, n_train=7))
    assert not list(tmp_path.glob("*tmp-*"))  # the tree is built under a temporary sibling, then renamed
    with pytest.raises(IntPhysFormatError, match="test does not exist"):
        count_movies(tmp_path, "test")


@pytest.mark.parametrize("n, size, expected", [(0, 50, []), (1, 50, ["0000"]), (50, 50, ["0000"]),
                                               (51, 50, ["0000", "0001"]), (230, 50, [f"{k:04d}" for k in range(5)])])
def test_shard_ids_cover_every_movie(n, size, expected):
    assert shard_ids(n, size) == expected
