"""Real movies into attention stimulus stores, through OpenCV's video reader.

Frames are decoded with ``cv2.VideoCapture`` and their timing comes from the
container: the frame rate it reports, checked against each frame's timestamp
(``CAP_PROP_POS_MSEC``). The store layout is described in
:mod:`psybench.attention.stimuli`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from psybench.attention.defaults import GRID
from psybench.attention.grid_coords import grid_coords
from psybench.units import frames_to_ms

__all__ = ["MovieReadError", "check_grid", "ingest_movie", "ingest_frames"]


class MovieReadError(ValueError):
    """A movie file cannot be opened or decoded; the message names the file."""


def check_grid(grid) -> tuple[int, int]:
    try:
        w, h = (int(g) for g in grid)
    except (TypeError, ValueError):
        raise ValueError(f"attention grid must be (width, height), got {grid!r}") from None
    if w < 4 or h < 4:
        raise ValueError(f"attention grid must be at least 4x4 cells, got {grid!r}")
    return w, h


def ingest_movie(
    path: str | os.PathLike,
    out: str | os.PathLike,
    *,
    grid: tuple[int, int] = GRID,
    chunk_frames: int = 256,
    max_frames: int | None = None,
    frames_per_s: float | None = None,
    px_per_deg: float | None = None,
) -> Path:
    """Ingest any movie OpenCV reads into a stimulus store on the model grid.

    Frames are decoded sequentially with ``cv2.VideoCapture``, converted to
    grayscale, scaled to [0, 1] and area-averaged (``cv2.INTER_AREA``) to ``grid``;
    they are buffered ``chunk_frames`` at a time into a scratch Zarr array, so
    memory does not grow with the movie's length (the frame count reported by a
    container is not trusted).

    Parameters
    ----------
    path : path-like
        Movie file (any container/codec of the OpenCV build).
    out : path-like
        Store to write (``.zarr``).
    grid : (int, int)
        Model grid (width, height); 40x30 in the paper (section 5.2).
    chunk_frames : int
        Frames decoded per buffered block.
    max_frames : int, optional
        Stop after this many frames.
    frames_per_s : float, optional
        Override the container's frame rate and timestamps. Otherwise the rate the
        container reports is used, checked against the frames' timestamps
        (``CAP_PROP_POS_MSEC``, kept in the store's ``frame_times_ms``); a container
        without a rate but with even timestamps gets the rate they imply.
    px_per_deg : float, optional
        Pixels per degree of the source frames, kept for gaze filtering.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    MovieReadError
        If the file cannot be opened, has no decodable frame, no frame rate, or frame
        timestamps more than half a frame off a constant rate.
    """
    import cv2
    import dask.array as da  # here, with OpenCV: the config check imports this module at planning
    import zarr

    from psybench.io.store import ArraySpec, write_store

    path = Path(path)
    gw, gh = check_grid(grid)
    if chunk_frames < 1:
        raise ValueError(f"chunk_frames must be >= 1, got {chunk_frames!r}")
    if not path.is_file():
        raise MovieReadError(f"movie file {path} does not exist")
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise MovieReadError(f"OpenCV cannot open movie file {path}")
        fps = float(frames_per_s) if frames_per_s else float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        scratch = Path(
            tempfile.mkdtemp(prefix="psybench-ingest-", dir=Path(out).parent if Path(out).parent.exists() else None)
        )
        try:
            arr = zarr.create_array(
                str(scratch / "frames.zarr"), shape=(0, gh, gw), chunks=(chunk_frames, gh, gw), dtype="float32"
            )
            source_size = None
            buf: list[np.ndarray] = []
            times: list[float] = []
            n = 0
            while max_frames is None or n < max_frames:
                ok, frame = cap.read()
                if not ok:
                    break
                times.append(float(cap.get(cv2.CAP_PROP_POS_MSEC)))  # the container's timestamp of this frame
                if source_size is None:
                    source_size = [int(frame.shape[1]), int(frame.shape[0])]
                buf.append(_to_grid(frame, (gw, gh), color=cv2.COLOR_BGR2GRAY))  # OpenCV decodes to BGR
                n += 1
                if len(buf) == chunk_frames:
                    arr.append(np.stack(buf))
                    buf = []
            if buf:
                arr.append(np.stack(buf))
            if n == 0:
                raise MovieReadError(f"movie file {path} has no decodable frame")
            fps = _container_rate(path, fps, np.asarray(times), override=bool(frames_per_s))
            attrs = {
                "frames_per_s": fps,
                "frame_times_ms": [float(t) for t in times] if not frames_per_s else None,
                "grid": [gw, gh],
                "source_size": source_size,
                "px_per_deg": px_per_deg,
                "stimulus": {"kind": "movie", "file": path.name},
            }
            frames = da.from_zarr(arr)
            write_store(out, {"frames": ArraySpec(frames, ("t", "y", "x"))}, attrs,
                        coords=grid_coords(attrs, frames.shape[0]))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    finally:
        cap.release()
    return Path(out)


def _to_grid(frame: np.ndarray, size: tuple[int, int], *, color: int) -> np.ndarray:
    """One frame (H, W) or (H, W, 3), uint8, uint16 or float in [0, 1], as float32 luminance in [0, 1] on
    the grid ``size`` (width, height): grayscale by OpenCV's ``color`` conversion, then area-averaged."""
    import cv2

    if frame.ndim == 3:
        frame = cv2.cvtColor(frame if frame.dtype in (np.uint8, np.uint16) else frame.astype(np.float32), color)
    scale = 65535.0 if frame.dtype == np.uint16 else 255.0 if frame.dtype == np.uint8 else 1.0
    return cv2.resize(frame.astype(np.float32) / scale, size, interpolation=cv2.INTER_AREA)


def ingest_frames(
    frames,
    out: str | os.PathLike,
    *,
    frames_per_s: float,
    grid: tuple[int, int] = GRID,
    px_per_deg: float | None = None,
    name: str = "frames",
) -> Path:
    """An in-memory movie into a stimulus store, frame by frame as :func:`ingest_movie` does for a file.

    Parameters
    ----------
    frames : array_like, shape (T, H, W) or (T, H, W, 3)
        Luminance (or RGB, converted to grayscale with OpenCV's weights), uint8,
        uint16 or float in [0, 1]; gaze coordinates are in these (W, H) pixels.
    out : path-like
        The stimulus store to write.
    frames_per_s : float
        The frame rate (an array carries no timing).
    grid : (int, int)
        Model grid (width, height).
    px_per_deg : float, optional
        Pixels of ``frames`` per degree of visual angle (for I-VT).
    name : str
        Named in errors (e.g. the movie's name).

    Raises
    ------
    MovieReadError
        A wrong shape, dtype or range, or a frame rate that is not a positive number.
    """
    import cv2  # here: the config check imports this module at planning

    from psybench.io.store import ArraySpec, write_store

    gw, gh = check_grid(grid)
    arr = np.asarray(frames)
    if arr.ndim not in (3, 4) or (arr.ndim == 4 and arr.shape[-1] != 3) or arr.shape[0] < 1:
        raise MovieReadError(f"movie {name!r}: frames must have shape (T, H, W) or (T, H, W, 3), got {arr.shape}")
    if arr.dtype not in (np.uint8, np.uint16):
        if not np.issubdtype(arr.dtype, np.floating) or not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
            raise MovieReadError(f"movie {name!r}: frames must be uint8, uint16 or finite floats in [0, 1] "
                                 f"(dtype {arr.dtype})")
    if not (isinstance(frames_per_s, (int, float)) and not isinstance(frames_per_s, bool) and frames_per_s > 0):
        raise MovieReadError(f"movie {name!r}: frames_per_s must be a positive number, got {frames_per_s!r}")
    small = np.stack([_to_grid(f, (gw, gh), color=cv2.COLOR_RGB2GRAY) for f in arr])
    attrs = {
        "frames_per_s": float(frames_per_s),
        "frame_times_ms": None,
        "grid": [gw, gh],
        "source_size": [int(arr.shape[2]), int(arr.shape[1])],
        "px_per_deg": px_per_deg,
        "stimulus": {"kind": "array", "name": str(name)},
    }
    return write_store(out, {"frames": ArraySpec(small, ("t", "y", "x"))}, attrs,
                       coords=grid_coords(attrs, small.shape[0]))


def _container_rate(path, fps: float, times: np.ndarray, *, override: bool) -> float:
    """Frame rate of the decoded frames, checked against the container's timestamps.

    The rate the container reports is used when the frames' timestamps
    (``CAP_PROP_POS_MSEC``) agree with it within half a frame; without a reported
    rate, the rate of evenly spaced timestamps is used. Uneven timestamps (variable
    frame rate) or no rate at all raise :class:`MovieReadError`.
    """
    if override:
        return fps
    n = len(times)
    stamped = n > 1 and np.all(np.diff(times) > 0)
    if not fps > 0 and stamped:
        fps = 1000.0 * (n - 1) / (times[-1] - times[0])
    if not fps > 0:
        raise MovieReadError(f"movie file {path} reports no frame rate and no frame timestamps: pass frames_per_s")
    if stamped:
        drift = np.abs(times - times[0] - frames_to_ms(np.arange(n), fps))
        k = int(np.argmax(drift))
        if drift[k] > 500.0 / fps:
            raise MovieReadError(
                f"movie file {path}: frame {k} is stamped {times[k]:.1f} ms, {drift[k]:.1f} ms off the reported "
                f"{fps:g} frames/s (variable frame rate?): re-encode at a constant rate or pass frames_per_s"
            )
    return fps
