"""The training clip loader against a direct read of the train stores (oracle)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr

from psybench.intphys.clips import ClipLoader, clip_starts
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard
from psybench.io.tables import read_table


@pytest.fixture(scope="module")
def train_stores(tmp_path_factory):
    """Seven generated train movies (12 frames, 24 x 24 px) in two shards of 4 and 3."""
    root = tmp_path_factory.mktemp("clips")
    generate_intphys(root / "tree", "train", n_train=7, n_frames=12, height=24, width=24, seed=5)
    pairs = []
    for shard in (0, 1):
        store, table = root / f"shard_{shard}.zarr", root / f"shard_{shard}.csv"
        ingest_shard(root / "tree", "train", store, table, shard=shard, shard_size=4)
        pairs.append((store, table))
    generate_intphys(root / "tree", "dev", blocks=("O1",), n_frames=12, height=24, width=24)
    ingest_shard(root / "tree", "dev", root / "dev.zarr", root / "dev.csv", shard=0, shard_size=200)
    return pairs, (root / "dev.zarr", root / "dev.csv")


def _oracle(pairs, index, *, horizon, n_input, size):
    """Clips read straight from the Zarr arrays, masks binarised and block-averaged by hand."""
    inputs, targets = [], []
    for s, i, t in index:
        store, table = pairs[s]
        masks = zarr.open_group(str(store), mode="r")["masks"][i]  # (T, H, W) uint8
        names = json.loads(read_table(table)["masks_grayscale"].iloc[i])
        planes = []
        for kind in ("object", "occluder"):
            values = [v for v, n in names if n.startswith(kind)]
            planes.append(np.isin(masks, values).astype(np.float64))
        x = np.stack(planes, axis=1)  # (T, 2, H, W)
        f = x.shape[-1] // size  # integer factor: INTER_AREA is the block mean
        x = x.reshape(x.shape[0], 2, size, f, size, f).mean(axis=(3, 5))
        inputs.append(x[t : t + n_input].reshape(-1, size, size))
        targets.append(x[t + n_input - 1 + horizon])
    return np.stack(inputs), np.stack(targets)


def test_batches_match_a_direct_read_of_the_stores(train_stores):
    pairs, _ = train_stores
    loader = ClipLoader(pairs, horizon=5, n_input=2, size=12, batch_size=5, seed=1, window=3)
    assert loader.n_clips == 7 * (12 - 5 - 1) and len(loader) == -(-42 // 5)
    seen, covered = [], 0.0
    for batch in loader.batches(epoch=0):
        assert batch.inputs.dtype == np.float32 and batch.inputs.shape[1:] == (4, 12, 12)
        assert batch.targets.shape[1:] == (2, 12, 12)
        want_in, want_out = _oracle(pairs, batch.index, horizon=5, n_input=2, size=12)
        np.testing.assert_allclose(batch.inputs, want_in, atol=1e-6)
        np.testing.assert_allclose(batch.targets, want_out, atol=1e-6)
        seen.extend(map(tuple, batch.index))
        covered += float(batch.targets[:, 0].sum())
    assert covered > 0  # the object channel is not empty
    # every clip of every movie exactly once per epoch, and some masks are non-empty
    want = {(s, i, t) for s, n in ((0, 4), (1, 3)) for i in range(n) for t in range(6)}
    assert len(seen) == len(want) and set(seen) == want


def test_order_is_seeded_per_epoch_and_resumable(train_stores):
    pairs, _ = train_stores
    kw = dict(horizon=3, size=6, batch_size=4, window=2)
    a = [b.index for b in ClipLoader(pairs, seed=0, **kw).batches(epoch=0)]
    again = [b.index for b in ClipLoader(pairs, seed=0, **kw).batches(epoch=0)]
    other_epoch = [b.index for b in ClipLoader(pairs, seed=0, **kw).batches(epoch=1)]
    other_seed = [b.index for b in ClipLoader(pairs, seed=9, **kw).batches(epoch=0)]
    assert all(np.array_equal(x, y) for x, y in zip(a, again, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, other_epoch, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, other_seed, strict=True))
    # not in store order: shuffled across movies
    flat = np.concatenate(a)
    assert not np.array_equal(flat, flat[np.lexsort(flat.T[::-1])])
    loader = ClipLoader(pairs, seed=0, **kw)
    for k in (0, 1, 5, len(a) - 1, len(a)):
        resumed = list(loader.batches(epoch=0, start=k))
        assert len(resumed) == len(a) - k
        full = [b for b in ClipLoader(pairs, seed=0, **kw).batches(epoch=0)][k:]
        for x, y in zip(resumed, full, strict=True):
            assert np.array_equal(x.index, y.index) and np.array_equal(x.inputs, y.inputs)


def test_scene_channel_and_refusals(train_stores):
    pairs, dev = train_stores
    batch = next(ClipLoader(pairs[:1], channel="scene", horizon=1, size=24, batch_size=2).batches())
    s, i, t = batch.index[0]
    scene = zarr.open_group(str(pairs[0][0]), mode="r")["scene"][i]
    np.testing.assert_allclose(batch.targets[0], scene[t + 1].transpose(2, 0, 1) / 255.0, atol=1e-6)
    with pytest.raises(ValueError, match=r"dev\.zarr.*'dev' split"):
        ClipLoader([dev])
    with pytest.raises(ValueError, match="horizon 35 needs more than 35 frames; the movies have 12"):
        ClipLoader(pairs, horizon=35)
    with pytest.raises(ValueError, match="channel must be one of"):
        ClipLoader(pairs, channel="depth")
    assert list(clip_starts(10, horizon=5, n_input=1)) == [0, 1, 2, 3, 4]
