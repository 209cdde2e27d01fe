"""RAFT (Teed & Deng 2020) in the motion workflow: it runs to Table 1, and a new weights file reruns it alone.

The tiny motion config with ``raft_small`` (random weights written by the test to a local
file, 2 flow updates to keep the run short) beside ``horn_schunck``: the run reaches Table 1
with a row for RAFT; replacing the weights file with other weights then makes a dry run plan
RAFT's jobs only (its responses and what reads them), none of Horn-Schunck's.
"""

from __future__ import annotations

import pandas as pd
import pytest

torch = pytest.importorskip("torch", reason="the deep extra (pip install 'psybench[deep]') is not installed")
from torchvision.models.optical_flow import raft_small  # noqa: E402

pytestmark = [pytest.mark.workflow]

RAFT = {"name": "raft", "algorithm": "raft_small", "weights": "weights/raft_small.pt", "batch_size": 4,
        "params": {"num_flow_updates": 2}}


def _write_weights(path, seed: int) -> None:
    torch.manual_seed(seed)
    path.parent.mkdir(exist_ok=True)
    torch.save(raft_small(weights=None, progress=False).state_dict(), path)


def test_raft_small_runs_to_table1_and_new_weights_rerun_only_its_jobs(harness, tmp_path):
    cfg = harness.tiny_config()
    cfg["motion"]["models"] = [*cfg["motion"]["models"], RAFT]
    work = harness.copy(tmp_path / "wf", cfg)
    _write_weights(work / "weights" / "raft_small.pt", seed=0)
    harness.run(work, "--cores", "2", harness.table)
    table1 = pd.read_csv(work / harness.table)
    assert set(table1["model"]) == {"hs", "raft"}
    stores = sorted((work / "results/motion/responses/raft").glob("*.zarr/zarr.json"))
    assert stores and all('"weights_digest"' in p.read_text() and '"torch"' in p.read_text() for p in stores)

    proc = harness.run(work, "-n", "--cores", "2", harness.table)  # up to date: nothing to do
    assert not harness.planned_outputs(proc)

    _write_weights(work / "weights" / "raft_small.pt", seed=1)  # same path, other content
    proc = harness.run(work, "-n", "--cores", "2", harness.table)
    planned = harness.planned_outputs(proc)
    assert any(p.startswith("results/motion/responses/raft/") for p in planned)
    assert not [p for p in planned if "/hs/" in p or p.endswith("/hs.zarr")], planned
