"""OpenCV imported on first use, limited to one thread then.

The workflow imports every built-in model module while the Snakefile is parsed (the
model registry resolves the config), on every run, the no-op rerun included; the
classic optical-flow algorithms and the bio-inspired models' filters call OpenCV,
whose import cost every no-op rerun its start-up time. They import ``cv2`` from here: a
stand-in that imports OpenCV at the first attribute used, and calls
``cv2.setNumThreads(1)`` before handing anything out. One thread: the motion
response runner (:mod:`psybench.motion.responses`) already processes frame pairs in
parallel threads, and nested thread pools only oversubscribe the cores; so every
OpenCV call of these models runs on one thread, as when ``psybench.motion.models.flow.common``
set it at import.
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["cv2"]


class _OpenCV(types.ModuleType):
    """``cv2``, imported (and set to one thread) when an attribute is first read."""

    def __getattr__(self, name: str) -> Any:
        import cv2 as module

        module.setNumThreads(1)
        # later reads find OpenCV's names here directly, without this method
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return getattr(module, name)


cv2 = _OpenCV("cv2", "OpenCV, imported on first use with one thread (psybench._opencv)")
