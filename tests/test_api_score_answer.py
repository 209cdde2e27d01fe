"""``psybench score-answer``: an IntPhys submission scored against a labelled tree."""

from __future__ import annotations

from pathlib import Path

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


# The official IntPhys scorer (the challenge's score.py, author M. Bernard), re-implemented from its logic as
# an independent oracle: the coordinator should check these functions against the real score.py. Its
# behaviour reproduced here, deliberately including its quirks:
# * load_answer: each line splits into exactly two fields; the score is a float in [0, 1]; the id is split at
#   '/', the last part is the movie ('1'..'4'), everything before it the scene; every scene has the 4 movies;
# * score: the submitted and reference scene sets must be equal (assert); for each block in O1, O2, O3 the
#   scenes whose id CONTAINS the block's name; within it, visible / occluded scenes are those whose id
#   contains 'visible' / 'occluded', and 'all' takes every scene of the block;
# * relative error: per scene, the summed scores of the reference's possible movies (label 1) against the
#   others', counted an error when strictly '<'; divided by the number of submitted scenes, hence a
#   ZeroDivisionError when no id of a block holds the word;
# * absolute error: 1 - sklearn's roc_auc_score of the labels against the scores, scenes and movies sorted.
def _official_load(path):
    answer: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        fields = line.split()
        assert len(fields) == 2
        value = float(fields[1])
        assert 0 <= value <= 1
        *scene, movie = fields[0].split("/")
        assert movie in ("1", "2", "3", "4")
        answer.setdefault("/".join(scene), {})[movie] = value
    assert all(sorted(v) == ["1", "2", "3", "4"] for v in answer.values())
    return answer


def _official_relative(sub, ref):
    errors = 0
    for scene, labels in ref.items():
        pos = sum(sub[scene][k] for k in "1234" if labels[k] == 1)
        imp = sum(sub[scene][k] for k in "1234" if labels[k] != 1)
        errors += pos < imp
    return errors / len(sub)


def _official_absolute(sub, ref):
    from sklearn.metrics import roc_auc_score

    flat = [(y, sub[s][k]) for s, v in sorted(ref.items()) for k, y in sorted(v.items())]
    return 1.0 - roc_auc_score([y for y, _ in flat], [p for _, p in flat])


def _official_score(sub, ref):
    assert sorted(sub) == sorted(ref)
    out = {}
    for block in ("O1", "O2", "O3"):
        out[block] = {}
        for group in ("visible", "occluded", "all"):
            keep = [k for k in sub if block in k and (group == "all" or group in k)]
            s, r = {k: sub[k] for k in keep}, {k: ref[k] for k in keep}
            out[block][group] = {"relative": _official_relative(s, r), "absolute": _official_absolute(s, r)}
    return out


@pytest.fixture(scope="module")
def full_tree(tmp_path_factory):
    """A labelled dev tree of the three blocks (the official scorer scores each), in both folder spellings."""
    root = tmp_path_factory.mktemp("intphys_full")
    small = {"n_frames": 8, "height": 16, "width": 16}
    generate_intphys(root / "descriptive", "dev", quadruplet_names="descriptive", **small)
    generate_intphys(root / "index", "dev", **small)
    return root


def _reference_from_tree(tree, path, *, spell):
    """The organisers' ref/answer.txt: 1 for a possible movie, 0 for an impossible one, from status.json."""
    import json

    lines = []
    for status in sorted((tree / "dev").glob("O*/*/*/status.json")):
        st = json.loads(status.read_text())
        lines.append(f"{spell(status.parent, st)} {int(bool(st['possible']))}\n")
    path.write_text("".join(lines))
    return path


def _as_distributed(movie_dir, st):  # the quadruplet folder as on disk: <block>/<folder>/<run>
    return "/".join(movie_dir.parts[-3:])


def _starting_kit_spelling(movie_dir, st):  # digits-only folder: <index>_<block>_test_<vis>_<motion>_nobj<n>
    block, index, run = movie_dir.parts[-3:]
    return f"{block}/{index}_{block}_test_{st['visibility']}_{st['motion']}_nobj{st['n_objects']}/{run}"


@pytest.mark.parametrize("layout, spell", [("descriptive", _as_distributed), ("index", _starting_kit_spelling)])
def test_official_scorer_reads_the_answer_and_agrees(full_tree, tmp_path, layout, spell):
    """psybench's answer.txt runs through the official scoring logic (no ZeroDivisionError, the scene ids of
    the reference), and psybench's own L_R_strict / L_A per block x visibility and per block equal it.
    Fails on the former writer, whose short ids O1/0001/1 the official scorer cannot split."""
    tree = full_tree / layout
    meta = tree_metadata(tree, "dev")
    assert meta["visibility"].notna().all() and meta["block"].nunique() == 3
    rng = np.random.default_rng(1)
    values = rng.integers(0, 5, size=len(meta)) / 4.0  # ties between sums too: the strict '<' matters
    answer = tmp_path / "mine" / "answer.txt"
    write_answer(pd.Series(values, index=meta["movie"].astype(str).to_numpy()), answer, metadata=meta)
    reference = _official_load(_reference_from_tree(tree, tmp_path / "ref.txt", spell=spell))
    official = _official_score(_official_load(answer), reference)

    ours = score_answer(answer, tree, "dev", n_boot=0)
    for block in ("O1", "O2", "O3"):
        for group in ("visible", "occluded", "all"):
            for metric, name in (("L_R_strict", "relative"), ("L_A", "absolute")):
                sel = ((ours["block"] == block) & (ours["visibility"] == group) & (ours["motion"] == "all")
                       & (ours["n_objects"] == "all") & (ours["metric"] == metric))
                (value,) = ours.loc[sel, "value"]
                assert value == pytest.approx(official[block][group][name], abs=1e-12), (block, group, metric)
    assert 0 < official["O1"]["visible"]["relative"] < 1  # a case that can tell right from wrong

    # the former short ids: the official scorer stops (ZeroDivisionError when the reference is short too)
    short = tmp_path / "short.txt"
    write_answer(pd.Series(values, index=meta["movie"].astype(str).to_numpy()), short)
    with pytest.raises(AssertionError):
        _official_score(_official_load(short), reference)
    with pytest.raises(ZeroDivisionError):
        _official_score(_official_load(short), _official_load(short))
    # psybench still reads a short-id file, and scores it identically
    pd.testing.assert_frame_equal(score_answer(short, tree, "dev", model="mine", n_boot=0), ours)
