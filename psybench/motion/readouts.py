"""Global read-outs of motion models: flow from distributions, pursuit, direction error.

Motion Psychobench (RR-7317, section 4.1 and eqs. 2-3) compares models with
people through *global* read-outs, not local flow: an eye-movement-like pursuit
velocity ``w(t)`` and the perceived direction, its steady state.

Chain for one response store (one model on one stimulus)::

    p(t, x, v) --eq. 2--> v(t, x) --domain mean--> vbar(t) --eq. 3--> w(t)
                                                                  |
                        direction of w(t) - true direction = direction error e(t)

Units and conventions (see ``psybench.motion.display``):

* flow, mean flow and pursuit are image-coordinate velocities ``(u, v)`` in
  px/frame (``u`` rightward, ``v`` downward); speeds are also stored in deg/s;
* directions are degrees counter-clockwise from rightward with the visual y
  axis up (:func:`psybench.motion.display.direction_deg`); errors are
  ``wrap(direction(w) - true direction)`` in [-180, 180), positive = counter-
  clockwise of the truth;
* sample ``k`` is at ``t_k = k * frame_ms`` ms after stimulus onset.

Readout store, one per model and stimulus (written by
:func:`compute_readout`):

``mean_flow`` (t, component) float64 px/frame
    Spatial mean of the flow over the whole frame (``vbar``).
``pursuit`` (t, component) float64 px/frame
    ``w(t)`` of eq. 3.
``direction_deg`` (t,)
    Direction of ``w`` (NaN where ``|w|`` is below the speed threshold).
``direction_error_deg`` (t,)
    ``wrap(direction_deg - truth)`` (NaN likewise).
``speed_deg_s`` (t,)
    ``|w|`` in deg/s.

Group attributes: ``display``, ``stimulus`` (copied from the response store,
with its ``truth``), ``model``, ``readout`` (parameters and the perceived
direction), ``code_hash``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psybench import units
from psybench.io.integrity import open_group, verify_store
from psybench.motion.display import Display, direction_deg, wrap_deg
from psybench.motion.population import domain_mean_flow, flow_from_distribution

__all__ = [
    "DEFAULT_LAMBDA_MS", "DEFAULT_MIN_SPEED_FRACTION", "DEFAULT_FINAL_WINDOW_MS", "flow_field_from_distribution",
    "mean_flow", "pursuit", "direction_error", "speed_threshold", "perceived_direction", "half_differential_error",
    "mean_half_differential_error", "nanmean_quiet", "compute_readout", "compute_readouts", "load_readout",
]

#: Default smoothing constant lambda of eq. 3 in ms. RR-7317 gives no value; 50 ms
#: is shorter than the ~100-300 ms decays the benchmark measures (Masson & Stone
#: 2002; Wallace et al. 2005), so the filter smooths frame-to-frame noise without
#: hiding them, and it spans five 10 ms frames at the default 100 frames/s.
DEFAULT_LAMBDA_MS = 50.0
#: Direction is undefined (NaN) where ``|w| <= fraction * max_t |w|`` (and always
#: where ``|w| == 0``). Relative, not absolute, because the domain mean of eq. 3
#: scales the speed by the fraction of the frame the stimulus covers.
DEFAULT_MIN_SPEED_FRACTION = 0.01
#: Window at the end of the response over which the perceived (steady-state)
#: direction is measured, in ms.
DEFAULT_FINAL_WINDOW_MS = 100.0


# --------------------------------------------------------------------------- eq. 2
def flow_field_from_distribution(p, velocities):
    """Flow field from a distributed velocity representation (RR-7317 eq. 2).

    0 where ``sum_v p == 0``; see :func:`psybench.motion.population.flow_from_distribution`,
    the one implementation shared with the models.
    """
    return flow_from_distribution(p, velocities)


# ----------------------------------------------------------------- domain mean
def mean_flow(flow):
    """Spatial mean of a flow sequence over the whole domain Omega.

    RR-7317 eq. 3 sums ``v(t, x)`` over ``x in Omega``; we average instead
    (the sum divided by ``|Omega|``), so that ``w`` is a velocity in px/frame
    whatever the frame size (a deliberate, documented departure: the sum would
    only rescale ``w`` by the number of pixels).

    Parameters
    ----------
    flow : array_like or dask.array.Array, shape (T, H, W, 2)

    Returns
    -------
    ndarray or dask.array.Array, shape (T, 2), float64
        Lazy (reduced chunk-wise) for a Dask input; call ``.compute()``.
    """
    if flow.ndim != 4 or flow.shape[-1] != 2:
        raise ValueError(f"flow must have shape (T, H, W, 2); got {tuple(flow.shape)}")
    if hasattr(flow, "dask"):
        return flow.astype(np.float64).mean(axis=(1, 2))
    return np.asarray(flow).mean(axis=(1, 2), dtype=np.float64)


def _stored_mean_flow(stored, velocities=None) -> np.ndarray:
    """:func:`mean_flow` of a stored array (zarr), read one storage unit at a time.

    ``stored`` is the flow (T, H, W, 2), or ``p`` (T, H, W, V) turned into flow by
    eq. 2 with ``velocities`` (V, 2). The arithmetic of :func:`mean_flow`, in its
    order (:func:`psybench.motion.population.domain_mean_flow`), without a Dask task
    graph for a few frames. Memory: one storage unit.
    """
    step = (stored.shards or stored.chunks)[0]
    out = np.empty((stored.shape[0], 2), dtype=np.float64)
    for start in range(0, stored.shape[0], step):
        unit = np.asarray(stored[start: start + step])
        unit = unit if velocities is None else flow_field_from_distribution(unit, velocities)
        out[start: start + len(unit)] = domain_mean_flow(unit)
    return out


def _pooled_mean_flow(response, where: str) -> np.ndarray:
    """The response store's ``mean_flow`` (t, 2) float64, checked against its ``flow``'s frames."""
    stored = response["mean_flow"]
    if stored.shape != (response["flow"].shape[0], 2) or stored.dtype != np.float64:
        raise ValueError(f"response store {where}: 'mean_flow' is {stored.dtype} of shape {stored.shape}, "
                         f"expected float64 of shape ({response['flow'].shape[0]}, 2)")
    return np.asarray(stored[...])


# --------------------------------------------------------------------------- eq. 3
def pursuit(mean_flow, *, frame_ms, lambda_ms=DEFAULT_LAMBDA_MS):
    """Pursuit-like response ``w(t)`` of RR-7317 eq. 3, integrated exactly.

    ``dw/dt = (vbar(t) - w(t)) / lambda`` with ``w(0) = 0``. The input is taken
    piecewise constant: sample ``vbar_k`` (the flow measured up to frame ``k``)
    drives ``w`` on ``[t_k, t_{k+1})``, so the exact solution at the sample times
    is the exponential integrator

    ``w_{k+1} = w_k + (1 - exp(-dt / lambda)) (vbar_k - w_k)``,  ``w_0 = 0``.

    It is causal: ``w_k`` depends on ``vbar_0 .. vbar_{k-1}`` (one frame of delay,
    the time the measurement needs to become available). No step-size error:
    for a constant input ``w(t_k) = vbar (1 - exp(-t_k / lambda))`` exactly.

    Parameters
    ----------
    mean_flow : array_like, shape (T, 2)
        ``vbar``, the domain-mean flow (px/frame or any velocity unit).
    frame_ms : float
        Sampling interval ``dt`` in ms (``1000 / frames_per_s``).
    lambda_ms : float
        Time constant ``lambda`` of eq. 3 in ms (default 50 ms, see
        :data:`DEFAULT_LAMBDA_MS`).

    Returns
    -------
    ndarray, shape (T, 2), float64
        ``w`` at the sample times, in the unit of ``mean_flow``.
    """
    v = np.asarray(mean_flow, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 2:
        raise ValueError(f"mean_flow must have shape (T, 2); got {v.shape}")
    if not frame_ms > 0:
        raise ValueError(f"frame_ms must be > 0; got {frame_ms!r}")
    if not lambda_ms > 0:
        raise ValueError(f"lambda_ms must be > 0; got {lambda_ms!r}")
    if not np.all(np.isfinite(v)):
        raise ValueError("mean_flow contains non-finite values")
    gain = -np.expm1(-frame_ms / lambda_ms)  # 1 - exp(-dt/lambda), accurate for small dt
    w = np.zeros_like(v)
    for k in range(v.shape[0] - 1):
        w[k + 1] = w[k] + gain * (v[k] - w[k])
    return w


# -------------------------------------------------------------- direction readouts
def speed_threshold(w, *, min_speed_fraction=DEFAULT_MIN_SPEED_FRACTION):
    """Speed below which the direction of ``w`` is undefined: ``fraction * max_t |w|``."""
    speed = np.hypot(*np.asarray(w, dtype=np.float64).T)
    top = float(np.max(speed)) if speed.size else 0.0
    return min_speed_fraction * top


def direction_error(w, true_direction_deg, *, min_speed=0.0):
    """Signed direction error of ``w`` over time, in degrees in [-180, 180).

    ``e(t) = wrap(direction(w(t)) - true_direction)``, positive when ``w`` points
    counter-clockwise of the truth (visual y up).

    Parameters
    ----------
    w : array_like, shape (T, 2)
        Velocities ``(u, v)`` in image coordinates (v downward).
    true_direction_deg : float or array_like, shape (T,)
    min_speed : float
        ``e`` is NaN where ``|w| <= min_speed`` (so always where ``w == 0``: a
        vector of zero length has no direction). Same unit as ``w``; see
        :func:`speed_threshold` for the relative threshold the readouts use.

    Returns
    -------
    ndarray, shape (T,)
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != 2:
        raise ValueError(f"w must have shape (T, 2); got {w.shape}")
    speed = np.hypot(w[:, 0], w[:, 1])
    err = wrap_deg(direction_deg(w[:, 0], w[:, 1]) - np.asarray(true_direction_deg, dtype=np.float64))
    return np.where(speed > min_speed, err, np.nan)


def perceived_direction(w, *, frame_ms, window_ms=DEFAULT_FINAL_WINDOW_MS):
    """Perceived direction = steady state of ``w`` (RR-7317 section 4.1).

    The direction (deg, visual y up) of the mean of ``w`` over the final
    ``window_ms`` of the response (at least the last sample). NaN if that mean
    is exactly zero.
    """
    w = np.asarray(w, dtype=np.float64)
    n = max(1, int(round(window_ms / frame_ms)))
    m = w[-n:].mean(axis=0)
    if not np.any(m):
        return float("nan")
    return float(direction_deg(m[0], m[1]))


def half_differential_error(err_cw, err_ccw):
    """Half-differential direction error ``(e_CW - e_CCW) / 2`` (RR-7317 sec. 4.4).

    The CW and CCW diamonds bias the vector average to opposite sides of the
    true direction, so the difference cancels any bias common to both and keeps
    the part due to the edges. Element-wise; NaN propagates.
    """
    return (np.asarray(err_cw, dtype=np.float64) - np.asarray(err_ccw, dtype=np.float64)) / 2.0


def nanmean_quiet(x, axis=0):
    """NaN-ignoring mean that returns NaN (without a warning) where all are NaN."""
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x)
    n = ok.sum(axis=axis)
    s = np.where(ok, x, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)


def mean_half_differential_error(err_cw, err_ccw):
    """Half-differential error averaged over translation directions.

    Parameters
    ----------
    err_cw, err_ccw : array_like, shape (D, T)
        Direction errors of the CW and CCW diamonds, row ``i`` of both for the
        same translation direction.

    Returns
    -------
    ndarray, shape (T,)
        Mean over directions ignoring NaN (NaN where every direction is NaN).
    """
    hd = half_differential_error(err_cw, err_ccw)
    if hd.ndim != 2:
        raise ValueError(f"err_cw and err_ccw must have shape (D, T); got {hd.shape}")
    return nanmean_quiet(hd, axis=0)


# ----------------------------------------------------------------------- stores
def _truth_direction(stimulus: dict, where: str) -> float:
    truth = stimulus.get("truth")
    if not isinstance(truth, dict) or "direction_deg" not in truth:
        raise ValueError(
            f"{where}: stimulus attributes lack 'truth.direction_deg' "
            "(written by psybench.motion.stimuli.store.write_stimulus)"
        )
    return float(truth["direction_deg"])


def compute_readout(
    response_store_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    lambda_ms: float = DEFAULT_LAMBDA_MS,
    min_speed_fraction: float = DEFAULT_MIN_SPEED_FRACTION,
    final_window_ms: float = DEFAULT_FINAL_WINDOW_MS,
    code_hash: str = "",
) -> Path:
    """Read one response store, compute the pursuit readout and write its store.

    The domain mean is the response's ``mean_flow`` where the response stage stored
    it (:func:`psybench.motion.responses.run_motion_model`: the same bits), else it is
    reduced from the ``flow`` array, or from ``p`` (with the ``velocities`` array
    attribute) turned into flow by eq. 2, one storage unit at a time, so memory stays
    bounded by one chunk of the response.

    Parameters
    ----------
    response_store_path, out_path : path-like
    lambda_ms : float
        Eq. 3 time constant (ms).
    min_speed_fraction : float
        Relative speed threshold of the direction (see :func:`speed_threshold`).
    final_window_ms : float
        Window of the perceived direction (see :func:`perceived_direction`).
    code_hash : str
        Recorded in the attributes.

    Returns
    -------
    pathlib.Path
    """
    where = str(response_store_path)
    response = open_group(Path(response_store_path))  # metadata only: which array the readout reads
    name = "flow" if "flow" in response else "p" if "p" in response else None
    if name is None:
        raise ValueError(f"response store {where} has neither 'flow' nor 'p'")
    pooled = name == "flow" and "mean_flow" in response  # the response stage's domain mean: kilobytes, not the flow
    # verified once, with the checksum of what is read (a corrupted chunk can still decode)
    verify_store(response_store_path, deep=["mean_flow" if pooled else name])
    attrs_in = dict(response.attrs)
    for key in ("display", "stimulus"):
        if key not in attrs_in:
            raise ValueError(f"response store {where} lacks the {key!r} attribute")
    display = Display.from_config(attrs_in["display"])
    stimulus = attrs_in["stimulus"]
    true_dir = _truth_direction(stimulus, where)
    velocities = None if name == "flow" else response["p"].attrs.get("velocities")
    if name == "p" and velocities is None:
        raise ValueError(f"response store {where}: array 'p' lacks the 'velocities' attribute")
    vbar = _pooled_mean_flow(response, where) if pooled else _stored_mean_flow(response[name], velocities)
    frame_ms = display.frame_ms
    w = pursuit(vbar, frame_ms=frame_ms, lambda_ms=lambda_ms)
    thr = speed_threshold(w, min_speed_fraction=min_speed_fraction)
    err = direction_error(w, true_dir, min_speed=thr)
    speed_px = np.hypot(w[:, 0], w[:, 1])
    direction = np.where(speed_px > thr, direction_deg(w[:, 0], w[:, 1]), np.nan)
    speed = speed_px * display.frames_per_s / display.px_per_deg
    perceived = perceived_direction(w, frame_ms=frame_ms, window_ms=final_window_ms)
    attrs = {
        "stage": "readouts",
        "display": attrs_in["display"],
        "stimulus": stimulus,
        "model": attrs_in.get("model", {}),
        "readout": {
            "kind": "pursuit (RR-7317 eq. 3), domain-mean flow, exact exponential integrator",
            "lambda_ms": float(lambda_ms),
            "frame_ms": float(frame_ms),
            "min_speed_fraction": float(min_speed_fraction),
            "speed_threshold_px_per_frame": float(thr),
            "final_window_ms": float(final_window_ms),
            "perceived_direction_deg": None if not np.isfinite(perceived) else perceived,
            "true_direction_deg": true_dir,
        },
        "code_hash": code_hash,
    }
    comp = {"components": ["u", "v"], "units": "px/frame"}
    values = {
        "mean_flow": (vbar, ("t", "component"), comp),
        "pursuit": (w, ("t", "component"), comp),
        "direction_deg": (direction, ("t",), {"units": "deg, CCW from rightward, visual y up"}),
        "direction_error_deg": (err, ("t",), {"units": "deg, wrapped to [-180, 180)"}),
        "speed_deg_s": (speed, ("t",), {"units": "deg/s"}),
    }
    # The readout is small (T samples): one in-memory block through the streaming
    # writer, which is atomic and writes the same manifest as write_store.
    from psybench.io.store import StreamSpec, write_store_stream

    specs = {k: StreamSpec(v.shape, np.float64, dims, attrs=a) for k, (v, dims, a) in values.items()}
    block = {k: np.asarray(v, dtype=np.float64) for k, (v, _, _) in values.items()}
    return write_store_stream(out_path, specs, [block], attrs, coords=display.coords(len(vbar)))


def compute_readouts(
    response_paths: Sequence[str | os.PathLike],
    out_paths: Sequence[str | os.PathLike],
    **kwargs: Any,
) -> list[Path]:
    """:func:`compute_readout` over matching lists (same stimulus name, same order).

    Raises
    ------
    ValueError
        If the lists differ in length or a pair names different stimuli.
    """
    from psybench.motion.responses import paired_stores

    pairs = paired_stores(response_paths, out_paths, "response store", "readout output")
    return [compute_readout(src, dst, **kwargs) for src, dst in pairs]


def load_readout(path: str | os.PathLike) -> dict[str, Any]:
    """Load a readout store into memory as the dict :mod:`psybench.motion.scores` scores.

    Returns
    -------
    dict
        ``t_ms`` (T,), ``pursuit`` (T, 2), ``mean_flow`` (T, 2), ``direction_deg``,
        ``direction_error_deg``, ``speed_deg_s`` (T,), ``frame_ms``, ``stimulus``,
        ``model``, ``display``, ``readout``, ``path``.
    """
    verify_store(path, deep=True)
    store = open_group(Path(path))  # T samples per array: read whole, no Dask graph
    attrs = dict(store.attrs)
    display = Display.from_config(attrs["display"])
    data: dict[str, Any] = {k: np.asarray(store[k][...], dtype=np.float64) for k in (
        "mean_flow", "pursuit", "direction_deg", "direction_error_deg", "speed_deg_s")}
    n_t = data["pursuit"].shape[0]
    data["t_ms"] = units.frames_to_ms(np.arange(n_t), display.frames_per_s)
    data["frame_ms"] = display.frame_ms
    for key in ("stimulus", "model", "display", "readout"):
        data[key] = attrs.get(key, {})
    data["path"] = str(path)
    return data
