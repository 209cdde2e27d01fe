"""docs/real_tasks.md, tried as written: its model functions and config blocks run through the library.

The page's code blocks are the user's modules, its YAML blocks the user's config
files: each model is resolved from its config entry and run by the function the
workflow's rule calls (attention features, IntPhys predictions), each config is laid
over config/config.yaml and checked against the schema, and the gaze column mapping
reads a recording written in that layout.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from psybench.api import score_config
from psybench.attention.gaze.tables import load_table
from psybench.attention.responses import write_feature_store
from psybench.attention.stimuli import write_popout_store
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard
from psybench.intphys.responses import predict_shard
from psybench.io.store import open_store
from psybench.registry import resolve_model

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs/real_tasks.md").read_text()


def _section(title: str) -> str:
    start = PAGE.index(title)
    end = PAGE.find("\n##", start + len(title))
    return PAGE[start:end if end > 0 else None]


def _block(text: str, language: str, index: int = 0) -> str:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)[index]


@pytest.fixture
def user_package(tmp_path, monkeypatch):
    """The page's modules as the package ``mypackage``, importable as the page says."""
    pkg = tmp_path / "mypackage"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for title in ("### Attention: a saliency model", "### IntPhys: a plausibility model"):
        code = _block(_section(title), "python")
        name = re.match(r"# mypackage/(\w+)\.py", code).group(1)
        (pkg / f"{name}.py").write_text(textwrap.dedent(code))
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in [m for m in list(sys.modules) if m == "mypackage" or m.startswith("mypackage.")]:
        monkeypatch.delitem(sys.modules, mod)
    return tmp_path


def _user_entries(title: str, track: str) -> list[dict]:
    cfg = yaml.safe_load(_block(_section(title), "yaml"))
    score_config(None, cfg)  # laid over config/config.yaml, it passes the schema
    return cfg[track]["models"]


def test_attention_recipe_runs_through_the_feature_stage(user_package, tmp_path):
    entries = _user_entries("### Attention: a saliency model", "attention")
    spec = resolve_model(next(e for e in entries if "callable" in e), track="attention")
    assert spec.params == {"sigma": 1.5}
    stim = write_popout_store(tmp_path / "A.zarr", n_frames=5, n_distractors=4)
    store = open_store(write_feature_store(stim, tmp_path / "f.zarr", model=spec.algorithm.function, **spec.params))
    maps = store["maps"].compute()
    assert maps.shape == (5, 30, 40, 2) and np.isfinite(maps).all()
    assert not maps[0, ..., 1].any() and maps[1:, ..., 1].any()  # change channel: nothing before frame 1


def test_intphys_recipe_runs_through_the_prediction_stage(user_package, tmp_path):
    entries = _user_entries("### IntPhys: a plausibility model", "intphys")
    entry = next(e for e in entries if "callable" in e)
    generate_intphys(tmp_path / "tree", "dev", blocks=("O1",), n_frames=8, height=16, width=16)
    ingest_shard(tmp_path / "tree", "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=1000)
    out = predict_shard(entry, tmp_path / "s.zarr", tmp_path / "s.csv", tmp_path / "p.csv")
    meta = pd.read_csv(tmp_path / "s.csv")
    assert sorted(out["movie"]) == sorted(meta["movie"]) and out["p"].between(0, 1).all()
    assert out["p"].nunique() > 1  # the depth changes differ between movies


def test_intphys_deep_recipe_streams_the_encoder_surprise(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    section = _section("### IntPhys: your own deep model")
    (tmp_path / "mypackage").mkdir()
    (tmp_path / "mypackage/__init__.py").write_text("")
    (tmp_path / "mypackage/encoder.py").write_text(textwrap.dedent(_block(section, "python")))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for mod in [m for m in list(sys.modules) if m == "mypackage" or m.startswith("mypackage.")]:
        monkeypatch.delitem(sys.modules, mod)
    from mypackage.encoder import build
    torch.save(build().state_dict(), "encoder.pt")  # as the page says
    cfg = yaml.safe_load(_block(section, "yaml"))
    score_config(None, cfg)  # laid over config/config.yaml, it passes the schema
    entry = cfg["intphys"]["models"][0]
    generate_intphys(tmp_path / "tree", "dev", blocks=("O1",), n_frames=20, height=32, width=32)
    ingest_shard(tmp_path / "tree", "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=1000)
    out = predict_shard(entry, tmp_path / "s.zarr", tmp_path / "s.csv", tmp_path / "p.csv")
    assert len(out) == 72 and out["p"].between(0, 1).all() and out["p"].nunique() > 1


def test_real_intphys_tree_config_passes_the_schema():
    cfg = score_config(None, yaml.safe_load(_block(_section("## A real IntPhys tree"), "yaml")))
    assert cfg["intphys"]["generate"] is False and cfg["intphys"]["eval_split"] == "dev"


def test_movie_and_gaze_config_reads_a_recording_in_that_layout(tmp_path):
    cfg = yaml.safe_load(_block(_section("## Your own movie and gaze recordings"), "yaml", 1))  # 0: the SMI snippet
    score_config(None, cfg)
    clip = cfg["attention"]["movies"]["clip"]
    # a two-eye recording at 500 Hz, timestamps in s, the second sample invalid (state 0)
    rec = tmp_path / "s01.tsv"
    rec.write_text("timestamp\tleft_x\tright_x\tleft_y\tright_y\tstate\n"
                   "0.000\t950\t970\t530\t550\t1\n0.002\t0\t0\t0\t0\t0\n0.004\t960\t960\t540\t540\t1\n")
    got = load_table(rec, columns=clip["gaze_columns"], screen=clip["screen"], movie="clip")
    np.testing.assert_allclose(got["t_ms"], [0.0, 2.0, 4.0])
    # screen centre (960, 540) of 1920 x 1080 is the movie centre (640, 360) of 1280 x 720 (contain: x 2/3)
    np.testing.assert_allclose(got.loc[got["valid"].astype(bool), ["x", "y"]].to_numpy()[-1], [640.0, 360.0])
    assert got["valid"].astype(bool).tolist() == [True, False, True]


def test_slurm_section_gives_the_one_command():
    command = _block(_section("## SLURM"), "bash").strip()
    assert command == "snakemake all --profile profiles/slurm --workflow-profile none"


def test_attention_from_python_runs_as_written(user_package):
    """The page's psybench.score call on a small in-memory movie: its rows, people above chance."""
    from test_api_attention import dot_movie  # tests/ is on sys.path (pytest rootdir import)

    frames, samples = dot_movie(n_frames=100, fps=25.0)  # the page's frame rate; 4 s: room for the split's gap
    namespace = {"frames": frames, "samples": samples}
    exec(_block(_section("### Attention: a saliency model"), "python", 1), namespace)
    table1 = namespace["table1"].set_index(["params_hash", "metric"])["value"]
    assert len(table1) == 2 * 7  # two L, seven groups (with the chance controls n/iid and n/shift)
    people, chance = (table1.xs(f"median_rp_{g}", level="metric") for g in ("n_ma", "n_iid"))
    assert (people > 80).all() and ((chance - 50).abs() < 10).all()


def test_motion_deep_model_recipe_runs_through_the_response_stage(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch", reason="the deep extra (pip install 'psybench[deep]') is not installed")
    from torchvision.models.optical_flow import raft_small

    from psybench.io.store import ArraySpec, write_store
    from psybench.motion.display import Display
    from psybench.motion.responses import run_motion_model

    title = "### Motion: your own deep model"
    code = _block(_section(title), "python")
    (tmp_path / "mypackage").mkdir()
    (tmp_path / "mypackage" / "__init__.py").write_text("")
    (tmp_path / "mypackage" / "deepflow.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in [m for m in list(sys.modules) if m == "mypackage" or m.startswith("mypackage.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.chdir(tmp_path)  # the entries' weights are relative paths
    from mypackage.deepflow import TinyFlow

    (tmp_path / "weights").mkdir()
    torch.manual_seed(0)
    tiny = TinyFlow(16).eval()
    torch.save(tiny.state_dict(), tmp_path / "weights" / "tiny.pt")
    torch.save(raft_small(weights=None, progress=False).state_dict(), tmp_path / "weights" / "raft_small.pt")
    entries = _user_entries(title, "motion")
    frames = np.random.default_rng(0).random((4, 24, 32), dtype=np.float32)
    attrs = {"stage": "stimuli", "display": Display(width_px=32, height_px=24).to_attrs(), "stimulus": {}}
    write_store(tmp_path / "s.zarr", {"frames": ArraySpec(frames, ("t", "y", "x"), chunks=(2, 24, 32))}, attrs)
    spec = resolve_model(next(e for e in entries if e["name"] == "tiny"), track="motion")
    assert (spec.kind, spec.batch_size, spec.device, spec.resources) == ("pairs", 16, "cpu",
                                                                          {"threads": 2, "mem_mb": 4000})
    flow = open_store(run_motion_model(spec, tmp_path / "s.zarr", tmp_path / "r.zarr", show_progress=False))
    with torch.inference_mode():  # the module the page defines, called directly on the same pairs
        want = tiny(frames[:-1].copy(), frames[1:].copy())
    np.testing.assert_allclose(flow["flow"].compute()[1:], want, rtol=0, atol=1e-6)
    assert flow.attrs["model"]["weights_digest"]


def test_attention_deep_recipe_scores_its_config_models(tmp_path, monkeypatch):
    """The page's deep attention config, as written: the map models (the built-in centre prior, the page's
    network with its weights file) get their untuned rows from psybench.score on the tiny movies, the ResNet
    family its feature store; the page's Python scoring block runs on a stimulus store."""
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    from conftest import TINY_ATTENTION_CONFIG

    import psybench

    section = _section("### Attention: your own deep model")
    (tmp_path / "mypackage").mkdir()
    (tmp_path / "mypackage/__init__.py").write_text("")
    (tmp_path / "mypackage/deepsal.py").write_text(textwrap.dedent(_block(section, "python")))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for mod in [m for m in list(sys.modules) if m == "mypackage" or m.startswith("mypackage.")]:
        monkeypatch.delitem(sys.modules, mod)
    from mypackage.deepsal import network

    (tmp_path / "weights").mkdir()
    torch.manual_seed(0)
    torch.save(network().state_dict(), "weights/deepsal.pt")  # as the page says
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), "weights/resnet18.pt")
    cfg = yaml.safe_load(_block(section, "yaml"))
    score_config(None, cfg)  # laid over config/config.yaml, it passes the schema
    entries = {e["name"]: e for e in cfg["attention"]["models"]}
    assert "kind" not in entries["centre"]  # the registry gives centre_bias its kind
    values = {}
    for name in ("centre", "deepsal"):
        rows = psybench.score(entries[name], "attention", config=TINY_ATTENTION_CONFIG, progress=False)
        assert set(rows["model"]) == {f"{name} untuned map"}
        assert set(rows["experiment"]) == {"A_on_A", "A_on_B"} and "rank_percentile" in set(rows["metric"])
        values[name] = rows.sort_values(["experiment", "metric"])["value"].to_numpy()
        assert np.isfinite(values[name]).sum() > len(values[name]) // 2
    assert not np.array_equal(values["centre"], values["deepsal"], equal_nan=True)

    stim = write_popout_store(tmp_path / "A.zarr", n_frames=3, n_distractors=4)
    spec = resolve_model(entries["resnet"], track="attention")
    store = open_store(write_feature_store(stim, tmp_path / "f.zarr", model=spec))
    assert store["maps"].shape[:3] == (3, 30, 40) and np.isfinite(store["maps"].compute()).all()

    counts = np.zeros((2, 3, 30, 40))
    counts[0, :, 15, 20] = counts[1, :, 5, 10] = 1  # two observers, one fixation per frame each
    namespace = {"stimulus": stim, "movie": None, "counts": counts}
    exec(_block(section, "python", 1), namespace)
    assert set(namespace["scores"]) >= {"AUC-Judd", "NSS", "IG", "rank_percentile"}
    assert 0 <= namespace["scores"]["rank_percentile"] <= 100
