"""Ingest IntPhys directory trees into sharded Zarr stores and a metadata table.

A split (``train``, ``dev`` or ``test``) is cut into *shards* of ``shard_size``
movies in sorted movie-id order; each shard becomes one store (one Snakemake
job), so the 15k training movies make a few hundred jobs, not 15k. A store holds

``scene`` : uint8, dims ``(movie, t, y, x, c)``, RGB (``cv2.imread`` gives BGR;
    channels are reversed once on decoding)
``depth`` : float32, dims ``(movie, t, y, x)``, distance in millimetres.
    16-bit PNGs: ``65535 - value`` (later releases). 8-bit PNGs (V1.0):
    ``value / 255 * max_depth`` with ``max_depth`` from status.json (quantisation
    step ``max_depth / 255``). The encoding is detected per movie from the PNG
    dtype and recorded in the metadata column ``depth_encoding``. 8-bit PNGs of a
    movie without status.json (the released test split, raw RGBD) have no
    ``max_depth``: their gray value is kept unscaled (``uint8_unscaled``), and the
    store says so: attribute ``depth_units`` and the depth array's ``units`` read
    ``"relative (8-bit, unscaled)"`` instead of ``"mm"`` (one unit per store).
``masks`` : uint8, dims ``(movie, t, y, x)``, gray values as in the PNGs (or, where
    the file's gray values change per frame, one stable id per name); their names
    are in the metadata column ``masks_grayscale`` (JSON; empty when the release
    names none).

The layout of each movie is detected and recorded in the metadata, never
guessed: ``status_variant`` (:data:`STATUS_VARIANTS`), ``frame_layout``,
``depth_encoding``, ``mask_ids``, ``folder`` and ``condition_source``
(status, folder, table or none).

Storage chunks hold whole movies (one real IntPhys movie, or as many small
ones as fill ~2 MB), and Zarr v3's sharding codec packs the chunks of ~256 MB
of movies into one file (4 real movies), so a store of ``shard_size`` movies
holds at most ``3 * ceil(shard_size / 4) + 4`` files at the real frame size
(3 x 13 + 4 = 43 for 50 movies, 860 per 1,000 movies; one file per movie and
array before: 3 x 50 + 4 = 154, 3,080 per 1,000). Movies are decoded by a pool of ``threads`` threads (OpenCV
releases the GIL) straight into three rotating sets of whole-shard buffers, which
:func:`psybench.io.store.write_store_stream` (``zero_copy``) compresses
(:mod:`psybench.io.shard_codec`: one pass, the bytes zarr writes), writes and hashes on a
writer thread per array while the next shard is decoded, so decoding, hashing and writing
overlap, no movie is copied on its way to the store, and memory is bounded by three shards
whatever the number of movies.
(``write_store`` with several Dask arrays mis-assigns its digests under dask 2026.8; the stream writer gives the same
manifest.) The store attribute ``movies`` lists the movie ids in axis
order. Movie ids are ``<block>/<index>/<run>`` for dev/test (the answer.txt
ids) and ``<index>`` for train.

Every problem with the input raises :class:`IntPhysFormatError` naming the file
or directory; :func:`psybench.io.store.write_store` then leaves no store behind.

Modules
-------
layout
    Movies of a split (directory listing) and their shards.
status
    status.json (every published variant) -> one metadata row per movie.
conditions
    A user's condition table for movies without conditions.
decode
    PNG frames -> scene (RGB), depth (mm), masks.
shard
    One shard -> Zarr store + metadata table; merging shard tables.
"""

from psybench._lazy import lazy_exports

# loaded on first use (psybench._lazy): the Snakefile needs the layout, not the decoders
_EXPORTS = {
    "read_condition_table": "psybench.intphys.ingest.conditions",
    **dict.fromkeys(["FrameLayout", "decode_movie", "frame_layout"], "psybench.intphys.ingest.decode"),
    **dict.fromkeys(["IntPhysFormatError", "Movie", "folder_conditions", "list_movies", "n_shards", "shard_movies"],
                    "psybench.intphys.ingest.layout"),
    **dict.fromkeys(["IntPhysConditionWarning", "ingest_shard", "merge_metadata"], "psybench.intphys.ingest.shard"),
    **dict.fromkeys(["STATUS_VARIANTS", "mask_names", "movie_metadata", "read_status", "tree_metadata"],
                    "psybench.intphys.ingest.status"),
}

__all__ = [
    "IntPhysFormatError",
    "IntPhysConditionWarning",
    "Movie",
    "FrameLayout",
    "frame_layout",
    "folder_conditions",
    "read_condition_table",
    "mask_names",
    "STATUS_VARIANTS",
    "list_movies",
    "shard_movies",
    "read_status",
    "movie_metadata",
    "tree_metadata",
    "decode_movie",
    "ingest_shard",
    "merge_metadata",
    "n_shards",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
