"""House style: ruff (configured in pyproject.toml), snakefmt and Snakemake's linter are clean.

.ci/run runs the same three commands; this test makes `pytest` alone report a
violation, naming the file and line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:  # the test extra installs both: a missing one is a broken environment
        pytest.fail(f"{name} is not installed (pip install -e '.[test]' installs it)")
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_is_clean():
    proc = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_is_clean():
    proc = _run(_tool("snakefmt"), "--check", "Snakefile", "rules")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_library_names_no_results_path():
    """Workflow paths belong in rules/: nothing under psybench/ names a results/ path."""
    offenders = [
        f"{path.relative_to(ROOT)}:{i}"
        for path in sorted((ROOT / "psybench").rglob("*.py"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if '"results/' in line or "'results/" in line
    ]
    assert offenders == []


def test_library_modules_do_one_job():
    """No library module over about 400 lines (split by job instead)."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "psybench").rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > 420
    }
    assert long == {}


def test_no_issue_numbers_in_code_or_docs():
    """Code, comments and docs say what they mean, not which tracker issue asked for it."""
    tracker = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)
    places = [ROOT / "README.md", ROOT / "Snakefile"]
    for folder in ("psybench", "rules", "scripts", "config", "docs", "benchmarks", "profiles", ".ci"):
        places += sorted(p for p in (ROOT / folder).rglob("*") if p.is_file())
    places += sorted((ROOT / "tests").glob("*.py"))  # tests/data holds third-party files
    offenders = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
        for path in places
        if "__pycache__" not in path.parts and path.suffix not in {".pyc", ".png", ".npz", ".zarr"}
        for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if tracker.search(line)
    ]
    assert offenders == []
