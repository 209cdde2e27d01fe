"""Encode whole Zarr v3 shards in one pass, byte for byte as zarr-python writes them.

zarr-python (3.1) encodes a shard through its generic asynchronous pipeline: each
inner chunk is copied into a fresh buffer filled with the fill value before it is
compressed, so writing a shard of ``n`` bytes moves ~3 n bytes through memory
besides the compression itself. Writing IntPhys movies (66 MB each at the real
size), that cost as much CPU as compressing them. For a streamed array whose shards
are filled whole (:func:`psybench.io.store.write_store_stream`), this module
compresses each inner chunk straight from the caller's memory with the array's own
codec settings and lays the shard out as the Zarr v3 sharding codec specifies
(ZEP 0002, "Sharding codec": the encoded inner chunks one after the other, then
the index of ``(offset, nbytes)`` pairs as little-endian uint64 in chunk order,
followed by its CRC32C as a little-endian uint32). The bytes are identical to
zarr's (tests/test_shard_codec.py compares them), so any Zarr v3 reader opens the
store; an array whose codecs are not the plain ``bytes`` + ``zstd`` chain this
module knows is left to zarr (:func:`shard_encoder` returns None).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import google_crc32c
import numpy as np
from numcodecs import Zstd
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, ShardingCodecIndexLocation, ZstdCodec

__all__ = ["shard_encoder", "shard_writer"]

_LITTLE = ("little", None)


def _is_little_bytes(codec) -> bool:
    return isinstance(codec, BytesCodec) and (codec.endian is None or codec.endian.value in _LITTLE)


def shard_encoder(arr) -> Callable[[np.ndarray], bytes] | None:
    """The shard encoder of a zarr array sharded along its first axis, or None.

    Parameters
    ----------
    arr : zarr.Array
        A Zarr v3 array with one sharding codec whose inner codecs are ``bytes``
        (little-endian) and ``zstd``, and whose index is ``bytes`` + ``crc32c`` at
        the end (zarr-python's defaults); chunks and shards span every axis but the
        first.

    Returns
    -------
    callable or None
        ``encode(slab) -> bytes``: the shard file holding ``slab``, ndarray of shape
        ``(rows, *arr.shape[1:])`` in C order, ``rows`` at most the shard's first
        extent (a last, partial shard: chunks past the data are absent, a partial
        chunk is padded with the fill value, as zarr does). None when the array's
        codecs differ (the caller then writes through zarr).
    """
    codecs = arr.metadata.codecs
    if len(codecs) != 1 or not isinstance(codecs[0], ShardingCodec):
        return None
    sc = codecs[0]
    inner, index = sc.codecs, sc.index_codecs
    if (sc.index_location != ShardingCodecIndexLocation.end or len(inner) != 2 or not _is_little_bytes(inner[0])
            or not isinstance(inner[1], ZstdCodec) or len(index) != 2 or not _is_little_bytes(index[0])
            or not isinstance(index[1], Crc32cCodec)):
        return None
    chunk = tuple(sc.chunk_shape)
    shard = tuple(arr.shards)
    if chunk[1:] != tuple(arr.shape[1:]) or shard[1:] != chunk[1:]:
        return None
    dtype = np.dtype(arr.dtype).newbyteorder("<")
    fill = arr.metadata.fill_value
    zstd = Zstd(level=inner[1].level, checksum=inner[1].checksum)  # what zarr's ZstdCodec calls
    k, per_shard = chunk[0], shard[0] // chunk[0]

    def encode(slab: np.ndarray) -> bytes:
        slab = np.ascontiguousarray(slab, dtype=dtype)
        rows = slab.shape[0]
        if not 0 < rows <= shard[0] or slab.shape[1:] != chunk[1:]:
            raise ValueError(f"shard slab of shape {slab.shape} does not fit shards of {shard}")
        parts, offsets = [], np.full((per_shard, 2), np.iinfo(np.uint64).max, dtype="<u8")
        pos = 0
        for c in range(-(-rows // k)):
            block = slab[c * k: (c + 1) * k]
            if block.shape[0] < k:  # the array's last chunk: zarr pads it to the chunk shape with the fill value
                pad = np.full((k - block.shape[0],) + block.shape[1:], fill, dtype=dtype)
                block = np.concatenate([block, pad])
            enc = zstd.encode(block)
            parts.append(enc)
            offsets[c] = (pos, len(enc))
            pos += len(enc)
        idx = offsets.tobytes()
        parts.append(idx)
        parts.append(google_crc32c.value(idx).to_bytes(4, "little"))
        return b"".join(parts)

    return encode


def shard_writer(arr, array_dir) -> Callable[[int, np.ndarray], tuple[str, str]] | None:
    """``write(start, slab) -> (key, sha256)``: the shard file of rows ``start...`` of ``arr``, or None.

    ``start`` is a multiple of the shard's first extent; the file, under
    ``array_dir``, is the one zarr would write for ``arr[start: start + len(slab)] =
    slab`` (its chunk key, its bytes), written in one call. Returns its key
    (relative to ``array_dir``) and the SHA-256 of the bytes written, hashed from
    memory (:func:`psybench.io.filecheck.record_files` ``known``). None when
    :func:`shard_encoder` is.
    """
    encode = shard_encoder(arr)
    if encode is None:
        return None
    rows, rest = arr.shards[0], (0,) * (len(arr.shape) - 1)

    def write(start: int, slab: np.ndarray) -> tuple[str, str]:
        key = arr.metadata.encode_chunk_key((start // rows, *rest))
        path = Path(array_dir) / key
        path.parent.mkdir(parents=True, exist_ok=True)
        data = encode(slab)
        path.write_bytes(data)
        return key, hashlib.sha256(data).hexdigest()

    return write
