"""Shared fixtures: the workflow test harness.

Every workflow test runs Snakemake in a subprocess (``python -m snakemake``, as the
unit tests Snakemake generates do; its Python API changes the working directory)
in a temporary copy of the workflow and of the psybench package. The copy's folder
is first on ``PYTHONPATH``, so a test may edit library code, add user models or
change the config without touching the repository.

Fixtures
--------
harness : WorkflowHarness (session)
    Copies, clones, configures and runs workflow folders; reads Snakemake's output.
completed_workflow : pathlib.Path (session)
    The motion track on :data:`TINY_CONFIG`, run once to its Table 1. Tests must
    not modify it: ``harness.clone`` it first (cheap, and Snakemake sees the clone
    as up to date because modification times are kept).
completed_attention_workflow : pathlib.Path (session)
    The attention track on :data:`TINY_ATTENTION_CONFIG`, run once to its score rows;
    the same rules as ``completed_workflow``.
"""

from __future__ import annotations

import copy
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

# The checkout whose workflow is copied; PSYBENCH_WORKFLOW_ROOT runs the workflow
# tests against another checkout without touching this one.
ROOT = Path(os.environ.get("PSYBENCH_WORKFLOW_ROOT") or Path(__file__).resolve().parent.parent)
WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "envs", "report", "profiles", "psybench")

# The motion track on a tiny display: every experiment family present (so Table 1 is
# complete), as few stimuli and frames as the stimulus set accepts, one built-in model.
TINY_CONFIG = {
    "display": {"px_per_deg": 4, "frames_per_s": 50, "width_px": 96, "height_px": 96, "supersample": 2},
    "tracks": ["motion"],
    "motion": {
        "duration_ms": 200,
        "directions_deg": [0],  # one direction and no generalisation runs: test_workflow.py runs those
        "generalisation": {n: {"levels": []} for n in ("contrast", "speed_deg_s", "frames_per_s", "px_per_deg")},
        "diamonds": {"speed_deg_s": 8, "size_deg": 8, "line_width_deg": 0.5, "directions_deg": [0]},
        "bars": {"speed_deg_s": 8, "width_deg": 0.5, "tilt_deg": 45, "lengths_deg": [4, 8]},
        "dashed_bars": {"length_deg": 8, "n_tiles": [1, 2], "gap_fraction": 0.3},
        "barberpole": {"aspect_ratios": [1, 2], "short_side_deg": 6, "sf_cpd": 0.5, "speed_deg_s": 4},
        "gratings": {"diameters_deg": [2, 6, 12], "sf_cpd": 0.5, "speed_deg_s": 8},
        "models": [{"name": "hs", "algorithm": "horn_schunck"}],
    },
    "literature": "config/literature.yaml",
}

# The motion Table 1 of a run: the target of most motion workflow tests.
TABLE = "results/aggregate/motion_table1.csv"

# The attention track on two 45-frame pop-out movies (4.5 s at 10 frames/s), two synthetic
# observers, one built-in model at L = 1, one set of two control trajectories per category.
TINY_ATTENTION_CONFIG = {
    "tracks": ["attention"],
    "attention": {
        "grid": [40, 30],
        "chunk_frames": 16,
        "lags_ms": [100, 300],
        "movies": {
            "A": {"popout": {"seed": 1, "n_frames": 45}, "observers": {"seed": 1, "p_target": [0.9, 0.1]}},
            "B": {"popout": {"seed": 2, "n_frames": 45}, "observers": {"seed": 2, "p_target": [0.1, 0.9]}},
        },
        "models": [{"name": "raw", "algorithm": "raw", "L": 1}],
        "pairs": [["A", "A"], ["A", "B"]],
        "evaluation": {"n_sets": 1, "n_per_set": 2},
        "metrics": {"n_splits": 5},
    },
}
# What completed_attention_workflow builds: the track's tables and its score rows.
ATTENTION_TARGETS = ("attention_all", "results/aggregate/scores_attention.csv")

# User motion models every workflow copy gets, as the package ``usermodels`` (module ``flow``).
USER_MODELS = '''
"""User models for the workflow tests (imported as usermodels.flow)."""
import time

import numpy as np


def estimate(frame0, frame1, *, gain=1.0):
    """A user model: constant rightward flow."""
    out = np.zeros(frame0.shape + (2,), np.float32)
    out[..., 0] = gain
    return out


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


class WorkflowHarness:
    """Workflow copies run through ``python -m snakemake`` (see the module docstring)."""

    root = ROOT
    table = TABLE

    # ------------------------------------------------------------------ folders
    def copy(self, dest: Path, config: dict | None = None, *, modules: dict[str, str] | None = None) -> Path:
        """A runnable copy of the workflow in ``dest``, configured with ``config`` (default :data:`TINY_CONFIG`).

        ``modules`` maps paths relative to ``dest`` (``"mypkg/models.py"``) to Python
        source: user code that the config names as ``module:function``.
        """
        dest.mkdir(parents=True, exist_ok=True)
        for name in WORKFLOW_FILES:
            src = self.root / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            elif src.exists():
                shutil.copy2(src, dest / name)
        for rel, source in {"usermodels/__init__.py": "", "usermodels/flow.py": USER_MODELS, **(modules or {})}.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(source)
        self.write_config(dest, config if config is not None else TINY_CONFIG)
        return dest

    @staticmethod
    def clone(src: Path, dest: Path) -> Path:
        """Copy a workflow folder with its results and Snakemake metadata (modification times kept)."""
        shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("locks", "incomplete"))
        return dest

    @staticmethod
    def write_config(workdir: Path, config: dict) -> None:
        (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    @staticmethod
    def tiny_config(**motion_overrides) -> dict:
        """:data:`TINY_CONFIG` with some keys of its ``motion`` section replaced."""
        cfg = copy.deepcopy(TINY_CONFIG)
        cfg["motion"].update(copy.deepcopy(motion_overrides))
        return cfg

    @staticmethod
    def tiny_attention_config(**attention_overrides) -> dict:
        """:data:`TINY_ATTENTION_CONFIG` with some keys of its ``attention`` section replaced."""
        cfg = copy.deepcopy(TINY_ATTENTION_CONFIG)
        cfg["attention"].update(copy.deepcopy(attention_overrides))
        return cfg

    # ------------------------------------------------------------------ runs
    @staticmethod
    def env(workdir: Path, **extra: str) -> dict:
        """The environment of a run: the copy first on PYTHONPATH, one BLAS thread per job."""
        path = os.pathsep.join(filter(None, [str(workdir), os.environ.get("PYTHONPATH")]))
        return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", **extra}

    def run(self, workdir: Path, *args: str, check: bool = True, timeout: float = 900, env: dict | None = None):
        """Run ``python -m snakemake *args`` in ``workdir``; raise with its output on failure."""
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=workdir, env=env or self.env(workdir), capture_output=True, text=True, timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def popen(self, workdir: Path, *args: str) -> subprocess.Popen:
        """Start ``python -m snakemake *args`` in its own session (for :meth:`kill_group`)."""
        return subprocess.Popen(
            [sys.executable, "-m", "snakemake", *args], cwd=workdir, env=self.env(workdir),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )

    @staticmethod
    def kill_group(proc: subprocess.Popen) -> None:
        """SIGKILL a process started by :meth:`popen` and all of its children."""
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    # ------------------------------------------------------------------ output
    @staticmethod
    def output(proc) -> str:
        return proc.stdout + proc.stderr

    def rules_run(self, proc) -> list[str]:
        """Names of the rules whose jobs a (non-dry) run executed, one entry per job."""
        return re.findall(r"^(?:local)?rule (\w+):$", self.output(proc), flags=re.M)

    def job_counts(self, proc) -> dict[str, int]:
        """The 'Job stats' table of a run: {rule: count}."""
        counts = {}
        m = re.search(r"Job stats:\n(.*?)\n\n", self.output(proc), flags=re.S)
        if not m:
            return counts
        for line in m.group(1).splitlines()[2:]:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
                counts[parts[0]] = int(parts[1])
        return counts

    def planned_outputs(self, proc) -> set[str]:
        """Output paths of the jobs a dry run plans."""
        outs = set()
        for m in re.finditer(r"^\s+output: (.+)$", self.output(proc), flags=re.M):
            outs.update(p.strip() for p in m.group(1).split(","))
        return outs

    @staticmethod
    def wait_for(predicate, timeout: float, interval: float = 0.05) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(interval)
        return False


@pytest.fixture(scope="session")
def harness() -> WorkflowHarness:
    return WorkflowHarness()


def _session_workflow(harness, tmp_path_factory, name: str, config: dict, targets) -> Path:
    """A workflow copy on ``config`` run once to ``targets``, built once per session.

    Under pytest-xdist the workers share one copy: the first to need it builds it
    under a file lock in the run's common temporary folder, the others wait and
    reuse it (tests only ever clone it).
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        work = harness.copy(tmp_path_factory.mktemp(name) / "wf", config)
        harness.run(work, "--cores", "2", *targets)
        return work
    shared = tmp_path_factory.getbasetemp().parent / name
    shared.mkdir(exist_ok=True)
    work, done = shared / "wf", shared / "done"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(work, ignore_errors=True)
            harness.copy(work, config)
            harness.run(work, "--cores", "2", *targets)
            done.touch()
    return work


@pytest.fixture(scope="session")
def completed_workflow(harness, tmp_path_factory) -> Path:
    """A workflow copy on :data:`TINY_CONFIG` whose Table 1 is complete (built once per session)."""
    return _session_workflow(harness, tmp_path_factory, "completed_workflow", TINY_CONFIG, [TABLE])


@pytest.fixture(scope="session")
def completed_attention_workflow(harness, tmp_path_factory) -> Path:
    """A workflow copy on :data:`TINY_ATTENTION_CONFIG` run to :data:`ATTENTION_TARGETS` (once per session)."""
    return _session_workflow(harness, tmp_path_factory, "completed_attention_workflow", TINY_ATTENTION_CONFIG,
                             ATTENTION_TARGETS)


def pytest_collection_modifyitems(items):
    """Run the slowest files first (SLURM, then other workflow tests), so that a
    parallel run (pytest-xdist, ``--dist loadfile``) does not end on one long file."""
    def rank(item):
        return 0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("workflow") else 2

    first = {}
    for item in items:
        first[item.fspath] = min(first.get(item.fspath, 3), rank(item))
    items.sort(key=lambda item: first[item.fspath])
