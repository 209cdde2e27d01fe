"""Decode the PNG frames of IntPhys movies (scene, depth, masks).

``cv2.imread`` gives BGR; channels are reversed once on decoding. Depth is
converted to millimetres from either encoding: 16-bit ``65535 - value`` (later
releases) or 8-bit ``value / 255 * max_depth`` (V1.0; Riochet et al. 2018,
IntPhys V1.0, "Metadata"). The V1.0 test set is distributed as raw RGBD without
metadata (ibid., "Dev and Test"), so its 8-bit depth has no ``max_depth``: for
movies without status.json it is kept unscaled, the gray value 0-255 as a float
(:data:`RELATIVE_DEPTH_UNITS`; proportional to the distance, with a per-movie
factor that is not known), never guessed into millimetres.

Frame file layouts (:func:`frame_layout`, detected per movie and recorded in the
metadata column ``frame_layout``): ``masks/masks_NNN.png`` (the 2019 generator,
bootphon/intphys) or ``mask/mask_NNN.png`` (the uetorch saver of the V1.0 era,
``saver.lua``, and the 2018 baselines' loader); the frame number is zero-padded
to the width found in ``scene/`` (the uetorch saver pads to the digits of the
frame count: 3 for 100 frames).
"""

from __future__ import annotations

import os
import re
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from psybench.intphys.ingest.layout import IntPhysFormatError

__all__ = ["decode_movie", "FrameLayout", "frame_layout", "DEPTH_UNITS", "RELATIVE_DEPTH_UNITS"]

#: Units of decoded depth: millimetres, or the unscaled 8-bit gray value of a movie without max_depth.
DEPTH_UNITS = "mm"
RELATIVE_DEPTH_UNITS = "relative (8-bit, unscaled)"
#: ``depth_encoding`` -> units of the decoded depth.
ENCODING_UNITS = {"uint16_inverse_mm": DEPTH_UNITS, "uint8_max_depth": DEPTH_UNITS,
                  "uint8_unscaled": RELATIVE_DEPTH_UNITS}

_SCENE_RE = re.compile(r"^scene_(\d+)\.png$")


@dataclass(frozen=True)
class FrameLayout:
    """Where the frames of one movie are: the masks folder (``masks`` or ``mask``) and the number width."""

    mask_dir: str = "masks"
    digits: int = 3

    def path(self, movie_dir: Path, kind: str, t: int) -> Path:
        """Path of frame ``t`` (0-based) of ``kind`` in {"scene", "depth", "masks"}."""
        d = self.mask_dir if kind == "masks" else kind
        return movie_dir / d / f"{d}_{t + 1:0{self.digits}d}.png"

    @property
    def name(self) -> str:
        """``"masks/masks_NNN.png"`` or ``"mask/mask_NNN.png"`` (the metadata column ``frame_layout``)."""
        return f"{self.mask_dir}/{self.mask_dir}_{'N' * self.digits}.png"


def frame_layout(movie_dir: str | os.PathLike) -> tuple[FrameLayout, int]:
    """Detect the frame layout of one movie and count its frames (directory listing only).

    Raises
    ------
    IntPhysFormatError
        Naming the movie directory when ``scene/scene_N.png`` frames, or a
        ``masks/`` or ``mask/`` folder, are missing.
    """
    d = Path(movie_dir)
    scene = d / "scene"
    if not scene.is_dir():
        raise IntPhysFormatError(f"missing scene directory {scene}")
    with os.scandir(scene) as it:
        numbers = [m.group(1) for e in it if (m := _SCENE_RE.match(e.name))]
    if not numbers:
        raise IntPhysFormatError(f"scene directory {scene} holds no scene_NNN.png frames")
    widths = {len(n) for n in numbers}
    if len(widths) != 1:
        raise IntPhysFormatError(f"scene directory {scene} mixes frame numbers of widths {sorted(widths)}")
    for mask_dir in ("masks", "mask"):
        if (d / mask_dir).is_dir():
            return FrameLayout(mask_dir, widths.pop()), len(numbers)
    raise IntPhysFormatError(
        f"{d} has no masks folder: expected masks/masks_NNN.png (2019 releases) or mask/mask_NNN.png (V1.0)"
    )


def _imread(path: Path, flags: int) -> np.ndarray:
    # not cv2.imread(path, dst, flags) into the movie buffer: OpenCV 5 then reports neither a missing nor a
    # corrupt file (dst is returned unchanged), and the copy it would save costs ~2 % of the decoding
    img = cv2.imread(str(path), flags)
    if img is None:
        if not path.exists():
            raise IntPhysFormatError(f"missing frame {path}")
        raise IntPhysFormatError(f"frame {path} cannot be decoded as an image (corrupt or not a PNG)")
    return img


def decode_movie(
    movie_dir: str | os.PathLike, n_frames: int, height: int, width: int, *, max_depth: float = float("nan"),
    layout: FrameLayout | None = None, mask_luts: np.ndarray | None = None,
    out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, unscaled_8bit: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Decode every frame of one movie.

    Parameters
    ----------
    movie_dir : path-like
    n_frames, height, width : int
        Expected shape; a frame of another size raises.
    max_depth : float
        ``max_depth`` (mm) from status.json, needed for 8-bit depth.
    layout : FrameLayout, optional
        Frame file layout (default: detected, :func:`frame_layout`).
    mask_luts : ndarray, shape (T, 256), uint8, optional
        Per-frame lookup tables to stable mask ids
        (:func:`psybench.intphys.ingest.status.mask_names`).
    out : (scene, depth, masks) arrays, optional
        Arrays of the shapes and dtypes below to decode into (reused buffers:
        no fresh memory per movie).
    unscaled_8bit : bool
        8-bit depth without ``max_depth`` is kept unscaled (the movie has no
        status.json, as in the released test set) instead of raising.

    Returns
    -------
    scene : ndarray, shape (T, H, W, 3), uint8, RGB
    depth : ndarray, shape (T, H, W), float32, mm (relative for ``uint8_unscaled``)
    masks : ndarray, shape (T, H, W), uint8
    depth_encoding : {"uint16_inverse_mm", "uint8_max_depth", "uint8_unscaled"}
    """
    d = Path(movie_dir)
    layout = layout or frame_layout(d)[0]
    if mask_luts is not None and len(mask_luts) != n_frames:
        raise IntPhysFormatError(
            f"{d / 'status.json'} names masks for {len(mask_luts)} frames, the movie has {n_frames}"
        )
    if out is None:
        out = _movie_buffers(n_frames, height, width)
    scene, depth, masks = out
    encoding = None
    for t in range(n_frames):
        p = layout.path(d, "scene", t)
        img = _imread(p, cv2.IMREAD_COLOR_RGB)  # decoded to RGB by libpng's reader: no BGR copy to convert
        if img.shape != (height, width, 3):
            raise IntPhysFormatError(f"frame {p} has shape {img.shape}, expected {(height, width, 3)}")
        scene[t] = img
        p = layout.path(d, "depth", t)
        dimg = _imread(p, cv2.IMREAD_UNCHANGED)
        if dimg.ndim == 3:
            dimg = dimg[..., 0]
        if dimg.shape != (height, width):
            raise IntPhysFormatError(f"frame {p} has shape {dimg.shape}, expected {(height, width)}")
        if dimg.dtype == np.uint16:
            enc = "uint16_inverse_mm"
            np.subtract(65535.0, dimg, out=depth[t], dtype=np.float32)
        elif dimg.dtype == np.uint8 and np.isfinite(max_depth):
            enc = "uint8_max_depth"
            np.multiply(dimg, np.float32(max_depth / 255.0), out=depth[t], dtype=np.float32)
        elif dimg.dtype == np.uint8:
            if not unscaled_8bit:
                raise IntPhysFormatError(
                    f"8-bit depth frame {p} needs 'max_depth' in {d / 'status.json'} to be scaled to mm"
                )
            enc = "uint8_unscaled"
            depth[t] = dimg
        else:
            raise IntPhysFormatError(f"depth frame {p} has dtype {dimg.dtype}, expected 8- or 16-bit")
        if encoding is not None and enc != encoding:
            raise IntPhysFormatError(f"depth frame {p} is {enc} while earlier frames are {encoding}")
        encoding = enc
        p = layout.path(d, "masks", t)
        m = _imread(p, cv2.IMREAD_UNCHANGED)
        if m.ndim == 3:
            m = m[..., 0]
        if m.shape != (height, width) or m.dtype != np.uint8:
            raise IntPhysFormatError(f"mask frame {p} is {m.dtype} {m.shape}, expected uint8 {(height, width)}")
        masks[t] = m if mask_luts is None else mask_luts[t][m]
    return scene, depth, masks, encoding


def _movie_buffers(*shape: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scene, depth and masks arrays of ``shape`` (``(T, H, W)`` for one movie; a leading axis for several)."""
    return np.empty((*shape, 3), np.uint8), np.empty(shape, np.float32), np.empty(shape, np.uint8)


def _depth_encoding_of(movie_dir: Path, layout: FrameLayout, *, unscaled_8bit: bool = False) -> str:
    """The ``depth_encoding`` of a movie from its first depth frame (as :func:`decode_movie` decodes it)."""
    p = layout.path(movie_dir, "depth", 0)
    img = _imread(p, cv2.IMREAD_UNCHANGED)
    if img.dtype == np.uint16:
        return "uint16_inverse_mm"
    return "uint8_unscaled" if unscaled_8bit else "uint8_max_depth"


def _decoded_blocks(movies, jobs, T, H, W, *, threads: int, unit: int = 1):
    """Yield ``{"scene", "depth", "masks"}`` blocks of ``unit`` consecutive movies (the last may be shorter).

    ``jobs``: per movie, the keywords of :func:`decode_movie` (``max_depth``,
    ``layout``, ``mask_luts``, ``unscaled_8bit``).

    Movies are decoded by a pool of ``threads`` threads (cv2.imread releases the
    GIL) straight into three rotating sets of ``unit``-movie buffers (one being
    written by the consumer, one yielded, one decoded into ahead), so memory does
    not grow with the shard and no movie is copied on its way to the store. A
    yielded block is valid until the block after the next one is requested: the
    contract of :func:`psybench.io.store.write_store_stream` with ``zero_copy``,
    whose writer has finished with a unit by then.
    """
    cv2.setNumThreads(1)
    n = len(movies)
    unit = max(1, min(int(unit), n))
    n_units = -(-n // unit)
    sets = [_movie_buffers(unit, T, H, W) for _ in range(min(3, n_units))]
    with ThreadPoolExecutor(max(1, int(threads)), thread_name_prefix="decode") as pool:

        def start(u):
            bufs, lo = sets[u % len(sets)], u * unit
            return [pool.submit(decode_movie, movies[i].path, T, H, W, out=tuple(b[i - lo] for b in bufs), **jobs[i])
                    for i in range(lo, min(n, lo + unit))]

        pending = deque([start(0)])
        for u in range(n_units):
            if u + 1 < n_units:  # the set of unit u - 2 is free: the consumer asked for unit u
                pending.append(start(u + 1))
            futures = pending.popleft()
            for f in futures:
                f.result()
            m = len(futures)
            scene, depth, masks = sets[u % len(sets)]
            yield {"scene": scene[:m], "depth": depth[:m], "masks": masks[:m]}
        # an exception above leaves the pool's remaining futures to finish and be dropped
