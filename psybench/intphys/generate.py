"""Generate movies in the IntPhys format, deterministically from a seed.

Layout (as in the IntPhys releases, papers/003 and reference/intphys.md)::

    <root>/train/<index:05d>/{scene,depth,masks}/<kind>_<001..NNN>.png + status.json
    <root>/<dev|test>/<block>/<index:04d>/<run 1..4>/{scene,depth,masks}/... + status.json

The scene is a 2-D rendering: a textured back wall and floor (and a strip of
sky), coloured disks and squares standing in "lanes" on the floor (one lane per
object, so objects never overlap each other), and, in the occluded condition, an
occluder screen that drops from the top in front of the critical event and is
lifted again. Depth is a z-buffer of the same scene in millimetres (sky 10 m,
back wall 4 m, floor 4 m at the horizon to 1 m at the bottom, disks bulge
towards the camera, occluders in front of everything). Masks hold one gray value
per element, listed in ``masks_grayscale`` as in the V1.0 example (evenly spaced
from 0 to 255).

Dev/test quadruplets (one per block x visibility x n_objects x motion x repeat)
share every scene parameter and differ only in the critical event at frame
``t_c = n_frames // 2``, with two states ``a`` and ``b`` of the critical object:

========  =======================  ==============================
block     state a                  state b
========  =======================  ==============================
O1        object present           object absent
O2        one shape (disk/square)  the other shape, same area
O3        trajectory A             trajectory A shifted by 0.28 W
========  =======================  ==============================

Possible runs keep one state throughout (``a a`` and ``b b``); impossible runs
switch at ``t_c`` (``a b`` and ``b a``). So over a quadruplet the possible and
impossible movies show the same frames in total (IntPhys' matched design).
``n_objects`` is the larger object count of the quadruplet (1, 2, 3): in O1 the
event changes 0 vs 1, 1 vs 2 or 2 vs 3 visible objects; in O2 and O3 it is the
number of objects in the scene. Motion: ``static``; ``dynamic_1`` = constant
velocity (0.24 W over the movie); ``dynamic_2`` = one back-and-forth
oscillation (amplitude 0.12 W). Runs are shuffled per quadruplet in dev (the
status.json says which are possible); in test runs 1-2 are possible and 3-4
impossible before a seeded shuffle too (as in the real release).

Two status.json variants (``status_variant``): ``"v1"`` is the flat V1.0 file
(``block``, ``possible``, ``floor``, ``camera``, ``lights``, ``max_depth``,
``masks_grayscale``, ``frames``); ``"header"`` is the later
``{"header": {...}, "frames": [...]}``. Two depth encodings
(``depth_encoding``): ``"8bit"`` = round(255 * depth / max_depth) with
``max_depth`` (mm) in status.json (V1.0), ``"16bit"`` = 65535 - depth in mm.
Both files carry the condition keys ``visibility``, ``motion``, ``n_objects``.
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import cv2
import numpy as np

__all__ = [
    "BLOCKS",
    "VISIBILITIES",
    "MOTIONS",
    "N_OBJECTS",
    "generate_intphys",
    "expected_movie_ids",
    "dev_conditions",
]

BLOCKS = ("O1", "O2", "O3")
VISIBILITIES = ("visible", "occluded")
MOTIONS = ("static", "dynamic_1", "dynamic_2")
N_OBJECTS = (1, 2, 3)
SPLITS = ("train", "dev", "test")

SKY_MM, WALL_MM, NEAR_MM = 10000.0, 4000.0, 1000.0
_HORIZON = 0.35  # back wall / floor boundary, fraction of the height
_SKY = 0.10  # sky strip at the top
_LANES = (0.25, 0.55, 0.85)  # object rows, fraction of the floor height
_AMP = 0.12  # motion amplitude (fraction of the width)
_SHIFT = 0.28  # O3 teleport distance (fraction of the width)
_SPLIT_CODE = {"train": 0, "dev": 1, "test": 2}


def dev_conditions(blocks=BLOCKS) -> list[tuple[str, str, int, str]]:
    """Conditions in index order within a block: (block, visibility, n_objects, motion)."""
    return [(b, v, n, m) for b in blocks for v, n, m in product(VISIBILITIES, N_OBJECTS, MOTIONS)]


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


@dataclass
class _Object:
    name: str
    lane_y: float  # px
    x0: float  # px, centre at t_c
    radius: float  # px
    shape: str  # "disk" | "square"
    color: tuple[int, int, int]
    depth: float  # mm at the centre
    sign: float = 1.0  # motion direction
    # state-dependent behaviour of the critical object
    critical: bool = False


@dataclass
class _Scene:
    height: int
    width: int
    n_frames: int
    motion: str
    objects: list[_Object]
    occluders: list[dict[str, float]] = field(default_factory=list)
    wall: np.ndarray | None = None  # (H, W, 3) uint8 background
    block: str = "O1"
    alt_shape: str = "square"
    shift: float = 0.0


def _x_at(scene: _Scene, obj: _Object, t: np.ndarray | float) -> np.ndarray | float:
    """Horizontal position (px) of ``obj`` at frame ``t`` in state ``a``."""
    T, W = scene.n_frames, scene.width
    tc = T // 2
    if scene.motion == "static":
        return obj.x0 + 0.0 * np.asarray(t, dtype=float)
    if scene.motion == "dynamic_1":
        return obj.x0 + obj.sign * 2 * _AMP * W * (np.asarray(t, dtype=float) - tc) / max(T - 1, 1)
    return obj.x0 + obj.sign * _AMP * W * np.sin(2 * np.pi * (np.asarray(t, dtype=float) - tc) / T)


def _max_speed(scene: _Scene) -> float:
    T, W = scene.n_frames, scene.width
    return {"static": 0.0, "dynamic_1": 2 * _AMP * W / max(T - 1, 1), "dynamic_2": _AMP * W * 2 * np.pi / T}[
        scene.motion
    ]


def _floor_depth(y: np.ndarray | float, H: int) -> np.ndarray | float:
    yh = _HORIZON * H
    return WALL_MM - (WALL_MM - NEAR_MM) * (np.asarray(y, dtype=float) - yh) / (H - yh)


def _background(rng: np.random.Generator, H: int, W: int) -> tuple[np.ndarray, np.ndarray]:
    """Textured sky/back wall/floor (RGB uint8) and its depth (mm)."""
    yy, xx = np.mgrid[0:H, 0:W].astype(float)
    noise = cv2.GaussianBlur(rng.normal(size=(H, W)).astype(np.float32), (0, 0), max(W / 64, 0.8))
    noise = noise / (np.abs(noise).max() + 1e-9)
    wall_c = rng.uniform(90, 170, size=3)
    floor_c = rng.uniform(60, 140, size=3)
    tile = max(W // 8, 2)
    checker = ((xx // tile + yy // tile) % 2)[..., None]
    img = np.empty((H, W, 3))
    img[:] = wall_c + 25 * noise[..., None]
    floor = yy >= _HORIZON * H
    img[floor] = (floor_c + 20 * checker + 15 * noise[..., None])[floor]
    sky = yy < _SKY * H
    img[sky] = np.array([150.0, 190.0, 235.0])
    depth = np.where(sky, SKY_MM, np.where(floor, _floor_depth(yy, H), WALL_MM))
    return np.clip(img, 0, 255).astype(np.uint8), depth.astype(np.float32)


def _color(rng: np.random.Generator) -> tuple[int, int, int]:
    hue = rng.uniform(0, 180)
    hsv = np.uint8([[[hue, rng.uniform(170, 255), rng.uniform(180, 255)]]])
    return tuple(int(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0])


def _make_objects(rng, n: int, H: int, W: int, motion: str, lanes=None) -> list[_Object]:
    lanes = sorted(rng.choice(len(_LANES), size=n, replace=False)) if lanes is None else lanes
    yh = _HORIZON * H
    radius = W * rng.uniform(0.06, 0.075)
    objs = []
    for k, lane in enumerate(lanes):
        y = yh + (H - yh) * _LANES[lane]
        objs.append(
            _Object(
                name=f"object_{k + 1}",
                lane_y=float(y),
                x0=float(W * rng.uniform(0.3, 0.7)),
                radius=float(radius),
                shape=str(rng.choice(["disk", "square"])),
                color=_color(rng),
                depth=float(_floor_depth(y, H)),
                sign=float(rng.choice([-1.0, 1.0])),
            )
        )
    return objs


def _occluder(scene: _Scene, x_centre: float, bottom: float, tc: int) -> dict[str, float]:
    T = scene.n_frames
    w = max(2, T // 6)
    d = max(1, T // 10)
    r = max(o.radius for o in scene.objects) if scene.objects else 0.06 * scene.width
    half = r + _max_speed(scene) * w + 1.0
    return {"x": float(x_centre), "half": float(half), "bottom": float(bottom), "down0": tc - w, "down1": tc + w - 1,
            "d": d}


def _occluder_fraction(occ: dict[str, float], t: int) -> float:
    """How far the occluder is lowered at frame ``t`` (0 = out of view, 1 = fully down)."""
    d = occ["d"]
    if occ["down0"] <= t <= occ["down1"]:
        return 1.0
    if occ["down0"] - d <= t < occ["down0"]:
        return (t - (occ["down0"] - d) + 1) / (d + 1)
    if occ["down1"] < t <= occ["down1"] + d:
        return 1.0 - (t - occ["down1"]) / (d + 1)
    return 0.0


def _test_scene(rng, block, visibility, n, motion, H, W, T) -> _Scene:
    bg, _ = _background(rng, H, W)
    objs = _make_objects(rng, n, H, W, motion)
    scene = _Scene(H, W, T, motion, objs, wall=bg, block=block)
    crit = objs[int(rng.integers(n))]
    crit.critical = True
    scene.alt_shape = "square" if crit.shape == "disk" else "disk"
    tc = T // 2
    if block == "O3":
        x_tc = float(_x_at(scene, crit, tc))
        scene.shift = _SHIFT * W * (1.0 if x_tc < W / 2 else -1.0)
    if visibility == "occluded":
        bottom = crit.lane_y + crit.radius + 2.0
        x_tc = float(_x_at(scene, crit, tc))
        scene.occluders.append(_occluder(scene, x_tc, bottom, tc))
        if block == "O3":
            scene.occluders.append(_occluder(scene, x_tc + scene.shift, bottom, tc))
    return scene


def _train_scene(rng, H, W, T) -> _Scene:
    bg, _ = _background(rng, H, W)
    n = int(rng.integers(1, 4))
    motion = str(rng.choice(MOTIONS))
    objs = _make_objects(rng, n, H, W, motion)
    scene = _Scene(H, W, T, motion, objs, wall=bg, block=str(rng.choice(BLOCKS)))
    if rng.random() < 0.5:
        o = objs[int(rng.integers(n))]
        tc = int(rng.integers(T // 4, 3 * T // 4 + 1))
        scene.occluders.append(_occluder(scene, float(_x_at(scene, o, tc)), o.lane_y + o.radius + 2.0, tc))
    return scene


def _object_state(scene: _Scene, obj: _Object, t: int, state: str) -> tuple[bool, float, str]:
    """(present, x, shape) of ``obj`` at frame ``t`` when the critical state is ``state``."""
    x = float(_x_at(scene, obj, t))
    if not obj.critical or state == "a":
        return True, x, obj.shape
    if scene.block == "O1":
        return False, x, obj.shape
    if scene.block == "O2":
        return True, x, scene.alt_shape
    return True, x + scene.shift, obj.shape


def _render(scene: _Scene, states: tuple[str, str], names: list[str], gray: dict[str, int]):
    """Render one run: RGB (T,H,W,3) uint8, depth (T,H,W) float32 mm, masks (T,H,W) uint8, frame status."""
    H, W, T = scene.height, scene.width, scene.n_frames
    tc = T // 2
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    yy += 0.5
    xx += 0.5
    _, bg_depth = _background(np.random.default_rng(0), H, W)  # depth does not depend on texture
    base_mask = np.where(yy < _SKY * H, gray["sky"], np.where(yy >= _HORIZON * H, gray["floor"], gray["backwall"]))
    rgb = np.empty((T, H, W, 3), np.uint8)
    depth = np.empty((T, H, W), np.float32)
    masks = np.empty((T, H, W), np.uint8)
    frames = []
    mm_per_px = 4000.0 / W
    for t in range(T):
        state = states[0] if t < tc else states[1]
        img = scene.wall.copy()
        dep = bg_depth.copy()
        msk = base_mask.astype(np.uint8)
        fstat: dict[str, str] = {}
        for obj in sorted(scene.objects, key=lambda o: -o.depth):
            present, x, shape = _object_state(scene, obj, t, state)
            if not present:
                continue
            r = obj.radius
            if shape == "disk":
                d2 = ((xx - x) ** 2 + (yy - obj.lane_y) ** 2) / r**2
                inside = d2 <= 1.0
                z = obj.depth - r * mm_per_px * np.sqrt(np.clip(1.0 - d2, 0, 1))
                shade = 0.75 + 0.25 * np.sqrt(np.clip(1.0 - d2, 0, 1))
            else:
                h = r * np.sqrt(np.pi) / 2  # same area as the disk
                inside = (np.abs(xx - x) <= h) & (np.abs(yy - obj.lane_y) <= h)
                z = np.full_like(xx, obj.depth - r * mm_per_px)
                shade = np.ones_like(xx)
            inside &= z < dep
            img[inside] = (np.array(obj.color)[None, :] * shade[inside][:, None]).astype(np.uint8)
            dep[inside] = z[inside]
            msk[inside] = gray[obj.name]
            fstat[obj.name] = f"{(x - W / 2) * mm_per_px:.4f} {obj.depth:.4f} {(H - obj.lane_y) * mm_per_px:.4f} 0 0 0"
        for k, occ in enumerate(scene.occluders):
            f = _occluder_fraction(occ, t)
            if f <= 0:
                continue
            name = f"occluder_{k + 1}"
            inside = (np.abs(xx - occ["x"]) <= occ["half"]) & (yy <= f * occ["bottom"])
            z = NEAR_MM * 0.8
            stripes = (((xx // max(W // 16, 1)) % 2) * 20 + 150)[inside]
            img[inside] = np.stack([stripes, stripes - 30, stripes - 60], axis=-1).astype(np.uint8)
            dep[inside] = z
            msk[inside] = gray[name]
            fstat[name] = f"{(occ['x'] - W / 2) * mm_per_px:.4f} {z:.4f} {(H - f * occ['bottom']) * mm_per_px:.4f} 0 0 0"
        rgb[t], depth[t], masks[t] = img, dep, msk
        frames.append(fstat)
    return rgb, depth, masks, frames


def _gray_values(scene: _Scene) -> tuple[list[str], dict[str, int]]:
    names = ["sky", "floor", "backwall"] + [o.name for o in scene.objects]
    names += [f"occluder_{k + 1}" for k in range(len(scene.occluders))]
    n = len(names)
    gray = {nm: int(round(255 * i / (n - 1))) for i, nm in enumerate(names)}
    return names, gray


def _status(scene, *, block_label, possible, visibility, n_objects, motion, names, gray, frames, max_depth,
            variant, depth_encoding) -> dict[str, Any]:
    W = scene.width
    common = {
        "floor": {"minx": -2000.0, "maxx": 2000.0, "miny": -1000.0, "maxy": 3000.0},
        "camera": "0 0 1000 0 0 0",
        "lights": {"light_1": "0 0 3000 0 0 0"},
        "masks_grayscale": [[gray[nm], nm] for nm in names],
        "visibility": visibility,
        "motion": motion,
        "n_objects": int(n_objects),
        "depth_encoding": depth_encoding,
        "image_size": [scene.height, W],
    }
    if max_depth is not None:
        common["max_depth"] = float(max_depth)
    if variant == "v1":
        return {"block": block_label, "possible": bool(possible), **common, "frames": frames}
    header = {"block": block_label, "is_possible": bool(possible), **common, "nframes": len(frames)}
    return {"header": header, "frames": frames}


def _write_movie(movie_dir: Path, rgb, depth_mm, masks, status: dict, *, depth_encoding: str) -> None:
    for sub in ("scene", "depth", "masks"):
        (movie_dir / sub).mkdir(parents=True, exist_ok=True)
    if depth_encoding == "8bit":
        dimg = np.round(255.0 * depth_mm / status["max_depth"] if "max_depth" in status
                        else 255.0 * depth_mm / status["header"]["max_depth"]).astype(np.uint8)
    else:
        dimg = (65535 - np.round(depth_mm)).astype(np.uint16)
    for t in range(rgb.shape[0]):
        k = f"{t + 1:03d}"
        cv2.imwrite(str(movie_dir / "scene" / f"scene_{k}.png"), cv2.cvtColor(rgb[t], cv2.COLOR_RGB2BGR))
        cv2.imwrite(str(movie_dir / "depth" / f"depth_{k}.png"), dimg[t])
        cv2.imwrite(str(movie_dir / "masks" / f"masks_{k}.png"), masks[t])
    with open(movie_dir / "status.json", "w") as fh:
        json.dump(status, fh, indent=1)


def _movie_jobs(split, *, blocks, per_condition, n_train, seed, H, W, T, skeleton=False):
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
                for run, k in enumerate(order, start=1):
                    sa, sb, possible = kinds[k]
                    yield (f"{block}/{index:04d}/{run}", scene, (sa, sb),
                           {"block": block, "possible": possible, "visibility": vis, "n_objects": n,
                            "motion": motion})


def _skeleton_status(meta: dict, variant: str) -> dict:
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
    status_variant : {"v1", "header"}
        Flat V1.0 status.json, or the later ``{"header": ..., "frames": ...}``.
    depth_encoding : {"8bit", "16bit"}
        8-bit scaled by ``max_depth`` (V1.0) or 16-bit ``65535 - mm``.
    skeleton : bool
        Only directories and a minimal status.json (no frames, no rendering):
        fast enough for 15k-movie planning tests.
    threads : int
        Threads writing PNGs (cv2 releases the GIL).

    Returns
    -------
    pathlib.Path
        ``root/<split>``.
    """
    _check_split(split)
    if status_variant not in ("v1", "header"):
        raise ValueError(f"status_variant {status_variant!r} must be 'v1' or 'header'")
    if depth_encoding not in ("8bit", "16bit"):
        raise ValueError(f"depth_encoding {depth_encoding!r} must be '8bit' or '16bit'")
    bad = [b for b in blocks if b not in BLOCKS]
    if bad:
        raise ValueError(f"blocks {bad} are not IntPhys blocks {BLOCKS}")
    if height < 16 or width < 16 or n_frames < 8:
        raise ValueError(f"frame size {height}x{width} and n_frames {n_frames} must be at least 16x16 and 8")
    final = Path(root) / split
    tmp = final.with_name(f"{split}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        jobs = _movie_jobs(split, blocks=tuple(blocks), per_condition=per_condition, n_train=n_train, seed=seed,
                           H=height, W=width, T=n_frames, skeleton=skeleton)
        if skeleton:
            for rel, _scene, _states, meta in jobs:
                d = tmp / rel
                d.mkdir(parents=True)
                with open(d / "status.json", "w") as fh:
                    json.dump(_skeleton_status(meta, status_variant), fh)
        else:
            def work(job):
                rel, scene, states, meta = job
                names, gray = _gray_values(scene)
                rgb, depth, masks, frames = _render(scene, states, names, gray)
                max_depth = float(depth.max()) if depth_encoding == "8bit" else None
                status = _status(scene, block_label=meta["block"], possible=meta["possible"],
                                 visibility=meta["visibility"], n_objects=meta["n_objects"], motion=meta["motion"],
                                 names=names, gray=gray, frames=frames, max_depth=max_depth,
                                 variant=status_variant, depth_encoding=depth_encoding)
                _write_movie(tmp / rel, rgb, depth, masks, status, depth_encoding=depth_encoding)

            if threads > 1:
                with ThreadPoolExecutor(threads) as ex:
                    for _ in ex.map(work, jobs):
                        pass
            else:
                for job in jobs:
                    work(job)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
