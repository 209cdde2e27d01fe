"""Helpers for the cluster-scale tests: workflow copies, Snakemake runs, a real SLURM node.

Not a test module (no ``test_`` prefix): tests/test_slurm.py, test_cache.py,
test_faults.py and test_bad_input.py import it. Every workflow run happens in a
temporary copy of the workflow and of the psybench package (first on
PYTHONPATH), through ``python -m snakemake`` in a subprocess, as in
tests/test_workflow.py.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

# The checkout whose workflow is copied; PSYBENCH_WORKFLOW_ROOT runs these tests
# against another checkout (e.g. one with local fixes) without touching this one.
ROOT = Path(os.environ.get("PSYBENCH_WORKFLOW_ROOT") or Path(__file__).resolve().parent.parent)
SETUP_SCRIPT = Path(__file__).resolve().parent.parent / ".ci" / "setup_slurm.sh"
WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "envs", "report", "profiles", "psybench")

# The motion track on a tiny display: every experiment family present (so Table 1 is
# complete), as few stimuli and frames as the stimulus set accepts, one built-in model.
TINY_CONFIG = {
    "display": {"px_per_deg": 4, "frames_per_s": 50, "width_px": 96, "height_px": 96, "supersample": 2},
    "tracks": ["motion"],
    "motion": {
        "duration_ms": 200,
        "diamonds": {"speed_deg_s": 8, "size_deg": 8, "line_width_deg": 0.5, "directions_deg": [0]},
        "bars": {"speed_deg_s": 8, "width_deg": 0.5, "tilt_deg": 45, "lengths_deg": [4, 8]},
        "dashed_bars": {"length_deg": 8, "n_tiles": [1, 2], "gap_fraction": 0.3},
        "barberpole": {"aspect_ratios": [1, 2], "short_side_deg": 6, "sf_cpd": 0.5, "speed_deg_s": 4},
        "gratings": {"diameters_deg": [2, 6, 12], "sf_cpd": 0.5, "speed_deg_s": 8},
        "models": [{"name": "hs", "algorithm": "horn_schunck"}],
    },
    "literature": "config/literature.yaml",
}

TABLE = "results/aggregate/motion_table1.csv"

USER_MODELS = '''
"""User models for the fault and bad-input tests (imported as usermodels.flow)."""
import os
import time

import numpy as np


def slow(frame0, frame1, *, delay_s=0.05):
    """Zero flow, slowly: leaves time to kill a run while its store is being written."""
    time.sleep(delay_s)
    return np.zeros(frame0.shape + (2,), np.float32)


def boom(frame0, frame1):
    raise RuntimeError("boom: this user model is broken")


def nan_flow(frame0, frame1):
    return np.full(frame0.shape + (2,), np.nan, np.float32)


def wrong_shape(frame0, frame1):
    return np.zeros(frame0.shape, np.float32)
'''


def tiny_config(**motion_overrides) -> dict:
    cfg = copy.deepcopy(TINY_CONFIG)
    cfg["motion"].update(copy.deepcopy(motion_overrides))
    return cfg


def copy_workflow(dest: Path, config: dict | None = None) -> Path:
    """A runnable copy of the workflow in ``dest`` (with the usermodels package)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.exists():
            shutil.copy2(src, dest / name)
    (dest / "usermodels").mkdir(exist_ok=True)
    (dest / "usermodels" / "__init__.py").write_text("")
    (dest / "usermodels" / "flow.py").write_text(USER_MODELS)
    write_config(dest, config if config is not None else TINY_CONFIG)
    return dest


_BASE: dict[str, Path] = {}


def completed_workflow(tmp_path_factory) -> Path:
    """A workflow copy on TINY_CONFIG where the table is complete, built once per session.

    Tests must not modify it: :func:`clone` it first (cheap, and Snakemake sees
    the clone as up to date because modification times are kept).
    """
    if "path" not in _BASE:
        work = copy_workflow(tmp_path_factory.mktemp("base") / "wf", TINY_CONFIG)
        snakemake(work, "--cores", "2", TABLE)
        _BASE["path"] = work
    return _BASE["path"]


def clone(src: Path, dest: Path) -> Path:
    """Copy a workflow directory with its results and Snakemake metadata (mtimes kept)."""
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("locks", "incomplete"))
    return dest


def write_config(workdir: Path, config: dict) -> None:
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def workflow_env(workdir: Path, **extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(workdir), OMP_NUM_THREADS="1")
    env.update(extra)
    return env


def snakemake(workdir: Path, *args: str, check: bool = True, timeout: float = 600, env: dict | None = None):
    """Run ``python -m snakemake *args`` in ``workdir``; raise with its output on failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=workdir, env=env or workflow_env(workdir), capture_output=True, text=True, timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def output(proc) -> str:
    return proc.stdout + proc.stderr


def rules_run(proc) -> list[str]:
    """Names of the rules whose jobs a (non-dry) run executed, one entry per job."""
    return re.findall(r"^(?:local)?rule (\w+):$", output(proc), flags=re.M)


def job_counts(proc) -> dict[str, int]:
    """The 'Job stats' table of a run: {rule: count}."""
    counts = {}
    text = output(proc)
    m = re.search(r"Job stats:\n(.*?)\n\n", text, flags=re.S)
    if not m:
        return counts
    for line in m.group(1).splitlines()[2:]:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL a process started with ``start_new_session=True`` and all of its children."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


# --------------------------------------------------------------------------- SLURM
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
    text = output(proc)
    for log in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log")):
        text += log.read_text(errors="replace")
    return sorted(set(re.findall(r"submitted with SLURM jobid (\d+)", text)))


def wait_for(predicate, timeout: float, interval: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return False
