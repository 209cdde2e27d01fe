"""Whole shards encoded in one pass are the bytes zarr-python itself writes (zarr as the oracle)."""
import hashlib
import json

import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec

from psybench.io.filecheck import FileCheckError, check_files
from psybench.io.shard_codec import shard_encoder, shard_writer
from psybench.io.store import StoreError, StreamSpec, open_store, verify_store, write_store_stream


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "shape, dtype, chunk, shard",
    [
        ((7, 3, 5, 4, 3), np.uint8, 1, 3),    # scene-like: last shard holds one movie of three
        ((9, 3, 5, 4), np.float32, 2, 4),     # depth-like: last shard one partial chunk (padded with the fill)
        ((4, 2, 6, 6), np.uint8, 2, 4),       # one full shard
    ],
)
def test_shard_files_equal_zarr(tmp_path, shape, dtype, chunk, shard):
    rng = np.random.default_rng(0)
    data = (rng.integers(0, 5, shape) * 1000.5).astype(dtype)  # compressible, not constant
    arrays = {}
    for how in ("zarr", "direct"):
        g = zarr.open_group(str(tmp_path / f"{how}.zarr"), mode="w", zarr_format=3)
        arrays[how] = zarr.create_array(g.store, name="a", shape=shape, dtype=dtype, chunks=(chunk, *shape[1:]),
                                        shards=(shard, *shape[1:]), fill_value=0, config={"write_empty_chunks": True})
    write = shard_writer(arrays["direct"], tmp_path / "direct.zarr" / "a")
    for start in range(0, shape[0], shard):
        arrays["zarr"][start: start + shard] = data[start: start + shard]
        write(start, data[start: start + shard])
    ref, got = _files(tmp_path / "zarr.zarr" / "a" / "c"), _files(tmp_path / "direct.zarr" / "a" / "c")
    assert list(got) == list(ref) and len(got) == -(-shape[0] // shard)
    assert got == ref  # byte for byte: index, CRC32C and the zstd frames
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "direct.zarr" / "a"), mode="r")[:], data)


def test_other_codecs_are_left_to_zarr(tmp_path):
    g = zarr.open_group(str(tmp_path / "b.zarr"), mode="w", zarr_format=3)
    blosc = zarr.create_array(g.store, name="b", shape=(4, 3), dtype="u1", chunks=(1, 3), shards=(2, 3),
                              compressors=BloscCodec(cname="lz4"))
    unsharded = zarr.create_array(g.store, name="u", shape=(4, 3), dtype="u1", chunks=(1, 3))
    across = zarr.create_array(g.store, name="x", shape=(4, 6), dtype="u1", chunks=(1, 3), shards=(2, 6))
    assert shard_encoder(blosc) is None and shard_encoder(unsharded) is None and shard_encoder(across) is None
    enc = shard_encoder(zarr.create_array(g.store, name="ok", shape=(4, 3), dtype="u1", chunks=(1, 3),
                                          shards=(2, 3)))
    with pytest.raises(ValueError, match="does not fit"):
        enc(np.zeros((3, 3), np.uint8))


def test_stream_zero_copy_same_store(tmp_path):
    """Whole shards written from the caller's memory give the store the copying path gives, byte for byte."""
    data = np.random.default_rng(1).integers(0, 3, (10, 4, 6, 6)).astype(np.float32)
    spec = {"d": StreamSpec(data.shape, np.float32, ("movie", "t", "y", "x"), chunks=(1, 4, 6, 6),
                            shards=(4, 4, 6, 6))}
    blocks = [{"d": data[i: i + 4].copy()} for i in range(0, 10, 4)]  # 4, 4, 2: whole shards, last shorter
    write_store_stream(tmp_path / "copy.zarr", spec, iter(blocks), {"k": 1})
    write_store_stream(tmp_path / "borrow.zarr", spec, iter(blocks), {"k": 1}, zero_copy=True)
    ragged = [{"d": data[i: i + 3]} for i in range(0, 10, 3)]  # not unit-aligned: copied into units
    write_store_stream(tmp_path / "ragged.zarr", spec, iter(ragged), {"k": 1}, zero_copy=True)
    assert _files(tmp_path / "borrow.zarr") == _files(tmp_path / "copy.zarr") == _files(tmp_path / "ragged.zarr")
    np.testing.assert_array_equal(np.asarray(open_store(tmp_path / "borrow.zarr", deep=True)["d"]), data)


def test_manifest_hashed_from_memory_matches_disk_and_catches_a_flipped_byte(tmp_path):
    """Shard files are hashed from the writer's memory, not read back: the manifest still equals the disk
    (check_files re-hashes every file) and a byte flipped afterwards is reported, naming the file."""
    data = np.random.default_rng(2).integers(0, 4, (6, 3, 8, 8, 3)).astype(np.uint8)
    spec = {"s": StreamSpec(data.shape, np.uint8, ("movie", "t", "y", "x", "c"), chunks=(1, 3, 8, 8, 3),
                            shards=(2, 3, 8, 8, 3))}
    path = write_store_stream(tmp_path / "s.zarr", spec, iter([{"s": data[i: i + 2]} for i in range(0, 6, 2)]),
                              zero_copy=True)
    check_files(path)
    listed = json.loads((path / ".psybench-files" / "zarr.json").read_text())["attributes"]["files"]
    shard = path / "s" / "c" / "1" / "0" / "0" / "0" / "0"
    assert listed["s/c/1/0/0/0/0"]["sha256"] == hashlib.sha256(shard.read_bytes()).hexdigest()
    raw = bytearray(shard.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    shard.write_bytes(bytes(raw))
    with pytest.raises(FileCheckError, match=r"s/c/1/0/0/0/0 does not match its checksum"):
        check_files(path)
    with pytest.raises(StoreError, match=r"s/c/1/0/0/0/0"):
        verify_store(path)
