"""Write one split of a generated IntPhys tree, deterministically from a seed."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from psybench.intphys.generate.render import _gray_values, _render, _reshuffle_grays, _status, _write_movie
from psybench.intphys.generate.scenes import (
    BLOCKS,
    MOTIONS,
    N_OBJECTS,
    VISIBILITIES,
    _test_scene,
    _train_scene,
    dev_conditions,
)
from psybench.io.atomic import atomic_output
from psybench.io.inputs import record_listing

__all__ = ["SPLITS", "generate_intphys", "expected_movie_ids"]

SPLITS = ("train", "dev", "test")
_SPLIT_CODE = {"train": 0, "dev": 1, "test": 2}


def expected_movie_ids(split: str, *, blocks=BLOCKS, per_condition: int = 1, n_train: int = 0) -> list[str]:
    """Movie ids that :func:`generate_intphys` writes, without writing anything.

    Returns ``<index:05d>`` for train and ``<block>/<index:04d>/<run>`` for dev/test,
    in sorted order (the order of :func:`psybench.intphys.ingest.list_movies`).
    """
    _check_split(split)
    if split == "train":
        return [f"{i:05d}" for i in range(1, n_train + 1)]
    n_idx = len(VISIBILITIES) * len(N_OBJECTS) * len(MOTIONS) * per_condition
    return sorted(f"{b}/{i:04d}/{r}" for b in blocks for i in range(1, n_idx + 1) for r in range(1, 5))


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split {split!r} is not one of {SPLITS}")


def _movie_jobs(split, *, blocks, per_condition, n_train, seed, H, W, T, skeleton=False, descriptive=False):
    """Yield (relative dir, scene, states, meta) for every movie of ``split``, lazily per quadruplet.

    With ``skeleton`` no scene is built (``scene`` is None) and train metadata are
    placeholders: only the layout matters.
    """
    code = _SPLIT_CODE[split]
    if split == "train":
        for i in range(1, n_train + 1):
            if skeleton:
                yield (f"{i:05d}", None, ("a", "a"), {"block": f"block_{BLOCKS[i % 3]}_train", "possible": True,
                                                      "visibility": "unknown", "n_objects": -1, "motion": "unknown"})
                continue
            rng = np.random.default_rng([seed, code, 0, i])
            scene = _train_scene(rng, H, W, T)
            yield (f"{i:05d}", scene, ("a", "a"),
                   {"block": f"block_{scene.block}_train", "possible": True, "visibility":
                    "occluded" if scene.occluders else "visible", "n_objects": len(scene.objects),
                    "motion": scene.motion})
        return
    for bi, block in enumerate(BLOCKS):
        if block not in blocks:
            continue
        conds = dev_conditions((block,))
        index = 0
        for _, vis, n, motion in conds:
            for _rep in range(per_condition):
                index += 1
                rng = np.random.default_rng([seed, code, bi + 1, index])
                scene = None if skeleton else _test_scene(rng, block, vis, n, motion, H, W, T)
                kinds = [("a", "a", True), ("b", "b", True), ("a", "b", False), ("b", "a", False)]
                order = np.random.default_rng([seed, code, bi + 1, index, 1]).permutation(4)  # same with skeleton
                folder = f"{index:04d}_{block}_test_{vis}_{motion}_nobj{n}" if descriptive else f"{index:04d}"
                for run, k in enumerate(order, start=1):
                    sa, sb, possible = kinds[k]
                    yield (f"{block}/{folder}/{run}", scene, (sa, sb),
                           {"block": block, "possible": possible, "visibility": vis, "n_objects": n,
                            "motion": motion})


def _skeleton_status(meta: dict, variant: str) -> dict | None:
    if variant == "absent":
        return None
    if variant == "header_only":
        return {"header": {"is_possible": meta["possible"]}}
    if variant == "v1":
        return {"block": meta["block"], "possible": meta["possible"], "visibility": meta["visibility"],
                "motion": meta["motion"], "n_objects": meta["n_objects"]}
    return {"header": {"block": meta["block"], "is_possible": meta["possible"], "visibility": meta["visibility"],
                       "motion": meta["motion"], "n_objects": meta["n_objects"]}}


def generate_intphys(
    root: str | os.PathLike,
    split: str,
    *,
    seed: int = 0,
    blocks=BLOCKS,
    per_condition: int = 1,
    n_train: int = 16,
    height: int = 64,
    width: int = 64,
    n_frames: int = 20,
    status_variant: str = "v1",
    depth_encoding: str = "8bit",
    mask_layout: str = "masks",
    mask_ids: str = "static",
    quadruplet_names: str = "index",
    skeleton: bool = False,
    threads: int = 1,
) -> Path:
    """Write one split of an IntPhys-format tree under ``root``, deterministically.

    Parameters
    ----------
    root : path-like
        Dataset root; the split is written to ``root/<split>`` (built in a
        temporary sibling and renamed into place, so it is never half-written).
    split : {"train", "dev", "test"}
    seed : int
        Every scene parameter derives from (seed, split, block, index).
    blocks : sequence of {"O1", "O2", "O3"}
    per_condition : int
        Quadruplets per condition (18 conditions per block) in dev/test.
    n_train : int
        Number of (possible-only) training movies.
    height, width, n_frames : int
        Frame size in px and frames per movie (IntPhys: 288, 288, 100).
    status_variant : {"v1", "header", "header_masks", "header_only", "absent"}
        Flat V1.0 status.json; the 2019 ``{"header": ..., "frames": ...}`` with
        per-frame ``masks`` dicts; a header with a static ``masks`` dict and no
        condition keys; the dev archive's ``{"header": {"is_possible": ...}}``; or
        no status.json (the released test split). See
        :mod:`psybench.intphys.ingest.status` for the sources of each.
    depth_encoding : {"8bit", "16bit"}
        8-bit scaled by ``max_depth`` (V1.0) or 16-bit ``65535 - mm``.
    mask_layout : {"masks", "mask"}
        ``masks/masks_NNN.png`` (2019) or ``mask/mask_NNN.png`` (V1.0 saver).
    mask_ids : {"static", "per_frame"}
        ``per_frame`` reshuffles the gray values of the mask names in every frame
        (seeded; ``header`` variant only, whose frames name them).
    quadruplet_names : {"index", "descriptive"}
        ``0001`` or ``0001_O1_test_visible_static_nobj1`` (dev/test).
    skeleton : bool
        Only directories and a minimal status.json (no frames, no rendering):
        fast enough for 15k-movie planning tests.
    threads : int
        Threads writing PNGs (cv2 releases the GIL).

    Returns
    -------
    pathlib.Path
        ``root/<split>``; its file listing (path, size, modification time) is recorded
        in ``root/.<split>.listing.json`` (:func:`psybench.io.inputs.record_listing`).
    """
    _check_split(split)
    variants = ("v1", "header", "header_masks", "header_only", "absent")
    if status_variant not in variants:
        raise ValueError(f"status_variant {status_variant!r} must be one of {variants}")
    if mask_layout not in ("masks", "mask") or quadruplet_names not in ("index", "descriptive"):
        raise ValueError(f"mask_layout {mask_layout!r} must be masks|mask, quadruplet_names "
                         f"{quadruplet_names!r} index|descriptive")
    if mask_ids not in ("static", "per_frame") or (mask_ids == "per_frame" and status_variant != "header"):
        raise ValueError(f"mask_ids {mask_ids!r} must be static, or per_frame with status_variant 'header'")
    if depth_encoding == "8bit" and status_variant in ("header_only", "absent"):
        raise ValueError(f"8-bit depth needs max_depth in status.json; status_variant {status_variant!r} has none")
    if depth_encoding not in ("8bit", "16bit"):
        raise ValueError(f"depth_encoding {depth_encoding!r} must be '8bit' or '16bit'")
    bad = [b for b in blocks if b not in BLOCKS]
    if bad:
        raise ValueError(f"blocks {bad} are not IntPhys blocks {BLOCKS}")
    if height < 16 or width < 16 or n_frames < 8:
        raise ValueError(f"frame size {height}x{width} and n_frames {n_frames} must be at least 16x16 and 8")
    final = Path(root) / split
    with atomic_output(final, directory=True) as tmp:
        jobs = _movie_jobs(split, blocks=tuple(blocks), per_condition=per_condition, n_train=n_train, seed=seed,
                           H=height, W=width, T=n_frames, skeleton=skeleton,
                           descriptive=quadruplet_names == "descriptive")
        if skeleton:
            for rel, _scene, _states, meta in jobs:
                d = tmp / rel
                d.mkdir(parents=True)
                status = _skeleton_status(meta, status_variant)
                if status is not None:
                    with open(d / "status.json", "w") as fh:
                        json.dump(status, fh)
        else:
            def work(job):
                rel, scene, states, meta = job
                names, gray = _gray_values(scene)
                rgb, depth, masks, frames = _render(scene, states, names, gray)
                max_depth = float(depth.max()) if depth_encoding == "8bit" else None
                frame_grays = None
                if mask_ids == "per_frame":
                    rng = np.random.default_rng([seed, _SPLIT_CODE[split], 7, *map(ord, rel)])
                    frame_grays = _reshuffle_grays(masks, names, gray, rng)
                status = _status(scene, block_label=meta["block"], possible=meta["possible"],
                                 visibility=meta["visibility"], n_objects=meta["n_objects"], motion=meta["motion"],
                                 names=names, gray=gray, frames=frames, max_depth=max_depth,
                                 variant=status_variant, depth_encoding=depth_encoding, frame_grays=frame_grays)
                _write_movie(tmp / rel, rgb, depth, masks, status, depth_encoding=depth_encoding,
                             max_depth=max_depth, mask_dir=mask_layout)

            if threads > 1:
                with ThreadPoolExecutor(threads) as ex:
                    for _ in ex.map(work, jobs):
                        pass
            else:
                for job in jobs:
                    work(job)
    # a generated split is a directory output, up to date for Snakemake whatever it holds:
    # its listing lets the workflow notice a file edited, removed or added since (psybench.io.inputs)
    record_listing(final)
    return final
