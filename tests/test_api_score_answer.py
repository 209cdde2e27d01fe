"""``psybench score-answer``: an IntPhys submission scored against a labelled tree (issue 16, Deliver 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psybench.cli import main
from psybench.intphys.answer import read_answer, write_answer
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard, merge_metadata
from psybench.intphys.metrics import score_table
from psybench.intphys.score_answer import score_answer, tree_metadata

OVERALL = {"block": "all", "visibility": "all", "motion": "all", "n_objects": "all"}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("intphys")
    generate_intphys(root, "dev", blocks=("O1",), n_frames=8, height=16, width=16)
    generate_intphys(root, "test", blocks=("O1",), n_frames=8, height=16, width=16, status_variant="absent",
                     depth_encoding="16bit")
    return root


def _overall(table: pd.DataFrame, metric: str) -> float:
    sel = (table[list(OVERALL)].astype(str) == "all").all(axis=1) & (table["metric"] == metric)
    (value,) = table.loc[sel, "value"]
    return float(value)


def _answer(tmp_path, meta: pd.DataFrame, values) -> str:
    path = tmp_path / "mine" / "answer.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_answer(pd.Series(values, index=meta["movie"].astype(str).to_numpy()), path)
    return str(path)


def test_perfect_and_inverted_answers_give_the_known_errors(tree, tmp_path):
    meta = tree_metadata(tree, "dev")
    assert len(meta) == 4 * meta["quadruplet"].nunique() and meta["possible"].notna().all()
    truth = meta["possible"].astype(float).to_numpy()
    perfect = score_answer(_answer(tmp_path, meta, truth), tree, "dev", n_boot=20)
    assert _overall(perfect, "L_R") == 0.0 and _overall(perfect, "L_A") == 0.0
    assert set(perfect["model"]) == {"mine"}  # the answer's folder
    inverted = score_answer(_answer(tmp_path, meta, 1.0 - truth), tree, "dev", n_boot=20)
    assert _overall(inverted, "L_R") == 1.0 and _overall(inverted, "L_A") == 1.0


def test_equals_the_workflow_scoring_of_the_ingested_tree(tree, tmp_path):
    """The workflow's path: ingest_shard + merge_metadata, then score_table on the read answer."""
    meta = tree_metadata(tree, "dev")
    rng = np.random.default_rng(0)
    answer = _answer(tmp_path, meta, rng.uniform(size=len(meta)))
    ingest_shard(tree, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=1000)
    ingested = merge_metadata([tmp_path / "s.csv"], tmp_path / "dev.csv")
    want = score_table(read_answer(answer, ingested), ingested, model="mine", n_boot=50, seed=3)
    got = score_answer(answer, tree, "dev", n_boot=50, seed=3)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_dtype=False)


def test_cli_scores_and_writes_the_table(tree, tmp_path, capsys):
    meta = tree_metadata(tree, "dev")
    answer = _answer(tmp_path, meta, meta["possible"].astype(float).to_numpy())
    out = tmp_path / "scores.csv"
    assert main(["score-answer", answer, "--tree", str(tree), "--split", "dev", "--n-boot", "20",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "L_R" in printed and "L_A" in printed and str(tree / "dev") in printed
    assert _overall(pd.read_csv(out), "L_R") == 0.0


def test_test_split_and_bad_answers_are_refused_by_name(tree, tmp_path, capsys):
    meta = tree_metadata(tree, "test")
    answer = _answer(tmp_path, meta, np.full(len(meta), 0.5))
    assert main(["score-answer", answer, "--tree", str(tree), "--split", "test"]) == 2
    err = capsys.readouterr().err
    assert "has no labels" in err and "psybench validate-answer" in err
    with pytest.raises(ValueError, match=r"can only be scored by submitting the answer to the IntPhys server"):
        score_answer(answer, tree, "test")
    bad = tmp_path / "bad.txt"
    bad.write_text("O1/0001/1 0.5\n")
    assert main(["score-answer", str(bad), "--tree", str(tree), "--split", "dev"]) == 2
    assert "bad.txt" in capsys.readouterr().err
