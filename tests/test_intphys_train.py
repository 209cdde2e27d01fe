"""Training the cnn_future baseline: same seed same bytes, SIGKILL then resume, damaged checkpoints refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from psybench.intphys.checkpoint import read_checkpoint  # noqa: E402
from psybench.intphys.generate import generate_intphys  # noqa: E402
from psybench.intphys.ingest import ingest_shard  # noqa: E402
from psybench.intphys.models.future import cnn_future_surprise, network_of  # noqa: E402
from psybench.intphys.models.observation import observe  # noqa: E402
from psybench.intphys.train import train_future_stores  # noqa: E402
from psybench.registry import ModelError  # noqa: E402

PARAMS = dict(size=16, width=4, latent=16, epochs=2, batch_size=8, lr=1e-3, checkpoint_every=2, seed=3)


@pytest.fixture(scope="module")
def train_split(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    generate_intphys(root / "tree", "train", n_train=6, n_frames=12, height=32, width=32, seed=5)
    ingest_shard(root / "tree", "train", root / "s.zarr", root / "s.csv", shard=0, shard_size=50)
    return [root / "s.zarr"], [root / "s.csv"]


def _train(split, out, **params):
    return train_future_stores(*split, out, params={**PARAMS, **params}, code_hash="abc")


def test_same_seed_same_bytes_other_seed_other_weights(train_split, tmp_path):
    a = _train(train_split, tmp_path / "a.pt")
    b = _train(train_split, tmp_path / "b.pt")
    c = _train(train_split, tmp_path / "c.pt", seed=4)
    assert a.read_bytes() == b.read_bytes()
    ca, cc = read_checkpoint(a), read_checkpoint(c)
    assert ca["steps"] == 2 * 6 and ca["n_clips"] == 6 * 7 and ca["code_hash"] == "abc"  # 42 clips: 6 batches
    assert ca["config"]["horizon"] == 5 and ca["amp"] is False and ca["device"] == "cpu"
    assert ca["data_digest"] == cc["data_digest"] and len(ca["data_digest"]) == 32
    assert not torch.equal(ca["state_dict"]["expand.weight"], cc["state_dict"]["expand.weight"])
    assert not (tmp_path / "a.pt.resume").exists()
    # training moved the weights away from their seeded initial values and lowered the loss
    torch.manual_seed(3)
    init = network_of(ca["config"]).state_dict()
    assert not torch.equal(init["expand.weight"], ca["state_dict"]["expand.weight"])


def test_sigkill_then_rerun_gives_the_uninterrupted_bytes(train_split, tmp_path):
    whole = _train(train_split, tmp_path / "whole.pt", epochs=4, checkpoint_every=1)
    out = tmp_path / "killed.pt"
    resume = tmp_path / "killed.pt.resume"
    code = ("import sys, time; from pathlib import Path; import psybench.intphys.train as t\n"
            "w = t.write_checkpoint\n"
            "def slow(path, payload):\n"
            "    w(path, payload); time.sleep(0.3)\n"
            "t.write_checkpoint = slow\n"
            f"t.train_future_stores({[str(p) for p in train_split[0]]}, {[str(p) for p in train_split[1]]}, "
            f"{str(out)!r}, params={ {**PARAMS, 'epochs': 4, 'checkpoint_every': 1}!r}, code_hash='abc')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if resume.exists() and read_checkpoint(resume)["step"] >= 5:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "training ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not out.exists() and resume.exists()
    killed_at = read_checkpoint(resume)["step"]
    assert 5 <= killed_at < 24
    _train(train_split, out, epochs=4, checkpoint_every=1)  # the rerun resumes
    assert out.read_bytes() == whole.read_bytes()
    assert not resume.exists()


def test_a_damaged_checkpoint_is_refused_by_name(train_split, tmp_path):
    good = _train(train_split, tmp_path / "m.pt", epochs=1)
    data = bytearray(good.read_bytes())
    data[-100] ^= 0xFF
    bad = tmp_path / "bad.pt"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"checkpoint '.*bad\.pt' is damaged"):
        read_checkpoint(bad)
    (tmp_path / "short.pt").write_bytes(good.read_bytes()[:500])
    with pytest.raises(ModelError, match=r"short\.pt' is damaged"):
        read_checkpoint(tmp_path / "short.pt")
    # a damaged resume checkpoint stops the training, naming it, instead of being overwritten
    resume = tmp_path / "r.pt.resume"
    resume.write_bytes(b"PSYBENCH-CHECKPOINT-1\n" + b"0" * 32 + b"\nnot a torch file")
    with pytest.raises(ModelError, match=r"r\.pt\.resume' is damaged"):
        _train(train_split, tmp_path / "r.pt", epochs=1)
    with pytest.raises(ModelError, match=r"bad\.pt. is damaged"):
        cnn_future_surprise(observe(*[p[0] for p in train_split]), weights=bad)


def test_scoring_uses_the_largest_clip_error(train_split, tmp_path):
    ckpt = _train(train_split, tmp_path / "m.pt", epochs=1)
    obs = observe(train_split[0][0], train_split[1][0])
    p = cnn_future_surprise(obs, weights=ckpt, scale=0.05)
    assert list(p.index) == list(obs.movies) and ((p > 0) & (p < 1)).all()
    # oracle: the network run frame by frame in plain torch
    from psybench.intphys.clips import movie_channels
    from psybench.intphys.models.future import MASK_KINDS

    state = read_checkpoint(ckpt)
    net = network_of(state["config"])
    net.load_state_dict(state["state_dict"])
    net.eval()
    x = torch.from_numpy(movie_channels(obs.masks[0], channel="masks", size=16, names=obs.masks_grayscale[0],
                                        mask_kinds=MASK_KINDS))
    with torch.no_grad():
        errs = [float(((net(x[t : t + 1]) - x[t + 5]) ** 2).mean()) for t in range(12 - 5)]
    np.testing.assert_allclose(p.iloc[0], np.exp(-max(errs) / 0.05), rtol=1e-5)


def test_mixed_precision_only_on_a_gpu_and_recorded(train_split, tmp_path):
    ckpt = read_checkpoint(_train(train_split, tmp_path / "m.pt", epochs=1, amp=True))
    assert ckpt["config"]["amp"] is True and ckpt["amp"] is False and ckpt["device"] == "cpu"
    assert ckpt["determinism"]["deterministic_algorithms"] is True
    assert not torch.are_deterministic_algorithms_enabled()  # the process's settings are restored after


def test_psybench_score_trains_then_scores_cnn_future(tmp_path):
    """psybench.score runs the rules' chain: the train split trains the checkpoint the dev scores read."""
    import psybench

    overrides = {"tracks": ["intphys"], "intphys": {
        "generator": {"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 3, "height": 16, "width": 16,
                      "n_frames": 8}, "shard_size": 40, "n_boot": 10}}
    rows = psybench.score("cnn_future", "intphys", params={"size": 16, "width": 4, "latent": 8, "batch_size": 4},
                          overrides=overrides, workdir=tmp_path, progress=False)
    ckpt = read_checkpoint(tmp_path / "train" / "cnn_future.pt")
    assert ckpt["n_clips"] == 3 * (8 - 5) and ckpt["config"]["size"] == 16
    overall = rows[(rows["experiment"] == "all/all/all/all")].set_index("metric")["value"]
    assert 0.0 <= overall["L_R"] <= 1.0 and 0.0 <= overall["L_A"] <= 1.0
