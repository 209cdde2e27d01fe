"""Deep models in the workflow: a model entry's resources become its jobs' own, GPUs included.

A tiny torch pair model of the test's own (a factory named by ``callable:`` with
``factory: true``) sits beside a classic model on the tiny motion config.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.workflow]

# A batched pair model: u = gain * (frame1 - frame0), v = 0; one 1 x 1 convolution whose
# weights come from the entry's weights file.
DEEP_MODELS = '''
"""A tiny torch pair model for the workflow tests (imported as usermodels.deep)."""
import numpy as np
import torch

from psybench.deep import load_weights


class TinyPairs(torch.nn.Module):
    def __init__(self, gain=1.0):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 1, 1, bias=False)
        with torch.no_grad():
            self.conv.weight[:] = torch.tensor([-gain, gain]).reshape(1, 2, 1, 1)

    def forward(self, frames0, frames1):
        x = torch.stack([torch.as_tensor(np.array(frames0)), torch.as_tensor(np.array(frames1))], dim=1)
        u = self.conv(x)[:, 0]
        return torch.stack([u, torch.zeros_like(u)], dim=-1).numpy()


def build(*, weights, device, gain=1.0):
    net = TinyPairs(gain)
    if weights is not None:
        load_weights(net, weights, model="tiny")
    return net.to(device).eval()
'''
GPU_MODEL = {"name": "tiny", "callable": "usermodels.deep:build", "kind": "pairs", "factory": True,
             "weights": "weights/tiny.pt", "resources": {"gpu": 1, "threads": 2, "mem_mb": 3000, "runtime": 45}}


def _deep_copy(harness, dest, *models):
    cfg = harness.tiny_config()
    cfg["motion"]["models"] += [dict(m) for m in models]
    work = harness.copy(dest, cfg, modules={"usermodels/deep.py": DEEP_MODELS})
    (work / "weights").mkdir()
    torch.manual_seed(0)
    net = torch.nn.Conv2d(2, 1, 1, bias=False)
    torch.save({"conv.weight": net.weight.detach()}, work / "weights" / "tiny.pt")
    return work


def _job_resources(out: str, model: str) -> tuple[int, dict[str, str]]:
    """(threads, resources) of the motion_responses job of ``model`` in a dry run's output."""
    for block in out.split("rule motion_responses:")[1:]:
        block = block.split("\n[")[0]
        if re.search(rf"^\s+wildcards: model={model}$", block, flags=re.M):
            threads = re.search(r"^\s+threads: (\d+)$", block, flags=re.M)
            line = re.search(r"^\s+resources: (.+)$", block, flags=re.M).group(1)
            resources = dict(kv.split("=", 1) for kv in line.split(", "))
            return int(threads.group(1)) if threads else 1, resources
    raise AssertionError(f"no motion_responses job of {model!r} in:\n{out}")


def test_gpu_model_job_resources_and_its_sbatch_line(harness, tmp_path):
    """Through profiles/slurm, the deep model's job gets its entry's threads, memory, runtime and
    gpu; the classic model's job keeps the rule's own. The SLURM plugin's own functions then write
    the sbatch line: --gpus=1, --cpus-per-task=2, --mem 3000, -t 45, and no --gres."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    work = _deep_copy(harness, tmp_path / "wf", GPU_MODEL)
    proc = harness.run(work, "-n", "--profile", "profiles/slurm", "--workflow-profile", "none",
                       "--slurm-no-account", harness.table)
    out = harness.output(proc)
    threads, res = _job_resources(out, "tiny")
    assert (threads, res["mem_mb"], res["runtime"], res["gpu"]) == (2, "3000", "45", "1")
    threads, res = _job_resources(out, "hs")
    assert (threads, res["mem_mb"], res["runtime"], res["gpu"]) == (1, "2000", "60", "0")

    def sbatch(threads, res):
        values = {k: int(v) if v.isdigit() else v for k, v in res.items()}
        job = SimpleNamespace(threads=threads, resources=SimpleNamespace(**values, get=values.get))
        params = {"run_uuid": "u", "slurm_logfile": "log", "comment_str": "c", "account": "",
                  "partition": f"-p {values['slurm_partition']}", "workdir": str(work)}
        return get_submit_command(job, params) + set_gres_string(job)

    line = sbatch(*_job_resources(out, "tiny"))
    assert " --gpus=1" in line and "--cpus-per-task=2" in line and " --mem 3000" in line and " -t 45" in line
    assert "--gres" not in line and "-p debug" in line
    classic = sbatch(*_job_resources(out, "hs"))
    assert "--gpus" not in classic and "--cpus-per-task=1" in classic and "--gres" not in classic


CPU_MODEL = {"name": "tiny", "callable": "usermodels.deep:build", "kind": "pairs", "factory": True,
             "weights": "weights/tiny.pt", "batch_size": 3}


@pytest.mark.slow
def test_deep_model_runs_reproducibly_and_a_new_checkpoint_reruns_only_it(harness, tmp_path):
    """Two CPU runs of a tiny torch model beside a classic one give byte-identical tables; its
    stores record the weights' digest and the torch environment; rewriting the weights file at
    the same path makes a dry run plan that model's jobs again, and no job of the classic model."""
    import zarr

    from psybench.deep import environment_attrs, torch_session, weights_digest

    first = _deep_copy(harness, tmp_path / "a", CPU_MODEL)
    second = _deep_copy(harness, tmp_path / "b", CPU_MODEL)
    for work in (first, second):
        harness.run(work, "--cores", "2", harness.table)
    assert (first / harness.table).read_bytes() == (second / harness.table).read_bytes()
    assert "tiny" in (first / harness.table).read_text()

    store = next((first / "results" / "motion" / "responses" / "tiny").glob("*.zarr"))
    attrs = zarr.open_group(store, mode="r").attrs.asdict()
    assert attrs["model"]["weights_digest"] == weights_digest(first / "weights" / "tiny.pt")
    with torch_session(threads=1):
        assert attrs["environment"] == environment_attrs(torch.device("cpu"))

    torch.save({"conv.weight": torch.ones(1, 2, 1, 1)}, first / "weights" / "tiny.pt")  # same path, new weights
    proc = harness.run(first, "-n", harness.table)
    planned = harness.planned_outputs(proc)
    responses = {p for p in planned if p.startswith("results/motion/responses/")}
    assert responses and all(p.startswith("results/motion/responses/tiny/") for p in responses), planned
    assert not any("/hs/" in p or p.endswith("/hs.csv") for p in planned), planned
    assert harness.job_counts(proc).get("motion_responses") == 1
