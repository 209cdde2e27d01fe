"""Scenes of generated IntPhys movies: conditions, objects, occluders and their motion.

Every parameter of a scene is drawn from a seeded generator; the critical
object's two states ``a`` and ``b`` implement the three blocks (O1 object
permanence, O2 shape constancy, O3 spatio-temporal continuity; Riochet et al.
2018, IntPhys V1.0, "Dev and Test"). See :mod:`psybench.intphys.generate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np

__all__ = ["BLOCKS", "VISIBILITIES", "MOTIONS", "N_OBJECTS", "dev_conditions"]

BLOCKS = ("O1", "O2", "O3")
VISIBILITIES = ("visible", "occluded")
MOTIONS = ("static", "dynamic_1", "dynamic_2")
N_OBJECTS = (1, 2, 3)

SKY_MM, WALL_MM, NEAR_MM = 10000.0, 4000.0, 1000.0
_HORIZON = 0.35  # back wall / floor boundary, fraction of the height
_SKY = 0.10  # sky strip at the top
_LANES = (0.25, 0.55, 0.85)  # object rows, fraction of the floor height
_AMP = 0.12  # motion amplitude (fraction of the width)
_SHIFT = 0.28  # O3 teleport distance (fraction of the width)


def dev_conditions(blocks=BLOCKS) -> list[tuple[str, str, int, str]]:
    """Conditions in index order within a block: (block, visibility, n_objects, motion)."""
    return [(b, v, n, m) for b in blocks for v, n, m in product(VISIBILITIES, N_OBJECTS, MOTIONS)]


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
    import cv2
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
    import cv2
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
