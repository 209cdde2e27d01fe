"""Render one run of a generated scene and write it as an IntPhys movie directory.

RGB frames, a z-buffer depth in mm and one mask gray value per element (listed
in ``masks_grayscale``, evenly spaced from 0 to 255 as in the V1.0 example), and
a status.json in either variant (Riochet et al. 2018, IntPhys V1.0, "Metadata").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from psybench.intphys.generate.scenes import (
    _HORIZON,
    _SKY,
    NEAR_MM,
    _background,
    _object_state,
    _occluder_fraction,
    _Scene,
)

__all__: list[str] = []


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
            fstat[name] = (
                f"{(occ['x'] - W / 2) * mm_per_px:.4f} {z:.4f} {(H - f * occ['bottom']) * mm_per_px:.4f} 0 0 0"
            )
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
            variant, depth_encoding, frame_grays=None) -> dict[str, Any] | None:
    """status.json of one run in ``variant`` (None for ``"absent"``).

    ``frame_grays``: per frame ``{name: gray}`` when the gray values are reshuffled
    per frame (``"header"`` variant); default the static ``gray``.
    """
    W = scene.width
    common = {
        "floor": {"minx": -2000.0, "maxx": 2000.0, "miny": -1000.0, "maxy": 3000.0},
        "camera": "0 0 1000 0 0 0",
        "lights": {"light_1": "0 0 3000 0 0 0"},
    }
    conditions = {"visibility": visibility, "motion": motion, "n_objects": int(n_objects)}
    extra = {"depth_encoding": depth_encoding, "image_size": [scene.height, W]}
    if max_depth is not None:
        extra["max_depth"] = float(max_depth)
    if variant == "v1":  # V1.0 example: flat, masks_grayscale pairs
        return {"block": block_label, "possible": bool(possible), **common, **extra,
                "masks_grayscale": [[gray[nm], nm] for nm in names], **conditions, "frames": frames}
    if variant == "header":  # 2019 saver: per-frame {name: gray} in frames[t]["masks"]
        grays = frame_grays or [gray] * len(frames)
        header = {"block": block_label, "is_possible": bool(possible), **common, **extra, **conditions,
                  "nframes": len(frames)}
        return {"header": header, "frames": [{**f, "masks": {nm: int(g[nm]) for nm in names}}
                                             for f, g in zip(frames, grays)]}
    if variant == "header_masks":  # static {name: gray} in the header (the 2018 baselines' reader)
        header = {"block_name": block_label, "is_possible": bool(possible), **common, **extra,
                  "masks": {nm: gray[nm] for nm in names}}
        return {"header": header, "frames": frames}
    if variant == "header_only":  # the dev archive
        return {"header": {"is_possible": bool(possible)}}
    return None


def _write_movie(movie_dir: Path, rgb, depth_mm, masks, status: dict | None, *, depth_encoding: str,
                 max_depth: float | None = None, mask_dir: str = "masks") -> None:
    import cv2
    for sub in ("scene", "depth", mask_dir):
        (movie_dir / sub).mkdir(parents=True, exist_ok=True)
    if depth_encoding == "8bit":
        dimg = np.round(255.0 * depth_mm / max_depth).astype(np.uint8)
    else:
        dimg = (65535 - np.round(depth_mm)).astype(np.uint16)
    for t in range(rgb.shape[0]):
        k = f"{t + 1:03d}"
        cv2.imwrite(str(movie_dir / "scene" / f"scene_{k}.png"), cv2.cvtColor(rgb[t], cv2.COLOR_RGB2BGR))
        cv2.imwrite(str(movie_dir / "depth" / f"depth_{k}.png"), dimg[t])
        cv2.imwrite(str(movie_dir / mask_dir / f"{mask_dir}_{k}.png"), masks[t])
    if status is not None:
        with open(movie_dir / "status.json", "w") as fh:
            json.dump(status, fh, indent=1)


def _reshuffle_grays(masks: np.ndarray, names: list[str], gray: dict[str, int], rng) -> list[dict[str, int]]:
    """Permute the gray values of ``names`` in every frame, in place in ``masks``; per-frame {name: gray}."""
    values = np.array([gray[nm] for nm in names])
    out = []
    for t in range(masks.shape[0]):
        perm = values[rng.permutation(len(values))]
        lut = np.arange(256, dtype=np.uint8)
        lut[values] = perm
        masks[t] = lut[masks[t]]
        out.append({nm: int(v) for nm, v in zip(names, perm)})
    return out
