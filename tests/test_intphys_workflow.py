"""rules/intphys.smk end to end through `python -m snakemake` in a subprocess (small config)."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from psybench.intphys.generate import expected_movie_ids, generate_intphys

pytestmark = pytest.mark.workflow


def _workdir(harness, tmp_path, intphys, **modules):
    """The whole workflow in ``tmp_path``, running the intphys track only (with user ``modules``)."""
    harness.copy(tmp_path, {"tracks": ["intphys"], "intphys": intphys}, modules=modules)


def _snakemake(harness, cwd, *args):
    # the workflow copy is on PYTHONPATH: user models named module:function in the config live there
    return harness.run(cwd, "--cores", "2", "intphys_all", *args, check=False, timeout=600)


def _config(**over):
    base = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())["intphys"]
    base.update(over)
    return base


def test_small_run_scores_models_and_external_answer(harness, tmp_path):
    ids = expected_movie_ids("dev", blocks=("O1",))
    (tmp_path / "ext.txt").write_text("".join(f"{m} 0.5\n" for m in ids))
    cfg = _config(
        # the 2018 baselines' layout: header masks dict, descriptive quadruplet folders, mask/mask_NNN.png
        generator={"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 4, "height": 48, "width": 48,
                   "n_frames": 12, "status_variant": "header_masks", "depth_encoding": "16bit",
                   "quadruplet_names": "descriptive", "mask_layout": "mask"},
        shard_size=100, n_boot=50,
        models=[{"name": "tracking", "algorithm": "tracking"}, {"name": "nextframe", "algorithm": "nextframe"}],
        external_answers={"ext": "ext.txt"},
    )
    _workdir(harness, tmp_path, cfg)
    r = _snakemake(harness, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    for m in ("tracking", "nextframe", "ext"):
        t = pd.read_csv(tmp_path / f"results/intphys/scores/{m}/scores.csv")
        assert list(t.columns) == ["model", "block", "visibility", "motion", "n_objects", "metric", "value",
                                   "ci_low", "ci_high", "n_quadruplets"]
        lines = (tmp_path / f"results/intphys/scores/{m}/answer.txt").read_text().splitlines()
        assert len(lines) == len(ids)
    t = pd.read_csv(tmp_path / "results/intphys/scores/ext/scores.csv")
    overall = t[(t.block == "all") & (t.visibility == "all") & (t.motion == "all") & (t.n_objects == "all")]
    assert dict(zip(overall.metric, overall.value)) == {"L_R": 0.5, "L_R_strict": 0.0, "L_A": 0.5}
    # conditions from the folder names: the 18 conditions of the block, one quadruplet each, no interval
    t = pd.read_csv(tmp_path / "results/intphys/scores/tracking/scores.csv")
    cond = t[(t[["visibility", "motion", "n_objects"]] != "all").all(axis=1) & (t.block == "O1")]
    assert len(cond.drop_duplicates(["visibility", "motion", "n_objects"])) == 18
    assert cond["ci_low"].isna().all() and (cond["n_quadruplets"] == 1).all()
    overall = t[(t[["block", "visibility", "motion", "n_objects"]] == "all").all(axis=1)]
    # the header masks dict names the objects: tracking sees the events (measured L_R 0.0, L_A 0.007; a silent
    # constant, as before the masks were named, scores 0.5 / 0.5)
    values = overall.set_index("metric")["value"]
    assert values["L_R"] < 0.1 and values["L_A"] < 0.1
    # nothing left to do; a change of the model code (hash in params) is seen
    r = _snakemake(harness, tmp_path, "-n")
    assert "Nothing to be done" in r.stdout + r.stderr
    # a broken external answer fails with the line named
    lines = (tmp_path / "ext.txt").read_text().splitlines()
    (tmp_path / "ext.txt").write_text("\n".join(lines + [lines[0]]) + "\n")
    r = _snakemake(harness, tmp_path)  # the changed answer file reruns its score job only
    assert r.returncode != 0
    log = (tmp_path / "logs/intphys/scores/ext.log").read_text()
    assert "line 73" in log and "duplicate movie" in log


def test_dry_run_plans_shards_of_a_real_tree(harness, tmp_path):
    generate_intphys(tmp_path / "data", "train", n_train=230, skeleton=True)
    generate_intphys(tmp_path / "data", "dev", skeleton=True)
    _workdir(harness, tmp_path, _config(data_root="data", generate=False, shard_size=50))
    r = _snakemake(harness, tmp_path, "-n", "--quiet", "rules")
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    # train: 230 movies -> 5 shards; dev: 216 -> 5 shards
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(intphys_\w+)\s+(\d+)$", out, re.M)}
    assert counts["intphys_ingest"] == 10
    assert counts["intphys_responses"] == 6  # one job per model (the default config's 6) for its 5 dev shards
    assert counts["intphys_train"] == 1 and counts["intphys_scores"] == 6 and "intphys_generate" not in counts
    assert counts["intphys_train_model"] == 1  # cnn_future's checkpoint


# A user model outside psybench that tries every way to the labels: attributes of the
# observation it is handed, and any table or path it could read them from.
USER_MODEL = """
import json
from pathlib import Path

import pandas as pd

LABELS = ("possible", "is_possible", "block", "visibility", "motion", "n_objects", "quadruplet", "metadata",
          "table", "path", "store")


def cheat(observation, *, fallback=0.5):
    found = {k: repr(getattr(observation, k)) for k in LABELS if hasattr(observation, k)}
    Path("seen.json").write_text(json.dumps({"fields": sorted(vars(observation)), "labels": found,
                                             "shape": list(observation.scene.shape)}))
    p = getattr(observation, "possible", None)
    if p is not None:  # scores L_R = 0 if the labels were in reach
        return pd.Series([float(v) for v in p], index=list(observation.movies))
    return pd.Series(fallback, index=list(observation.movies), dtype=float)
"""


def test_user_model_runs_and_gets_no_labels(harness, tmp_path):
    cfg = _config(
        generator={"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 0, "height": 32, "width": 32,
                   "n_frames": 8, "status_variant": "v1", "depth_encoding": "8bit"},
        shard_size=100, n_boot=0,
        models=[{"name": "mine", "callable": "physics_user:cheat", "params": {"fallback": 0.25}}],
        external_answers={},
    )
    _workdir(harness, tmp_path, cfg, **{"physics_user.py": USER_MODEL})
    r = _snakemake(harness, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["labels"] == {}
    assert seen["fields"] == ["depth", "depth_units", "masks", "masks_grayscale", "movies", "scene"]
    assert seen["shape"] == [72, 8, 32, 32, 3]
    t = pd.read_csv(tmp_path / "results/intphys/scores/mine/scores.csv")
    overall = t[(t.block == "all") & (t.visibility == "all") & (t.motion == "all") & (t.n_objects == "all")]
    assert dict(zip(overall.metric, overall.value)) == {"L_R": 0.5, "L_R_strict": 0.0, "L_A": 0.5}
    answer = (tmp_path / "results/intphys/scores/mine/answer.txt").read_text().splitlines()
    # the official scorer's ids, spelled from status.json's conditions (the folders are digits only)
    assert len(answer) == 72 and re.fullmatch(r"O1/0001_O1_test_(visible|occluded)_\w+_nobj\d/1 0\.25", answer[0])


def test_old_models_mapping_fails_before_any_job(harness, tmp_path):
    _workdir(harness, tmp_path, _config(models={"constant": {"kind": "constant", "params": {}}}))
    r = _snakemake(harness, tmp_path, "-n")
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "config key intphys.models" in out and "algorithm: BUILT_IN" in out, out[-3000:]
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("depth_encoding, quadruplet_names", [("16bit", "index"), ("8bit", "descriptive")])
def test_test_split_without_status_gives_validated_answers(harness, tmp_path, capsys, depth_encoding,
                                                            quadruplet_names):
    """The released test split (PNGs only, no status.json; bootphon/intphys Tools/make_archives.py keeps the
    metadata back): every model predicts, answer.txt is written and kept, scoring is skipped with a message,
    the run exits 0, and `psybench validate-answer` accepts the submission (and names a broken one's line).
    With V1.0's 8-bit depth (no max_depth without status.json) the depth stays in relative units, and with the
    starting kit's descriptive quadruplet folders the answers carry the ids the official scorer reads."""
    from psybench.cli import main
    from psybench.io.store import open_store

    small = {"blocks": ("O1",), "n_frames": 8, "height": 16, "width": 16}
    generate_intphys(tmp_path / "data", "train", n_train=4, **small)
    if depth_encoding == "8bit":  # V1.0 test movies: 8-bit depth, status.json withheld
        generate_intphys(tmp_path / "data", "test", quadruplet_names=quadruplet_names, **small)
        for status in (tmp_path / "data" / "test").glob("O1/*/*/status.json"):
            status.unlink()
    else:
        generate_intphys(tmp_path / "data", "test", status_variant="absent", depth_encoding="16bit", **small)
    models = [{"name": n, "algorithm": n} for n in ("constant", "random", "flow", "nextframe", "tracking")]
    _workdir(harness, tmp_path, _config(data_root="data", generate=False, eval_split="test", shard_size=100,
                                        n_boot=10, models=models, external_answers={}))
    r = _snakemake(harness, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    units = open_store(tmp_path / "results/intphys/stores/test/shard_0000.zarr").attrs["depth_units"]
    assert units == ("mm" if depth_encoding == "16bit" else "relative (8-bit, unscaled)")
    folders = sorted(p.name for p in (tmp_path / "data" / "test" / "O1").iterdir())
    for m in models:
        answer = tmp_path / f"results/intphys/scores/{m['name']}/answer.txt"
        lines = answer.read_text().splitlines()
        assert len(lines) == 72
        # the quadruplet folders as distributed (descriptive), else the short ids (no conditions known)
        assert sorted({line.split("/")[1] for line in lines}) == folders
        assert all(0 <= float(line.split()[1]) <= 1 for line in lines)
        assert main(["validate-answer", str(answer), "--data-root", str(tmp_path / "data")]) == 0
        assert "72 movies, 18 complete quadruplets" in capsys.readouterr().out
        assert pd.read_csv(tmp_path / f"results/intphys/scores/{m['name']}/scores.csv").empty
        assert "scoring skipped" in (tmp_path / f"logs/intphys/scores/{m['name']}.log").read_text()
    broken = tmp_path / "broken.txt"
    broken.write_text("".join((tmp_path / "results/intphys/scores/random/answer.txt").read_text().splitlines(True)[1:]))
    assert main(["validate-answer", str(broken), "--data-root", str(tmp_path / "data")]) == 2
    assert f"line 1 ('O1/{folders[0]}/2" in capsys.readouterr().err


# A user's frame encoder for the representation-prediction surprise (random init; the test writes its weights)
ENCODER_MODULE = """
import torch


def build():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.Tanh(), torch.nn.Flatten(2))
"""


def test_user_encoder_surprise_runs_end_to_end_and_reruns_on_new_weights(harness, tmp_path):
    torch = pytest.importorskip("torch")
    cfg = _config(
        generator={"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 0, "height": 32, "width": 32,
                   "n_frames": 12, "status_variant": "v1", "depth_encoding": "8bit"},
        shard_size=40, n_boot=0, external_answers={},
        models=[{"name": "encoder_surprise", "algorithm": "representation_surprise", "weights": "encoder.pt",
                 "batch_size": 5, "params": {"encoder": "physics_encoder:build", "window": 8, "context": 4}},
                {"name": "constant", "algorithm": "constant"}],
    )
    harness.copy(tmp_path, {"tracks": ["intphys"], "intphys": cfg}, modules={"physics_encoder.py": ENCODER_MODULE})
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.Tanh(), torch.nn.Flatten(2))
    torch.save(net.state_dict(), tmp_path / "encoder.pt")
    r = harness.run(tmp_path, "--cores", "2", "all", check=False, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    t = pd.read_csv(tmp_path / "results/intphys/scores/encoder_surprise/scores.csv")
    overall = t[(t[["block", "visibility", "motion", "n_objects"]] == "all").all(axis=1)].set_index("metric")
    assert {"L_R", "L_A"} <= set(overall.index) and overall["value"].between(0, 1).all()
    responses = sorted((tmp_path / "results/intphys/responses/encoder_surprise").glob("*.csv"))
    p = pd.concat(pd.read_csv(f) for f in responses)
    assert len(p) == 72 and p["p"].between(0, 1).all() and p["p"].nunique() > 1  # exp(-surprise), per movie
    # a new checkpoint at the same path reruns that model's jobs only
    torch.manual_seed(2)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.Tanh(), torch.nn.Flatten(2))
    torch.save(net.state_dict(), tmp_path / "encoder.pt")
    r = harness.run(tmp_path, "--cores", "2", "all", "-n", "--quiet", "rules", check=False, timeout=600)
    out = r.stdout + r.stderr
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(intphys_\w+)\s+(\d+)$", out, re.M)}
    assert counts.get("intphys_responses") == 1 and counts.get("intphys_scores") == 1, out[-3000:]
    # a missing encoder module is named before any job
    cfg["models"][0]["params"]["encoder"] = "no_such_module:build"
    harness.write_config(tmp_path, {"tracks": ["intphys"], "intphys": cfg})
    r = harness.run(tmp_path, "--cores", "2", "all", "-n", check=False, timeout=600)
    assert r.returncode != 0 and "intphys.models[0].params.encoder" in r.stdout + r.stderr


# A user's stream model trained on the train split: fit(movies) records what it saw; its
# surprise is the distance of a movie's mean luminance from the train movies' mean.
TRAINED_MODULE = """
import json
from pathlib import Path

import numpy as np


class MeanLuminance:
    def __init__(self):
        self.mean = 0.0

    def fit(self, movies):
        seen = [(m.movie, sorted(a for a in dir(m) if not a.startswith("_")),
                 sorted(a for a in dir(next(iter(m))) if not a.startswith("_"))) for m in movies]
        frames = [f.scene.astype(np.float64) for m in movies for f in m]
        self.mean = float(np.mean(np.concatenate(frames)))
        Path("fit.json").write_text(json.dumps({"movies": [s[0] for s in seen], "stream": seen[0][1],
                                                "batch": seen[0][2], "mean": self.mean}))

    def __call__(self, movie):
        frames = np.concatenate([f.scene.astype(np.float64) for f in movie])
        return abs(float(frames.mean()) - self.mean) / 255


def build(*, weights, device):
    return MeanLuminance()
"""


def test_a_trained_stream_model_fits_on_the_train_split_only(harness, tmp_path):
    import numpy as np

    from psybench.intphys.models import observe

    cfg = _config(
        generator={"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 6, "height": 32, "width": 32,
                   "n_frames": 8, "status_variant": "v1", "depth_encoding": "8bit"},
        shard_size=40, n_boot=0, external_answers={},
        models=[{"name": "trained", "callable": "physics_trained:build", "kind": "stream", "factory": True,
                 "train": True},
                {"name": "constant", "algorithm": "constant"}],
    )
    _workdir(harness, tmp_path, cfg, **{"physics_trained.py": TRAINED_MODULE})
    r = _snakemake(harness, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    fit = json.loads((tmp_path / "fit.json").read_text())
    stores = tmp_path / "results/intphys/stores"
    train_tables = sorted((stores / "train").glob("shard_*.csv"))
    assert len(train_tables) == 1  # 6 train movies in shards of 40
    train_ids = [m for t in train_tables for m in pd.read_csv(t, dtype={"movie": str})["movie"]]
    assert fit["movies"] == train_ids and len(train_ids) == 6
    # nothing about the condition or the label is reachable from a movie or a batch
    for names in (fit["stream"], fit["batch"]):
        assert not {"possible", "label", "block", "condition", "visibility", "path", "store"} & set(names), names
    # the oracle: the train movies' mean luminance, recomputed from the ingest stores
    train = [np.asarray(observe(s, t).scene, dtype=np.float64) for s, t in
             zip(sorted((stores / "train").glob("shard_*.zarr")), train_tables)]
    mean = float(np.mean(np.concatenate([s.reshape(-1) for s in train])))
    np.testing.assert_allclose(fit["mean"], mean, rtol=1e-9)
    for table in sorted((stores / "dev").glob("shard_*.csv")):
        scene = np.asarray(observe(table.with_suffix(".zarr"), table).scene, dtype=np.float64)
        p = pd.read_csv(tmp_path / "results/intphys/responses/trained" / table.name)
        expected = np.exp(-np.abs(scene.reshape(len(scene), -1).mean(1) - mean) / 255)
        np.testing.assert_allclose(p["p"], expected, rtol=1e-6)
    # new train stores replan the trained model's responses, not the other model's
    for store in (stores / "train").glob("shard_*.zarr"):
        for path in [store, *store.rglob("*")]:
            path.touch()
    r = harness.run(tmp_path, "--cores", "2", "intphys_all", "-n", "--quiet", "rules", check=False, timeout=600)
    out = r.stdout + r.stderr
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(intphys_\w+)\s+(\d+)$", out, re.M)}
    assert counts.get("intphys_responses") == 1 and counts.get("intphys_scores") == 1, out[-3000:]
