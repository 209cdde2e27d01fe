"""Shared artifacts: Snakemake's between-workflow output cache on stimuli and responses.

``cache: True`` on rules motion_stimuli and motion_responses (batches: every stimulus,
every stimulus of a model; their outputs are named, so that each store is its own cache
entry); a run with
``--cache`` and ``SNAKEMAKE_OUTPUT_CACHE=<dir>`` moves their outputs (Zarr
directories) into the cache, keyed by a provenance hash of script, params (which
include the code hash of the library modules, rules/motion.smk) and upstream
jobs. A second workflow in another directory, with the same config, fetches
them instead of computing them; a change of parameters or of library code gives
another key and misses.
"""

from __future__ import annotations

import os
import re
import stat

import pytest

pytestmark = pytest.mark.workflow

CACHED_RULES = ("motion_stimuli", "motion_responses")


def cached_run(harness, work, cache, *targets):
    # --cache takes optional rule names: give it a following option, then the targets
    env = harness.env(work, SNAKEMAKE_OUTPUT_CACHE=str(cache))
    return harness.run(work, "--cache", "--cores", "2", *targets, env=env)


def computed(proc, stage):
    """Stores of a motion stage computed by this run (then moved into the cache)."""
    out = proc.stdout + proc.stderr
    return sorted(set(re.findall(rf"Moving output file results/motion/{stage}/(\S+?\.zarr) to cache", out)))


def fetched(proc, stage):
    """Stores of a motion stage fetched from the cache (their entries symlinked) instead of computed."""
    out = proc.stdout + proc.stderr
    found = re.findall(rf"Symlinking output file results/motion/{stage}/(\S+?\.zarr)/zarr\.json from cache", out)
    return sorted(set(found))


@pytest.fixture(scope="module")
def first(harness, tmp_path_factory):
    """Workflow A fills the cache."""
    root = tmp_path_factory.mktemp("cache")
    cache = root / "cache"
    cache.mkdir()
    work = harness.copy(root / "a", harness.tiny_config())
    proc = cached_run(harness, work, cache, harness.table)
    return root, cache, work, proc


def test_first_workflow_stores_into_cache(first):
    root, cache, work, proc = first
    out = proc.stdout + proc.stderr
    stimuli = sorted((work / "results/motion/stimuli").glob("*.zarr"))
    responses = sorted((work / "results/motion/responses/hs").glob("*.zarr"))
    assert stimuli and len(responses) == len(stimuli)
    assert len(re.findall(r"Moving output file .* to cache", out)) == len(stimuli) + len(responses), out
    entries = sorted(p.name for p in cache.iterdir())
    assert len(entries) == len(stimuli) + len(responses) and all(e.endswith(".zarr") for e in entries)
    # A's outputs are now symlinks into the cache, and they still read as complete stores
    from psybench.io import verify_store

    assert all(p.is_symlink() for p in stimuli + responses)
    verify_store(responses[0], deep=True)
    # entries with the umask's modes (no write for others: it was 0777), one level each (no <e>/<e>)
    umask = os.umask(0o022)
    os.umask(umask)
    for entry in cache.iterdir():
        assert not (entry / entry.name).exists()
        for p in [entry, *entry.rglob("*")]:
            mode = stat.S_IMODE(p.stat().st_mode)
            assert mode == (0o777 if p.is_dir() else 0o666) & ~umask, (p, oct(mode))


def test_second_workflow_reuses_cache_without_recomputing(harness, first):
    root, cache, work_a, _ = first
    work_b = harness.copy(root / "b", harness.tiny_config())
    proc = cached_run(harness, work_b, cache, harness.table)
    out = proc.stdout + proc.stderr
    stimuli = sorted(p.name for p in (work_a / "results/motion/stimuli").glob("*.zarr"))
    # every stimulus and response came from the cache: none was computed again
    assert fetched(proc, "stimuli") == stimuli, out
    assert fetched(proc, "responses") == [f"hs/{s}" for s in stimuli], out
    assert computed(proc, "stimuli") == [] and computed(proc, "responses") == [], out
    assert all((work_b / "results/motion/stimuli" / s / "zarr.json").is_symlink() for s in stimuli)
    assert "Rule: motion_scores" in out  # downstream stages (not cached) did run here
    assert (work_b / harness.table).read_bytes() == (work_a / harness.table).read_bytes()
    from psybench.io import verify_store

    for store in (work_b / "results/motion/responses/hs").glob("*.zarr"):
        verify_store(store, deep=True)
    # fetching into B must not make A's results look out of date
    assert "Nothing to be done" in harness.output(harness.run(work_a, "-n", harness.table))


def test_parameter_change_misses_cache(harness, first):
    root, cache, work_a, _ = first
    cfg = harness.tiny_config()
    cfg["motion"]["diamonds"]["speed_deg_s"] = 9  # only the diamond stimulus changes
    work_c = harness.copy(root / "c", cfg)
    targets = [f"results/motion/stimuli/{p.name}" for p in sorted((work_a / "results/motion/stimuli").glob("*.zarr"))]
    proc = cached_run(harness, work_c, cache, *targets)
    # the stimuli are one batch job, cached under one key: the batch misses and is
    # rendered again, each stimulus still stored as its own cache entry
    assert computed(proc, "stimuli") == sorted(t.split("/")[-1] for t in targets)
    assert fetched(proc, "stimuli") == []
    assert (work_c / "results/motion/stimuli/diamond_cw_dir000.zarr/zarr.json").read_bytes() != (
        work_a / "results/motion/stimuli/diamond_cw_dir000.zarr/zarr.json").read_bytes()


def test_code_change_misses_cache(harness, first):
    root, cache, work_a, _ = first
    work_d = harness.copy(root / "d", harness.tiny_config())
    module = work_d / "psybench" / "motion" / "stimuli" / "geometry.py"
    module.write_text(module.read_text() + "\n# a change to the stimulus code\n")
    names = sorted(p.name for p in (work_a / "results/motion/stimuli").glob("*.zarr"))
    proc = cached_run(harness, work_d, cache, f"results/motion/stimuli/{names[0]}")
    out = proc.stdout + proc.stderr
    assert computed(proc, "stimuli") == names and fetched(proc, "stimuli") == [], out  # the whole batch
