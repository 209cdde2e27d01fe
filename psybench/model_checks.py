"""The boundary between psybench and a model's function, for every track (issue 17).

A model function (built in or a user's ``callable``) gets its inputs read-only and
its outputs checked before anything is stored:

* :func:`read_only` views of the frames, so a function that modifies its input in
  place raises instead of silently changing what the next call (or another model)
  sees;
* :func:`check_maps` for array outputs (motion flow, attention maps): an ndarray,
  of a floating-point dtype (an integer flow or map is truncated: int64 from a user
  function is a bug, not a choice), of the expected shape, all finite;
* :func:`model_failure` turns an exception raised inside the function into a
  :class:`psybench.registry.ModelError` naming the model (and saying that inputs
  are read-only when the function tried to write to them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from psybench.registry import ModelError

__all__ = ["read_only", "check_maps", "model_failure"]


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written (``array`` itself is left writeable)."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


def check_maps(
    model: str, name: str, value: Any, shape: Sequence[int | None], where: str, *, label: str = "model"
) -> np.ndarray:
    """Return ``value`` if it is a finite floating-point ndarray of ``shape``, else raise naming ``model``.

    Parameters
    ----------
    model : str
        The model's configured name (for the message).
    name : str
        The output's name (``"flow"``, ``"maps"``).
    value : object
        What the function returned.
    shape : sequence of int or None
        The expected shape; ``None`` leaves an axis free (e.g. the channel count K).
    where : str
        The frames it was computed on (for the message), e.g. ``"frames 3-4"``.
    label : str
        What the model is called in the message (``"saliency model"``).

    Raises
    ------
    ModelError
        For a list or other non-array, a non-floating dtype, a wrong shape or
        NaN/inf values.
    """
    who = f"{label} {model!r}"
    if not isinstance(value, np.ndarray):
        raise ModelError(f"{who} returned {type(value).__name__} for {name!r} at {where}, "
                         "expected a numpy ndarray of floats")
    if not np.issubdtype(value.dtype, np.floating):
        raise ModelError(f"{who} returned {name!r} of dtype {value.dtype} at {where}, "
                         "expected floating point (float32 or float64)")
    expected = tuple(shape)
    if value.ndim != len(expected) or any(e is not None and s != e for s, e in zip(value.shape, expected)):
        shown = str(tuple("K" if e is None else e for e in expected)).replace("'", "")
        raise ModelError(f"{who} returned {name!r} of shape {value.shape} at {where}, expected {shown}")
    finite = np.isfinite(value)
    if not finite.all():
        n = int(finite.size - np.count_nonzero(finite))
        raise ModelError(f"{who} returned {n} non-finite value(s) (NaN/inf) in {name!r} at {where}")
    return value


def model_failure(model: str, exc: BaseException, where: str = "", *, label: str = "model") -> ModelError:
    """The :class:`ModelError` for an exception raised inside ``model``'s function (``raise ... from exc``)."""
    at = f" on {where}" if where else ""
    hint = ""
    if isinstance(exc, ValueError) and "read-only" in str(exc):
        hint = " (its input frames are read-only: copy them, e.g. frames.copy(), before modifying)"
    return ModelError(f"{label} {model!r} raised {type(exc).__name__}{at}: {exc}{hint}")
