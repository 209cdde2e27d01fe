"""The boundary between psybench and a model's function, for every track.

Every track's model-calling job (motion responses, attention features, IntPhys
predictions) and :func:`psybench.score` call a model through one path,
:func:`call_model`: the model's function on its data with its resolved parameters,
an exception raised inside it turned into a :class:`psybench.registry.ModelError`
naming the model and what it ran on, and its output checked by :func:`check_output`
(by kind: a flow, maps, or probabilities per movie) before anything is stored. The
job runs it under :func:`exits_are_errors`. A model function (built in or a user's
``callable``) gets its inputs read-only and its outputs checked:

* :func:`read_only` views of the frames, so a function that modifies its input in
  place raises instead of silently changing what the next call (or another model)
  sees;
* :func:`check_maps` for array outputs (motion flow, attention maps): an ndarray,
  of a floating-point dtype (an integer flow or map is truncated: int64 from a user
  function is a bug, not a choice), of the expected shape, all finite;
* :func:`model_failure` turns an exception raised inside the function into a
  :class:`psybench.registry.ModelError` naming the model (and saying that inputs
  are read-only when the function tried to write to them);
* :func:`exits_are_errors` makes a function that ends the interpreter
  (``sys.exit``, ``os._exit``) fail with a :class:`ModelExit` naming the model and
  what it was running on, instead of a job that ends with status 0 and no output;
* :func:`check_probabilities` for an IntPhys model's ``pandas.Series`` of P(movie).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from psybench.registry import ModelError, ModelSpec

__all__ = [
    "read_only", "check_maps", "check_probabilities", "check_output", "model_label", "call_model", "model_blocks",
    "model_failure", "ModelExit", "exits_are_errors",
]

#: The output a model of each array kind returns, by name (for the messages).
_OUTPUT_NAMES = {"pair": "flow", "saliency": "maps"}


class ModelExit(ModelError):
    """A model's function tried to end the process (``sys.exit``, ``os._exit``)."""


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


def check_probabilities(model: str, value: Any, movies: Sequence[str], where: str = "", *,
                        integers_allowed: bool = False) -> Any:
    """``value`` as a float ``pandas.Series`` if it holds one finite P in [0, 1] for each of ``movies``, else raise.

    ``integers_allowed``: a numeric non-float Series passes (psybench's own models);
    a user's Series of 0/1 integers is refused as a bug.
    """
    import pandas as pd  # here: planning the workflow imports this module, not pandas

    at = f" (on {where})" if where else ""
    if not isinstance(value, pd.Series):
        raise ModelError(f"model {model!r} returned {type(value).__name__}; expected a pandas.Series "
                         f"(movie id -> P(possible) in [0, 1]){at}")
    numeric = pd.api.types.is_numeric_dtype(value.dtype) and not pd.api.types.is_bool_dtype(value.dtype)
    if not pd.api.types.is_float_dtype(value.dtype) and not (integers_allowed and numeric):
        raise ModelError(f"model {model!r} returned a Series of dtype {value.dtype}; expected floating point "
                         f"probabilities in [0, 1]{at}")
    if value.index.has_duplicates:
        raise ModelError(f"model {model!r} returned movie {value.index[value.index.duplicated()][0]!r} twice{at}")
    p = value.astype(float)
    if sorted(map(str, p.index)) != sorted(movies):
        raise ModelError(f"model {model!r} returned scores for {len(p)} movies, the store has {len(movies)}{at}")
    bad = p[~np.isfinite(p.to_numpy()) | (p < 0) | (p > 1)]
    if len(bad):
        raise ModelError(f"model {model!r} returned P = {float(bad.iloc[0])!r} for movie {bad.index[0]!r}; "
                         f"need [0, 1]{at}")
    return p


def model_label(spec: ModelSpec) -> str:
    """What a model is called in messages: ``"saliency model"`` for attention, else ``"model"``."""
    return "saliency model" if spec.kind == "saliency" else "model"


def check_output(spec: ModelSpec, value: Any, expected: Any, where: str) -> Any:
    """Check what ``spec``'s function returned for its kind; raise :class:`ModelError` naming the model.

    ``expected`` is the shape of a ``pair`` model's flow ``(H, W, 2)`` or a ``saliency``
    model's maps ``(t, H, W, None)`` (:func:`check_maps`), or the movie ids a
    ``plausibility`` model scores (:func:`check_probabilities`). A ``stream`` model
    yields blocks, each checked by the writer of its store (:func:`check_maps` per output).
    """
    if spec.kind == "plausibility":
        return check_probabilities(spec.name, value, list(expected), where,
                                   integers_allowed=spec.algorithm.source != "user")
    if spec.kind in _OUTPUT_NAMES:
        return check_maps(spec.name, _OUTPUT_NAMES[spec.kind], value, expected, where, label=model_label(spec))
    raise ModelError(f"model {spec.name!r}: a {spec.kind!r} model's output is checked block by block "
                     "(model_blocks), not by check_output")


def call_model(spec: ModelSpec, *data: Any, where: str, expected: Any = None, **keywords: Any) -> Any:
    """``spec``'s function on ``data`` with its parameters: the one way psybench calls a model.

    Parameters
    ----------
    spec : ModelSpec
        The resolved model (:func:`psybench.handoff.as_model`).
    *data
        Its kind's data arguments (:data:`psybench.model_params.DATA_ARGUMENTS`).
    where : str
        What it runs on, for the messages (``"frames 3-4"``, ``"a block of 8 frames"``).
    expected : optional
        Passed to :func:`check_output`; None (a ``stream`` model) returns the output unchecked.
    **keywords
        The runner's own keywords (a stream model's ``display``, a saliency model's
        ``history``) and run-time switches laid over the parameters (``return_p``, ``threads``).

    Raises
    ------
    ModelError
        Naming the model and ``where``, for an exception raised inside the function
        (the cause kept) or an output that fails the checks.
    """
    label = model_label(spec)
    try:
        out = spec.algorithm.function(*data, **{**spec.params, **keywords})
    except ModelError:  # a ModelExit (exits_are_errors) or a model's own ModelError already names it
        raise
    except Exception as exc:
        raise model_failure(spec.name, exc, where, label=label) from exc
    return out if expected is None else check_output(spec, out, expected, where)


def model_blocks(spec: ModelSpec, blocks: Iterable[Any], where: str = "") -> Iterator[Any]:
    """The blocks a ``stream`` model yields; an exception raised computing one is named as in :func:`call_model`."""
    it = iter(blocks)
    while True:
        try:
            block = next(it)
        except StopIteration:
            return
        except ModelError:
            raise
        except Exception as exc:
            raise model_failure(spec.name, exc, where, label=model_label(spec)) from exc
        yield block


def model_failure(model: str, exc: BaseException, where: str = "", *, label: str = "model") -> ModelError:
    """The :class:`ModelError` for an exception raised inside ``model``'s function (``raise ... from exc``)."""
    at = f" on {where}" if where else ""
    hint = ""
    if isinstance(exc, ValueError) and "read-only" in str(exc):
        hint = " (its input frames are read-only: copy them, e.g. frames.copy(), before modifying)"
    return ModelError(f"{label} {model!r} raised {type(exc).__name__}{at}: {exc}{hint}")


# The models running in this process under exits_are_errors, innermost last, and os._exit as it was.
_RUNNING: list[dict[str, Any]] = []
_LOCK = threading.Lock()
_REAL_EXIT = os._exit
_NATIVE = importlib.import_module(os.name)  # posix (or nt): os._exit is its _exit, reachable under that name too


def _model_exit(run: dict[str, Any], call: str) -> ModelExit:
    """The :class:`ModelExit` for ``call``; its message also goes to the console when stderr is a job's log."""
    at = f" on {run['where']}" if run["where"] else ""
    message = (f"{run['label']} {run['model']!r} called {call}{at}: a model must return its result (or raise), "
               "not end the process")
    console = sys.__stderr__
    if console is not None and console is not sys.stderr:  # the traceback goes to the log, this line to the console
        console.write(f"psybench: {message}\n")
        console.flush()
    return ModelExit(message)


def _refused_exit(code: int = 0) -> None:
    """``os._exit`` while a model runs: a :class:`ModelExit` naming it (a forked child still exits)."""
    if not _RUNNING or _RUNNING[-1]["pid"] != os.getpid():
        _REAL_EXIT(code)
    run = _RUNNING[-1]
    run["exited"] = f"os._exit({code!r})"
    raise _model_exit(run, run["exited"])


@contextmanager
def exits_are_errors(model: str, where: str = "", *, label: str = "model") -> Iterator[None]:
    """Run a model's function in the block; its attempts to end the process become :class:`ModelExit`.

    ``SystemExit`` (``sys.exit``, ``exit``, raised in the calling thread or in a worker
    whose exception the caller re-raises) leaving the block becomes a :class:`ModelExit`.
    ``os._exit`` ends the interpreter at once, running no ``finally``, ``atexit`` or
    exception handler, so it cannot be caught: while the block runs, ``os._exit`` (and
    ``posix._exit``) is replaced by a function that raises :class:`ModelExit` instead,
    in whichever thread the model calls it; if the model swallows that exception, the
    block raises it on leaving. A process forked by the model (multiprocessing) still
    exits normally. Signals and C code calling ``exit`` are outside Python's reach.

    Parameters
    ----------
    model : str
        The model's configured name (for the message).
    where : str
        What it runs on, e.g. ``"stimulus grating_d0.zarr"``.
    label : str
        What the model is called in the message (``"saliency model"``).
    """
    run = {"model": model, "where": where, "label": label, "pid": os.getpid(), "exited": None}
    with _LOCK:
        _RUNNING.append(run)
        os._exit = _NATIVE._exit = _refused_exit
    try:
        yield
    except SystemExit as exc:
        raise _model_exit(run, f"sys.exit({exc.code!r})") from exc
    finally:
        with _LOCK:
            _RUNNING.remove(run)
            if not _RUNNING:
                os._exit = _NATIVE._exit = _REAL_EXIT
    if run["exited"]:  # the model caught the ModelExit of its os._exit and went on
        raise _model_exit(run, run["exited"])
