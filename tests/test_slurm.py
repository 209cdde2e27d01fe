"""A small but complete psybench workflow through a real SLURM cluster (profiles/slurm).

The test uses the single-node cluster of this machine, starting it with
.ci/setup_slurm.sh when it is not up (root only). Where SLURM cannot be started
the test is skipped with the reason, except in CI (``CI`` set), where it fails:
CI must run it for real.
"""

from __future__ import annotations

import os
import re

import pytest
from slurm_cluster import ensure_slurm_cluster, slurm_job_ids

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


@pytest.fixture(scope="module")
def slurm_cluster():
    ready, reason = ensure_slurm_cluster()
    if not ready:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the SLURM test must run, but: {reason}")
        pytest.skip(f"SLURM cluster unavailable: {reason}")
    return reason


def test_workflow_through_slurm_equals_local_run(slurm_cluster, harness, completed_workflow, tmp_path):
    local = completed_workflow  # the same config, run locally
    cluster = harness.copy(tmp_path / "cluster", harness.tiny_config())

    proc = harness.run(
        cluster,
        "--profile", "profiles/slurm",
        "--workflow-profile", "none",
        # this machine's test cluster: no account, first status check after 2 s
        "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks", "2",
        "--slurm-keep-successful-logs",
        "--latency-wait", "10",
        "--jobs", "4",
        harness.table,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    ids = slurm_job_ids(cluster, proc)
    n_jobs = int(re.search(r"^total\s+(\d+)$", out, flags=re.M).group(1))
    # every job of the run was a SLURM job, with its own SLURM log
    assert len(ids) == n_jobs, out
    logs = list((cluster / ".snakemake" / "slurm_logs").rglob("*.log"))
    assert {p.stem for p in logs} >= set(ids), (ids, logs)
    assert "Falling back to 'sacct'" not in out  # the squeue status query was used
    assert (cluster / harness.table).read_bytes() == (local / harness.table).read_bytes()
