"""Rule intphys_train_model in Snakemake: SIGKILL the training job, rerun, same bytes as an unbroken run."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytest.importorskip("torch")

from psybench.intphys.checkpoint import read_checkpoint  # noqa: E402
from psybench.intphys.train import train_future_stores  # noqa: E402

pytestmark = pytest.mark.workflow

MODEL = {"name": "cnn", "algorithm": "cnn_future",
         "params": {"size": 32, "width": 8, "latent": 16, "epochs": 12, "batch_size": 4, "lr": 0.001,
                    "checkpoint_every": 1}}


def _config():
    base = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())["intphys"]
    base.update(generator={"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 4, "height": 32, "width": 32,
                           "n_frames": 12, "status_variant": "v1", "depth_encoding": "8bit"},
                shard_size=100, n_boot=20, models=[MODEL])
    return base


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    kids = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _training_process(pid: int) -> int | None:
    """The deepest descendant running the training script (the Python process, not a shell above it)."""
    for k in reversed(_children(pid)):
        try:
            cmd = (Path("/proc") / str(k) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"intphys_train_model" in cmd:
            return k
    return None


def test_killed_training_job_resumes_to_the_uninterrupted_bytes(harness, tmp_path):
    harness.copy(tmp_path, {"tracks": ["intphys"], "intphys": _config()})
    target = "results/intphys/train/cnn.pt"
    resume = tmp_path / "results/intphys/train/cnn.pt.resume"
    proc = harness.popen(tmp_path, "--cores", "1", target)
    killed = False
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and proc.poll() is None:
            pid = _training_process(proc.pid)
            if pid is not None and resume.exists():
                try:
                    step = read_checkpoint(resume)["step"]
                except Exception:  # being replaced: the next poll reads it
                    step = 0
                if step >= 3:
                    os.kill(pid, signal.SIGKILL)
                    killed = True
                    break
            time.sleep(0.02)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            harness.kill_group(proc)
    assert killed, "the training job ended before it could be killed"
    assert proc.returncode != 0 and not (tmp_path / target).exists() and resume.exists()
    step = read_checkpoint(resume)["step"]
    assert 3 <= step < 12 * 7
    r = harness.run(tmp_path, "--cores", "1", target, check=False, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    log = (tmp_path / "logs/intphys/train/cnn.log").read_text()
    assert "resuming from" in log and f"at step {step}" in log
    assert not resume.exists()
    # the uninterrupted run: the same stage on the same stores, in one go
    got = read_checkpoint(tmp_path / target)
    stores = sorted((tmp_path / "results/intphys/stores/train").glob("shard_*.zarr"))
    whole = train_future_stores(stores, [s.with_suffix(".csv") for s in stores], tmp_path / "whole.pt",
                                params=MODEL["params"], code_hash=got["code_hash"], model="cnn")
    assert (tmp_path / target).read_bytes() == whole.read_bytes()
    assert got["steps"] == 12 * 7 and got["config"]["horizon"] == 5 and len(got["code_hash"]) > 8


def test_trained_model_is_scored_per_condition_and_reruns_nothing(harness, tmp_path):
    harness.copy(tmp_path, {"tracks": ["intphys"], "intphys": _config() | {
        "models": [{**MODEL, "params": {**MODEL["params"], "epochs": 1}}]}})
    r = harness.run(tmp_path, "--cores", "2", "intphys_all", check=False, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    t = pd.read_csv(tmp_path / "results/intphys/scores/cnn/scores.csv")
    cond = t[(t[["visibility", "motion", "n_objects"]] != "all").all(axis=1) & (t.block == "O1")]
    assert len(cond.drop_duplicates(["visibility", "motion", "n_objects"])) == 18
    assert set(cond.metric) >= {"L_R", "L_A"}
    r = harness.run(tmp_path, "--cores", "2", "intphys_all", "-n", check=False)
    assert "Nothing to be done" in r.stdout + r.stderr
    # a model entry's gpu resource becomes its training job's (and its scoring job's)
    harness.write_config(tmp_path, {"tracks": ["intphys"], "intphys": _config() | {
        "models": [{**MODEL, "params": {**MODEL["params"], "epochs": 2}, "resources": {"gpu": 1}}]}})
    r = harness.run(tmp_path, "--cores", "2", "intphys_all", "-n", "-p", check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    job = re.search(r"rule intphys_train_model:\n(?:    .*\n)*?    resources: ([^\n]*)", r.stdout + r.stderr)
    assert job and "gpu=1" in job.group(1).split(", "), r.stdout[-3000:]
