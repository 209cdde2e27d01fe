"""Compressors of psybench's stores.

Stores keep Zarr's default compressor (zstd) unless they name one of these. Large
float32 arrays written once per model and read once or twice (the motion responses'
``flow`` and ``p``, the feature stores of deep networks) use :data:`FLOAT_COMPRESSORS`:
Blosc-LZ4 (level 5) over the byte-shuffled values, which encodes and decodes several
times faster than zstd at about the same size on these arrays (figures in
benchmarks/README.md). Lossless: the arrays read back are the same.
"""

from __future__ import annotations

__all__ = ["FLOAT_COMPRESSORS"]

#: Zarr v3 compressors of large float32 arrays: Blosc-LZ4, level 5, byte shuffle of 4-byte items.
FLOAT_COMPRESSORS = (
    {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4,
                                        "blocksize": 0}},
)
