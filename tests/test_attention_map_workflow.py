"""Map-output attention models in the workflow: scored untuned on each pair's test movie.

The built-in centre prior and a tiny torch map model of the test's own (a factory named
by ``callable:`` with ``factory: true``, weights from a file the test writes) sit beside
the classic ``raw`` model on the tiny attention config.
"""

from __future__ import annotations

import sys

import pandas as pd
import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.workflow]

# A saliency map per frame: a 1 x 1 convolution of the RGB channels, weights from the file.
MAP_MODELS = '''
"""A tiny torch map model for the workflow tests (imported as usermodels.maps)."""
import numpy as np
import torch

from psybench.deep import load_weights


class TinyMap(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 1, 1, bias=False)

    def forward(self, frames):
        x = torch.as_tensor(np.array(frames, np.float32) / 255).permute(0, 3, 1, 2)
        return self.conv(x)[:, 0].numpy()


def build(*, weights, device):
    net = TinyMap()
    if weights is not None:
        load_weights(net, weights, model="tinymap")
    return net.to(device).eval()
'''
USER_MAP = {"name": "tinymap", "callable": "usermodels.maps:build", "kind": "map", "factory": True,
            "weights": "weights/tinymap.pt", "batch_size": 4}
CENTRE = {"name": "centre", "algorithm": "centre_bias", "kind": "map", "params": {"output": "log_density"}}
METRICS = "results/attention/metrics.csv"
SCORES = "results/aggregate/scores_attention.csv"


def _map_copy(harness, dest):
    cfg = harness.tiny_attention_config()
    cfg["attention"]["models"] += [dict(CENTRE), dict(USER_MAP)]
    work = harness.copy(dest, cfg, modules={"usermodels/maps.py": MAP_MODELS})
    (work / "weights").mkdir()
    torch.save({"conv.weight": torch.tensor([1.0, 0.5, 0.25]).reshape(1, 3, 1, 1)}, work / "weights" / "tinymap.pt")
    return work


def test_map_models_reach_metrics_and_score_rows(harness, completed_attention_workflow, tmp_path, monkeypatch):
    """Both map models get untuned rows on every pair, equal to map_model_scores on the run's own
    stores, with the same ceiling as the tuned model's rows; the tuned rows and Table 1 are those of
    the run without map models; a new weights file reruns only the user map model's jobs."""
    from psybench.attention.map_models import map_model_scores

    work = _map_copy(harness, tmp_path / "wf")
    harness.run(work, "--cores", "2", "attention_all", SCORES)
    monkeypatch.syspath_prepend(str(work))  # the test's own model, for the direct calls below
    for mod in [m for m in sys.modules if m == "usermodels" or m.startswith("usermodels.")]:
        monkeypatch.delitem(sys.modules, mod)
    plain = completed_attention_workflow
    # the tuned models' outputs do not change when map models join
    assert (work / "results/attention/table1.csv").read_bytes() == (plain / "results/attention/table1.csv").read_bytes()
    old = (plain / METRICS).read_text()
    new = (work / METRICS).read_text()
    assert new.startswith(old), "the tuned rows of metrics.csv changed"

    metrics = pd.read_csv(work / METRICS)
    maps = metrics[metrics["tuning"] == "untuned map"]
    assert set(maps["model"]) == {"centre untuned map", "tinymap untuned map"}
    pairs = {("A", "A"), ("A", "B")}
    for name in ("centre", "tinymap"):
        rows = maps[maps["features"] == name]
        assert set(zip(rows["train"], rows["test"])) == pairs
        assert "rank_percentile" in set(rows["metric"])
        entry = CENTRE if name == "centre" else {**USER_MAP, "weights": str(work / USER_MAP["weights"])}
        for tr, te in pairs:
            got = rows[(rows["train"] == tr) & (rows["test"] == te)].set_index("metric")
            want = map_model_scores(entry, work / f"results/attention/stimuli/{te}.zarr",
                                    work / f"results/attention/gaze/{te}.csv", same_movie=tr == te,
                                    lags_ms=[100, 300], n_splits=5)
            for metric, value in want["scores"].items():
                assert got.loc[metric, "value"] == pytest.approx(value, rel=1e-12, nan_ok=True), (name, tr, te, metric)
            if tr == te:  # a movie tested on itself: each model's split has its own gap (its maps' autocorrelation)
                continue
            tuned = metrics[(metrics["model"] == "raw L=1 tuned") & (metrics["train"] == tr) & (metrics["test"] == te)]
            for metric, ceiling in zip(tuned["metric"], tuned["ceiling"]):
                assert got.loc[metric, "ceiling"] == pytest.approx(ceiling, rel=1e-12), (name, tr, te, metric)
    # the two models are told apart: the centre prior and the colour map differ
    c = maps[(maps["features"] == "centre") & (maps["metric"] == "rank_percentile")]["value"].to_numpy()
    u = maps[(maps["features"] == "tinymap") & (maps["metric"] == "rank_percentile")]["value"].to_numpy()
    assert not (c == u).all()

    scores = pd.read_csv(work / SCORES)
    assert {"centre untuned map", "tinymap untuned map"} <= set(scores["model"])
    sel = scores[(scores["model"] == "tinymap untuned map") & (scores["metric"] == "rank_percentile")]
    assert set(sel["experiment"]) == {"A_on_A", "A_on_B"}
    assert (sel["direction"] == "higher").all()

    torch.save({"conv.weight": torch.tensor([0.0, 0.0, 1.0]).reshape(1, 3, 1, 1)}, work / "weights" / "tinymap.pt")
    proc = harness.run(work, "-n", "attention_all", SCORES)
    planned = harness.planned_outputs(proc)
    map_jobs = {p for p in planned if p.startswith("results/attention/maps/")}
    assert map_jobs and all(p.startswith("results/attention/maps/tinymap/") for p in map_jobs), planned
    assert not any(p.startswith(("results/attention/responses/", "results/attention/evaluate/")) for p in planned)
    assert harness.job_counts(proc).get("attention_map_scores") == 2
