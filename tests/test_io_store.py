import json
import os
from pathlib import Path

import dask.array as da
import numpy as np
import pytest
import xarray as xr

from psybench.io import (
    ArraySpec,
    StoreError,
    StreamSpec,
    open_store,
    read_table,
    verify_store,
    write_store,
    write_store_stream,
    write_table,
)
from psybench.io.integrity import array_digest


@pytest.fixture
def data():
    return np.random.default_rng(0).random((23, 16, 12, 2)).astype("float32")


def test_roundtrip_dask_dims_and_attrs(tmp_path, data):
    src = da.from_array(data, chunks=(5, 16, 12, 2))
    path = write_store(
        tmp_path / "a.zarr",
        {"flow": ArraySpec(src, ("t", "y", "x", "component"), chunks=(4, 16, 12, 2), attrs={"units": "px/frame"})},
        {"display": {"px_per_deg": 8.0}, "code_hash": "abc"},
    )
    store = open_store(path, deep=True)
    np.testing.assert_array_equal(store["flow"].compute(), data)
    assert store.dims["flow"] == ("t", "y", "x", "component")
    assert store.array_attrs["flow"]["units"] == "px/frame"
    assert store.attrs["code_hash"] == "abc"
    assert store["flow"].chunks[0][0] == 4  # read chunked along time like storage
    ds = xr.open_zarr(path, consolidated=False)
    assert ds["flow"].dims == ("t", "y", "x", "component")
    meta = json.loads((path / "zarr.json").read_text())
    assert meta["attributes"]["psybench"]["complete"] is True


def test_stream_and_dask_writers_agree(tmp_path, data):
    a = write_store(tmp_path / "a.zarr", {"x": ArraySpec(data, ("t", "y", "x", "c"), chunks=(6, 16, 12, 2))})
    blocks = ({"x": data[i:i + 5]} for i in range(0, len(data), 5))
    spec = StreamSpec(data.shape, "float32", ("t", "y", "x", "c"), chunks=(6, 16, 12, 2))
    b = write_store_stream(tmp_path / "b.zarr", {"x": spec}, blocks)
    da_, db_ = open_store(a), open_store(b)
    assert array_digest(da_.attrs["psybench"]["arrays"]["x"]) == array_digest(db_.attrs["psybench"]["arrays"]["x"])
    np.testing.assert_array_equal(db_["x"].compute(), data)


def test_identical_inputs_give_identical_bytes(tmp_path, data):
    spec = ArraySpec(data, ("t", "y", "x", "c"))
    paths = [write_store(tmp_path / f"{i}.zarr", {"x": spec}, {"p": 1}) for i in range(2)]
    files = sorted(p.relative_to(paths[0]) for p in paths[0].rglob("*") if p.is_file())
    assert files
    for f in files:
        assert (paths[0] / f).read_bytes() == (paths[1] / f).read_bytes(), f


def test_blocks_in_memory_and_streamed_give_identical_bytes(tmp_path, data):
    """A list of blocks is written without writer threads (psybench._futures.InlineExecutor): the same files."""
    spec = {"x": StreamSpec(data.shape, "float32", ("t", "y", "x", "c"), chunks=(6, 16, 12, 2)),
            "m": StreamSpec(data.shape[:1], "float64", ("t",))}
    blocks = [{"x": data[i:i + 5], "m": data[i:i + 5, 0, 0, 0].astype(float)} for i in range(0, len(data), 5)]
    listed = write_store_stream(tmp_path / "listed.zarr", spec, blocks, {"p": 1})
    streamed = write_store_stream(tmp_path / "streamed.zarr", spec, iter(blocks), {"p": 1})
    files = sorted(p.relative_to(listed) for p in listed.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(streamed) for p in streamed.rglob("*") if p.is_file())
    for f in files:
        assert (listed / f).read_bytes() == (streamed / f).read_bytes(), f


def test_inline_executor_hands_back_results_and_errors():
    from psybench._futures import InlineExecutor

    with InlineExecutor() as ex:
        assert ex.submit(divmod, 7, 2).result() == (3, 1)
        with pytest.raises(ZeroDivisionError):
            ex.submit(divmod, 1, 0).result()


def test_failed_write_leaves_nothing_and_keeps_old_store(tmp_path, data):
    path = write_store(tmp_path / "a.zarr", {"x": ArraySpec(data, ("t", "y", "x", "c"))}, {"v": 1})

    def boom(block):
        raise RuntimeError("killed mid-write")

    bad = da.from_array(data, chunks=(5, 16, 12, 2)).map_blocks(boom, dtype="float32")
    with pytest.raises(RuntimeError, match="killed"):
        write_store(path, {"x": ArraySpec(bad, ("t", "y", "x", "c"))}, {"v": 2})
    assert open_store(path, deep=True).attrs["v"] == 1  # old store intact
    # no temporary left behind; the stat stamp beside the store is the old store's (psybench.io.filecheck)
    assert sorted(os.listdir(tmp_path)) == [".a.zarr.psybench-stat", "a.zarr"]


def test_stream_wrong_row_count_rejected(tmp_path, data):
    with pytest.raises(ValueError, match="expected 23"):
        spec = StreamSpec(data.shape, "float32", ("t", "y", "x", "c"))
        write_store_stream(tmp_path / "s.zarr", {"x": spec}, [{"x": data[:10]}])
    assert not (tmp_path / "s.zarr").exists()


def _chunk_files(path: Path):
    return sorted(p for p in (path / "x" / "c").rglob("*") if p.is_file())


def test_truncated_store_detected(tmp_path, data):
    path = write_store(tmp_path / "a.zarr", {"x": ArraySpec(data, ("t", "y", "x", "c"), chunks=(5, 16, 12, 2))})
    _chunk_files(path)[-1].unlink()
    with pytest.raises(StoreError, match="truncated"):
        open_store(path)


def test_corrupted_chunk_detected_by_deep_check(tmp_path, data):
    path = write_store(tmp_path / "a.zarr", {"x": ArraySpec(data, ("t", "y", "x", "c"), chunks=(5, 16, 12, 2))})
    f = _chunk_files(path)[0]
    raw = bytearray(f.read_bytes())
    raw[-1] ^= 0xFF
    f.write_bytes(bytes(raw))
    verify_store(path, files=False)  # structure is fine (the file checksums differ)
    with pytest.raises(StoreError, match=str(path.name)):
        verify_store(path, deep=True)


def test_incomplete_store_detected(tmp_path):
    (tmp_path / "bad.zarr").mkdir()
    with pytest.raises(StoreError, match="not a Zarr v3 store"):
        open_store(tmp_path / "bad.zarr")
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "missing.zarr")


def test_zero_data_kept_as_chunks(tmp_path):
    zeros = np.zeros((8, 4, 4), "float32")
    path = write_store(tmp_path / "z.zarr", {"x": ArraySpec(zeros, ("t", "y", "x"), chunks=(2, 4, 4))})
    assert len(_chunk_files(path)) == 4
    open_store(path, deep=True)


def test_tables_csv_and_parquet(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"model": ["a", "b"], "error": [0.1, 1 / 3]})
    write_table(df, tmp_path / "t.csv")
    assert (tmp_path / "t.parquet").exists()
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.csv"), df)
    assert pd.read_csv(tmp_path / "t.csv")["error"][1] == 1 / 3  # full precision
    with pytest.raises(ValueError, match="must end in .csv"):
        write_table(df, tmp_path / "t.txt")


def test_several_arrays_in_one_store(tmp_path, data):
    path = write_store(
        tmp_path / "m.zarr",
        {
            "flow": ArraySpec(da.from_array(data, chunks=(5, 16, 12, 2)), ("t", "y", "x", "component")),
            "speed": ArraySpec(np.linalg.norm(data, axis=-1), ("t", "y", "x")),
            "scalar_series": ArraySpec(np.arange(7.0), ("t",)),
        },
    )
    store = open_store(path, deep=True)
    np.testing.assert_array_equal(store["scalar_series"].compute(), np.arange(7.0))
    np.testing.assert_allclose(store["speed"].compute(), np.linalg.norm(data, axis=-1))
    assert store.dims["speed"] == ("t", "y", "x")


def test_quarantine_moves_only_damaged_stores(tmp_path, data):
    from psybench.io import quarantine_damaged

    root = tmp_path / "results"
    good = write_store(root / "a" / "good.zarr", {"x": ArraySpec(data, ("t", "y", "x", "c"), chunks=(5, 16, 12, 2))})
    bad = write_store(root / "a" / "bad.zarr", {"x": ArraySpec(data, ("t", "y", "x", "c"), chunks=(5, 16, 12, 2))})
    _chunk_files(bad)[0].unlink()
    unfinished = root / "a" / "other.zarr.tmp-123"  # a writer still at work: not a store yet
    unfinished.mkdir()
    moved = quarantine_damaged(root)
    assert [p for p, _ in moved] == [bad]
    assert "truncated" in moved[0][1]
    assert not bad.exists() and (root / ".damaged" / "a" / "bad.zarr").is_dir()
    assert good.exists() and unfinished.exists()
    open_store(good, deep=True)
    assert quarantine_damaged(root) == []  # idempotent; .damaged itself is not scanned
