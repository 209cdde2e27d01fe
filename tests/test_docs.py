"""The repository's documentation: one SLURM command, no paths to folders it does not have."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLURM_COMMAND = "snakemake all --profile profiles/slurm --workflow-profile none"
# a path that starts at a papers/ or reference/ folder (not a URL's /reference/ segment)
FOLDER_PATH = re.compile(r"(?:^|[\s`'\"(\[=])(?:\.{1,2}/)?(?:papers|reference)/")


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    files = []
    for name in out:
        path = ROOT / name
        if path.suffix in {".py", ".md", ".rst", ".smk", ".yaml", ".yml", ".html", ".j2", ".txt", ".toml", ".cfg"} \
                or name == "Snakefile":
            if path.is_file() and path.name != Path(__file__).name:
                files.append(path)
    return files


def test_no_text_points_to_papers_or_reference_folders():
    """Sources are cited by author, year and section; the repository has no papers/ or reference/ folder."""
    assert not (ROOT / "papers").exists() and not (ROOT / "reference").exists()
    files = _tracked_text_files()
    assert len(files) > 100  # the scan sees the repository
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in files
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if FOLDER_PATH.search(line)]
    assert not hits, "\n".join(hits)


def test_folder_path_pattern_catches_what_it_must():
    assert FOLDER_PATH.search("see papers/tlapale2010.txt") and FOLDER_PATH.search("(reference/motion.md)")
    assert FOLDER_PATH.search("`../papers/x`")
    assert not FOLDER_PATH.search("https://docs.python.org/3/reference/datamodel.html")
    assert not FOLDER_PATH.search("the papers' symbols, reference values")


def test_every_slurm_command_is_the_one_command():
    """README, the profile, its README and the default profile's comment give the same command."""
    places = [ROOT / "README.md", ROOT / "profiles/slurm/README.md", ROOT / "profiles/slurm/config.yaml",
              ROOT / "profiles/default/config.yaml", *sorted((ROOT / "docs").glob("*.md"))]
    lines = [(p, line) for p in places for line in p.read_text().splitlines() if "--profile profiles/slurm" in line]
    assert len(lines) >= 4
    for path, line in lines:
        assert SLURM_COMMAND in line, f"{path.relative_to(ROOT)}: {line.strip()}"
    test = (ROOT / "tests/test_slurm.py").read_text()
    assert '"--profile", "profiles/slurm",\n        "--workflow-profile", "none",' in test


@pytest.mark.workflow
def test_readme_slurm_command_leaves_the_default_profile_out(harness, tmp_path):
    """Dry run of the README's command: only profiles/slurm sets the defaults (Snakemake 9.27.1)."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"`(snakemake all --profile profiles/slurm[^`]*)`", readme).group(1)
    work = harness.copy(tmp_path / "wf", harness.tiny_config())
    out = harness.output(harness.run(work, *shlex.split(command)[1:], "-n"))
    assert "Using profile profiles/slurm for setting default command line arguments" in out
    assert "workflow specific profile" not in out
    # without the flag, profiles/default is loaded too (and would override the cluster profile per key)
    out = harness.output(harness.run(work, "all", "--profile", "profiles/slurm", "-n"))
    assert "workflow specific profile profiles/default" in out


def test_readme_lists_every_deep_builtin_with_its_track_and_kind():
    """Each built-in built once per job from weights (a factory) and each map-output built-in has a row
    ``| track | `name` | kind |`` in the README's table of deep built-ins; every row names a built-in."""
    from psybench.registry import list_algorithms

    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| track | built-in | kind |"):]
    table = table[:table.index("\n\n")]
    rows = {}
    for line in table.splitlines()[2:]:
        track, names, kind = (c.strip() for c in line.strip("|").split("|")[:3])
        rows.update({name: (track, kind) for name in re.findall(r"`(\w+)`", names)})
    deep = {a.name: (a.track, a.kind) for a in list_algorithms() if a.source == "builtin" and (a.factory or
                                                                                               a.kind == "map")}
    assert {"raft_small", "raft_large", "cnn", "centre_bias", "representation_surprise"} <= set(deep)
    assert rows == deep
