"""A real single-node SLURM cluster for tests/test_slurm.py.

Not a test module (no ``test_`` prefix). The general workflow harness (copies of
the workflow, Snakemake runs) is the ``harness`` fixture of tests/conftest.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

SETUP_SCRIPT = Path(__file__).resolve().parent.parent / ".ci" / "setup_slurm.sh"


def _node_state() -> str | None:
    if shutil.which("sinfo") is None:
        return None
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    try:
        proc = subprocess.run(["sinfo", "-h", "-N", "-n", host, "-o", "%t"],
                              capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return None
    return proc.stdout.strip().splitlines()[0] if proc.returncode == 0 and proc.stdout.strip() else None


def slurm_ready() -> bool:
    state = _node_state()
    return bool(state) and state.rstrip("*~#").startswith(("idle", "mix", "alloc"))


def ensure_slurm_cluster(timeout: float = 300) -> tuple[bool, str]:
    """Use the running single-node cluster, or start one with .ci/setup_slurm.sh.

    Returns (ready, reason). The setup script needs root (apt-get when the
    packages are missing, then munged, slurmctld, slurmd).
    """
    if slurm_ready():
        return True, "node idle"
    if os.geteuid() != 0:
        return False, "no idle SLURM node and not root, so .ci/setup_slurm.sh cannot start slurmctld"
    if not SETUP_SCRIPT.exists():
        return False, f"{SETUP_SCRIPT} is missing"
    try:
        proc = subprocess.run(["bash", str(SETUP_SCRIPT)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"{SETUP_SCRIPT} did not finish within {timeout:.0f} s"
    if proc.returncode != 0 or not slurm_ready():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        return False, f"{SETUP_SCRIPT} could not start slurmctld/slurmd (exit {proc.returncode}):\n{tail}"
    return True, "started by .ci/setup_slurm.sh"


def slurm_job_ids(workdir: Path, proc) -> list[str]:
    """SLURM job ids reported by the executor in the run's output and Snakemake log."""
    text = proc.stdout + proc.stderr
    for log in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log")):
        text += log.read_text(errors="replace")
    return sorted(set(re.findall(r"submitted with SLURM jobid (\d+)", text)))
