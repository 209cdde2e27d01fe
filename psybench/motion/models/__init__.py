"""Motion models: classic optical flow and the bio-inspired models.

Submodules (imported on demand, never here, so that importing
:mod:`psybench.motion.models` stays cheap and free of OpenCV):

``psybench.motion.models.flow``
    Classic optical flow: Horn-Schunck, Lucas-Kanade, Farneback, DIS
    (registered as ``kind="pair"`` algorithms of the ``motion`` track).
``psybench.motion.models.motion_energy``, ``psybench.motion.models.v1mt``
    The bio-inspired models (``kind="stream"``).
``psybench.motion.models.people``
    The reference observer ``people``: published human behaviour for each stimulus.

The two kinds' data and outputs, which each model's docstring refers to:

``pair``
    ``f(frame0, frame1, ...)``: two consecutive frames, ndarray, shape (H, W), luminance
    in [0, 1]; returns ``flow``, ndarray, shape (H, W, 2), float32, ``(u, v)``
    px/frame, ``frame0(x) ~ frame1(x + flow(x))``.
``stream``
    ``f(chunks, *, display, ...)``: ``chunks``, an iterable of consecutive frame
    blocks, ndarray, shape (t, H, W), float32 luminance in [0, 1]; ``display``, the
    run's :class:`~psybench.motion.display.Display`. Yields per block a dict:
    ``"flow"``, ndarray, shape (t, H, W, 2), float32 px/frame (RR-7317 eq. 2), and
    ``"p"`` (if the model returns it), ndarray, shape (t, H, W, V), float32, the
    population over the model's velocity grid (``function.velocities(display=...)``).

:func:`psybench.motion.responses.run_motion_model` streams a stimulus store
through any of them; models are looked up through :mod:`psybench.registry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BIO_INSPIRED_KIND", "REFERENCE_OBSERVERS", "bio_inspired_models"]

#: Registry kind of the bio-inspired motion models (the streamed population models, Simoncelli &
#: Heeger 1998 and Tlapale, Masson & Kornprobst 2010); a built-in algorithm of this kind is
#: bio-inspired, a user callable of it is not assumed to be.
BIO_INSPIRED_KIND = "stream"
#: Built-in stream algorithms that are no model of the visual system but published human behaviour
#: (:mod:`psybench.motion.models.people`): never counted as bio-inspired.
REFERENCE_OBSERVERS = ("people",)


def bio_inspired_models(specs: Mapping[str, Any]) -> dict[str, str]:
    """``{model name: algorithm name}`` of the configured motion models that are bio-inspired.

    Imports nothing heavy: the workflow calls it while planning.

    Parameters
    ----------
    specs : mapping {str: psybench.registry.ModelSpec}
        The resolved motion models (:func:`psybench.config.track_models`), in config order.
    """
    return {name: s.algorithm.name for name, s in specs.items()
            if s.kind == BIO_INSPIRED_KIND and s.algorithm.source == "builtin"
            and s.algorithm.name not in REFERENCE_OBSERVERS}
