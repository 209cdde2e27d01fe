"""Deep models on every track in one run: the acceptance run of the deep-model interface.

One config on the tiny sizes of ``tests/conftest.py`` lists torchvision's RAFT (small,
Teed & Deng 2020) for motion, a ResNet-18 feature family (He et al. 2016) tuned by the
paper's Fisher filter and two map-output models (the centre prior of Judd et al. 2009,
sec. 4, named without ``kind``, and a user's torch map network) for attention, and a
user's video encoder scored by the representation-prediction surprise (Garrido et al.
2025, sec. 2-3) for IntPhys. Every network's weights come from local files the test
writes (random initialisation). ``snakemake --cores 2 all`` puts each model on the
leaderboards; then, one at a time, a new weights file at the same path makes a dry run
plan that model's jobs and what reads them, and no job of any other model.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import TINY_ATTENTION_CONFIG, TINY_CONFIG
from test_attention_map_workflow import MAP_MODELS

torch = pytest.importorskip("torch", reason="the deep extra (pip install 'psybench[deep]') is not installed")
torchvision = pytest.importorskip("torchvision")

pytestmark = [pytest.mark.workflow]

# A saliency map per frame: a 1 x 1 convolution of the RGB channels (a factory; strict weights).
MAP_MODULE = MAP_MODELS
# A frame encoder: (b, 3, H, W) -> (b, 8, N) tokens of 4 x 4 strided patches.
ENCODER_MODULE = '''
import torch


def build():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.Tanh(), torch.nn.Flatten(2))
'''

RAFT = {"name": "raft", "algorithm": "raft_small", "weights": "weights/raft_small.pt", "batch_size": 4,
        "params": {"num_flow_updates": 2}}
RESNET = {"name": "resnet", "algorithm": "cnn", "weights": "weights/resnet18.pt", "batch_size": 16,
          "params": {"arch": "resnet18", "layers": ["layer1"], "resolution": [80, 60]}, "L": 1}
CENTRE = {"name": "centre", "algorithm": "centre_bias"}  # the registry knows its kind: map
TINYMAP = {"name": "tinymap", "callable": "usermodels.maps:build", "kind": "map", "factory": True,
           "weights": "weights/tinymap.pt", "batch_size": 8}
ENCODER = {"name": "encoder", "algorithm": "representation_surprise", "weights": "weights/encoder.pt",
           "batch_size": 6, "params": {"encoder": "usermodels.encoder:build", "window": 8, "context": 4}}


def _weights(which: str, seed: int) -> dict:
    """A state dict of each network, random at ``seed``."""
    torch.manual_seed(seed)
    if which == "raft":
        from torchvision.models.optical_flow import raft_small

        return raft_small(weights=None, progress=False).state_dict()
    if which == "resnet":
        return torchvision.models.resnet18(weights=None).state_dict()
    if which == "tinymap":
        return {"conv.weight": torch.rand(1, 3, 1, 1)}
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.Tanh(), torch.nn.Flatten(2))
    return net.state_dict()


FILES = {"raft": "raft_small.pt", "resnet": "resnet18.pt", "tinymap": "tinymap.pt", "encoder": "encoder.pt"}


def _config() -> dict:
    cfg = copy.deepcopy(TINY_CONFIG)
    cfg["tracks"] = ["motion", "attention", "intphys"]
    cfg["motion"]["models"] = [*cfg["motion"]["models"], RAFT]
    cfg["attention"] = copy.deepcopy(TINY_ATTENTION_CONFIG["attention"])
    cfg["attention"]["models"] = [*cfg["attention"]["models"], RESNET, CENTRE, TINYMAP]
    intphys = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())["intphys"]
    intphys.update(
        generator={"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 0, "height": 32, "width": 32,
                   "n_frames": 12, "status_variant": "v1", "depth_encoding": "8bit"},
        shard_size=40, n_boot=0, external_answers={}, models=[ENCODER],
    )
    cfg["intphys"] = intphys
    return cfg


def _planned_rules(harness, proc) -> dict[str, int]:
    return {r: n for r, n in harness.job_counts(proc).items()
            if not r.startswith(("aggregate_", "report_")) and r != "all"}


def test_deep_models_of_every_track_reach_the_leaderboards(harness, tmp_path):
    import psybench

    cfg = _config()
    work = harness.copy(tmp_path / "wf", cfg, modules={"usermodels/maps.py": MAP_MODULE,
                                                       "usermodels/encoder.py": ENCODER_MODULE})
    (work / "weights").mkdir()
    for which, name in FILES.items():
        torch.save(_weights(which, seed=0), work / "weights" / name)
    harness.run(work, "--cores", "2", "all", timeout=1500)

    # every model on its track's leaderboard, and on the overall one
    agg = work / "results/aggregate"
    want = {"motion": {"hs", "raft"}, "attention": {"raw", "resnet", "centre untuned map", "tinymap untuned map"},
            "intphys": {"encoder"}}
    overall = set(pd.read_csv(agg / "leaderboard_overall.csv")["entry"])
    for track, entries in want.items():
        board = set(pd.read_csv(agg / f"leaderboard_{track}.csv")["entry"])
        assert entries <= board, (track, board)
        assert entries <= overall, (track, overall)
    # the map rows carry their algorithm; the tuned ResNet rows are in Table 1
    long = pd.read_csv(agg / "scores_long.csv", keep_default_na=False)
    algorithms = dict(zip(long["model"], long["algorithm"]))
    assert algorithms["centre untuned map"] == "centre_bias" and algorithms["tinymap untuned map"] == "tinymap"
    assert algorithms["raft"] == "raft_small" and algorithms["resnet"] == "cnn"
    table1 = pd.read_csv(work / "results/attention/table1.csv")
    assert set(table1["features"]) == {"raw", "resnet"} and table1["median"].notna().all()
    # psybench.score of the centre prior gives the run's rows of it
    rows = psybench.score(CENTRE, "attention", config=cfg, stimuli=work / "results/attention/stimuli",
                          progress=False)
    run = pd.read_csv(agg / "scores_attention.csv")
    run = run[run["model"] == "centre untuned map"].sort_values(["experiment", "metric"])
    rows = rows.sort_values(["experiment", "metric"])
    assert len(rows) == len(run) > 0
    assert list(rows["metric"]) == list(run["metric"]) and list(rows["experiment"]) == list(run["experiment"])
    np.testing.assert_allclose(rows["value"], run["value"], rtol=1e-12)

    # a new weights file at the same path plans that model's jobs only (and their downstream)
    own = {"raft": {"motion_responses": 1}, "resnet": {"attention_responses": 1},
           "tinymap": {"attention_map_scores": 2}, "encoder": {"intphys_responses": 1}}
    for which, name in FILES.items():
        path = work / "weights" / name
        before = path.read_bytes()
        torch.save(_weights(which, seed=1), path)
        proc = harness.run(work, "-n", "--cores", "2", "all", timeout=600)
        planned = _planned_rules(harness, proc)
        for rule, n in own[which].items():
            assert planned.get(rule) == n, (which, planned)
        outputs = harness.planned_outputs(proc)
        responses = {p for p in outputs if re.match(r"results/(motion|attention|intphys)/(responses|maps)/", p)}
        assert responses, (which, outputs)
        if which == "raft":
            assert all(p.startswith("results/motion/responses/raft/") for p in responses), responses
            assert not any(r.startswith(("attention_", "intphys_")) for r in planned), planned
        elif which == "resnet":
            assert {p.split("/")[3] for p in responses} == {p.split("/")[3] for p in responses
                                                            if p.startswith("results/attention/responses/cnn-")}
            assert not any(r.startswith(("motion_", "intphys_")) or r == "attention_map_scores" for r in planned)
        elif which == "tinymap":
            assert all(p.startswith("results/attention/maps/tinymap/") for p in responses), responses
            assert not any(r.startswith(("motion_", "intphys_")) for r in planned), planned
            assert "attention_responses" not in planned and "attention_evaluate_part" not in planned
        else:
            assert all(p.startswith("results/intphys/responses/encoder/") for p in responses), responses
            assert not any(r.startswith(("motion_", "attention_")) for r in planned), planned
        path.write_bytes(before)
    proc = harness.run(work, "-n", "--cores", "2", "all", timeout=600)  # the old weights again: up to date
    assert not _planned_rules(harness, proc), harness.output(proc)[-3000:]
