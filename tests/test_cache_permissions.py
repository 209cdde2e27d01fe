"""The shared output cache is written with the user's umask (group-shared with its folder), one level per entry."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest

from psybench.io.cache import cache_modes


@pytest.mark.parametrize(("umask", "shared", "expected"), [
    (0o022, False, (0o644, 0o755)),
    (0o077, False, (0o600, 0o700)),
    (0o022, True, (0o664, 0o775)),  # a team's cache folder (chmod 2775): the group may replace entries
    (0o000, False, (0o664, 0o775)),  # others never write, whatever the umask
])
def test_modes_follow_umask_and_shared_group(tmp_path, umask, shared, expected):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o2775 if shared else 0o755)
    assert cache_modes(cache, umask) == expected


def _modes(root):
    return {p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    from psybench.io.cache import UmaskOutputFileCache

    location = tmp_path / "cache"
    location.mkdir()
    monkeypatch.setenv("SNAKEMAKE_OUTPUT_CACHE", str(location))
    old = os.umask(0o027)
    try:
        yield UmaskOutputFileCache(), location
    finally:
        os.umask(old)


def _store(cache, output, entry):
    async def pairs(job):
        return [(output, entry)]

    cache.get_outputfiles_and_cachefiles = pairs
    asyncio.run(cache.store(None))


def _output(path, text):
    (path / "x" / "c").mkdir(parents=True)
    (path / "zarr.json").write_text(text)
    (path / "x" / "c" / "0").write_bytes(b"\0" * 8)
    return path


def test_entries_get_umask_modes_one_level(tmp_path, cache):
    cache, location = cache
    output = _output(tmp_path / "w" / "a.zarr", "{}")
    _store(cache, output, location / "abc123.zarr")
    entry = location / "abc123.zarr"
    assert sorted(p.name for p in location.iterdir()) == ["abc123.zarr"]
    assert not (entry / "abc123.zarr").exists() and (entry / "zarr.json").read_text() == "{}"
    modes = _modes(entry)
    assert modes["."] == 0o750 and modes["x"] == 0o750 and modes["x/c/0"] == 0o640 and modes["zarr.json"] == 0o640
    assert output.is_symlink() and output.resolve() == entry.resolve()


def test_entry_stored_meanwhile_is_kept_not_nested(tmp_path, cache):
    cache, location = cache
    first = _output(tmp_path / "w1" / "a.zarr", '{"run": 1}')
    second = _output(tmp_path / "w2" / "a.zarr", '{"run": 1}')
    _store(cache, first, location / "abc123.zarr")
    _store(cache, second, location / "abc123.zarr")  # a second run stored the same job at the same time
    entry = location / "abc123.zarr"
    assert sorted(p.name for p in entry.iterdir()) == ["x", "zarr.json"]  # no abc123.zarr inside
    assert second.is_symlink() and second.resolve() == entry.resolve()
    assert [p.name for p in location.iterdir()] == ["abc123.zarr"]  # no temporaries left
