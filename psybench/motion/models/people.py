"""``people``: a reference observer whose response is published human behaviour, not a model of it.

For each stimulus of a run it generates the velocity that people's pursuit or ocular
following shows for that stimulus, from the numbers of
:data:`psybench.motion.human_behaviour.HUMAN` (each cited there) and the stimulus's
own attributes (family, true velocity, geometry): a spatially uniform flow field
per frame, which then goes through the same readout (RR-7317 eq. 3), fits and
criteria as every model. It never looks at the frames, and it knows nothing of the
criteria. Its parameters are the published ranges' values (defaults: the values of
:data:`~psybench.motion.human_behaviour.HUMAN`); their bounds are the published
ranges, so that no configuration moves people outside what was measured.

Departures (psybench's): the eye velocity that the sources measure is used as the
drive of the readout (so the readout's time constant smooths it once more, as it
does every model's); the speed is a step at the latency; contrast and speed change
nothing but the diamonds (Wallace, Stone & Masson 2005: larger and slower errors at
low contrast and high speed), since no magnitude is at hand for the others: the edge
runs cover each range at every level instead, except the diamonds', whose ordering
(the generalisation table's dependence rows) people follow with an exponent of
psybench's reading (``diamond_dependence_exponent``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from psybench.motion.display import Display, wrap_deg
from psybench.motion.human_behaviour import COMPLETE_FRACTION_TIME_CONSTANTS, HUMAN, edges
from psybench.registry import register

__all__ = ["people", "people_velocity"]

_N_TAU = COMPLETE_FRACTION_TIME_CONSTANTS


def _value(name: str) -> float:
    return HUMAN[name].value


def _after(t_ms: np.ndarray, start_ms: float) -> np.ndarray:
    """Time since ``start_ms`` (ms), 0 before it."""
    return np.maximum(t_ms - start_ms, 0.0)


def _decay(t_ms: np.ndarray, start_ms: float, duration_ms: float) -> np.ndarray:
    """1 until ``start_ms``, then ``exp(-t / tau)`` with ``tau = duration / 3`` (95 % done)."""
    return np.exp(-_after(t_ms, start_ms) / (duration_ms / _N_TAU))


def _attr(stim: Mapping[str, Any], key: str) -> float:
    for src in (stim, stim.get("params") or {}):
        if src.get(key) is not None:
            return float(src[key])
    raise ValueError(f"people: stimulus {stim.get('name')!r} has no attribute {key!r}")


def _toward(axis_deg: float, reference_deg: float) -> float:
    """The sense of an axis within 90 deg of ``reference`` (deg)."""
    d = float(wrap_deg(axis_deg - reference_deg))
    return axis_deg + 180.0 if abs(d) > 90.0 else axis_deg


def _bar_fraction(length_deg: float) -> float:
    """Peak error of a (sub-)bar as a fraction of its normal's offset: ``l / (l + l_half)``.

    ``l_half`` makes the fraction 30/45 at 20 deg (Biber & Ilg 2008, via RR-7317 sec. 3.2).
    """
    f20 = _value("bar_peak_error_deg") / 45.0
    l_half = 20.0 * (1.0 - f20) / f20
    return length_deg / (length_deg + l_half)


def _surround_gain(summation_deg: float, decline: float) -> float:
    """``k`` of ``C(D) / (1 + k S(D))`` whose large-grating response is ``(1 - decline)`` of its peak."""
    if decline <= 0:
        return 0.0
    d = np.geomspace(summation_deg / 100.0, summation_deg * 100.0, 4001)
    centre = -np.expm1(-(d / summation_deg) ** 2)
    surround = -np.expm1(-(d / (2.0 * summation_deg)) ** 2)
    lo, hi = 0.0, 100.0
    for _ in range(80):  # bisection: the relative decline grows with k
        k = 0.5 * (lo + hi)
        r = centre / (1.0 + k * surround)
        lo, hi = (k, hi) if 1.0 - r[-1] / r.max() < decline else (lo, k)
    return 0.5 * (lo + hi)


def people_velocity(
    stimulus: Mapping[str, Any], t_ms: np.ndarray, **values: float,
) -> np.ndarray:
    """People's velocity (deg/s, x right, y up), shape (T, 2), at ``t_ms`` after motion onset.

    Parameters
    ----------
    stimulus : mapping
        The stimulus attributes (:func:`psybench.motion.stimuli.store.write_stimuli`):
        ``family``, ``truth`` and the family's geometry.
    t_ms : ndarray, shape (T,)
    **values
        Overrides of :data:`~psybench.motion.human_behaviour.HUMAN` values by name.

    Raises
    ------
    ValueError
        For a family people's data do not cover, or a stimulus lacking an attribute.
    """
    v = {name: entry.value for name, entry in HUMAN.items()}
    v.update({name: float(x) for name, x in values.items()})
    family = stimulus.get("family")
    truth = stimulus.get("truth") or {}
    if "direction_deg" not in truth or "speed_deg_s" not in truth:
        raise ValueError(f"people: stimulus {stimulus.get('name')!r} lacks truth.direction_deg/speed_deg_s")
    true_dir, speed = float(truth["direction_deg"]), float(truth["speed_deg_s"])
    t = np.asarray(t_ms, dtype=np.float64)
    scale = np.ones_like(t)
    if family == "diamond":
        start = v["pursuit_latency_ms"]
        # Wallace, Stone & Masson 2005: larger and slower at low contrast and high speed (ordering only)
        e = v["diamond_dependence_exponent"]
        m = _attr(stimulus, "contrast") ** -e * (speed / 10.0) ** e
        fraction = v["diamond_initial_bias_fraction"] - (v["diamond_initial_bias_fraction"]
                                                         - v["diamond_reference_bias_fraction"]) / m
        bias = fraction * float(wrap_deg(_attr(stimulus, "vector_average_direction_deg") - true_dir))
        direction = true_dir + bias * _decay(t, start, v["diamond_transition_ms"] * m)
    elif family in ("bar", "dashed_bar"):
        start = v["pursuit_latency_ms"]
        length = _attr(stimulus, "tile_length_deg" if family == "dashed_bar" else "length_deg")
        g = _bar_fraction(length)
        normal = _toward(_attr(stimulus, "normal_direction_deg"), true_dir)
        peak = g * float(wrap_deg(normal - true_dir))
        lo = v.get("bar_transition_min_ms", HUMAN["bar_transition_ms"].low)
        hi = v.get("bar_transition_max_ms", HUMAN["bar_transition_ms"].high)
        duration = lo + g * (hi - lo)
        direction = true_dir + peak * _decay(t, start, duration)
    elif family == "barberpole":
        from psybench.motion.criteria.barberpole import ocular_following_range

        start = v["ocular_following_latency_ms"]
        normal = true_dir
        ar = _attr(stimulus, "aspect_ratio")
        if ar > 1:
            long_axis = _toward(_attr(stimulus, "long_axis_deg"), normal)
            offset = float(wrap_deg(long_axis - normal))
            low, high = ocular_following_range(ar, abs(offset))
            deviation = math.copysign(low + v["barberpole_final_fraction"] * (high - low), offset)
        else:
            deviation = 0.0  # a square: no dominant side, both vector sums are the normal
        onset_2d = start + v["barberpole_2d_delay_ms"]
        direction = normal + deviation * -np.expm1(-_after(t, onset_2d)
                                                   / ((v["barberpole_final_ms"] - onset_2d) / _N_TAU))
    elif family == "grating":
        start = v["ocular_following_latency_ms"]
        d_s = v["grating_summation_diameter_deg"]
        diameter = _attr(stimulus, "diameter_deg")
        k = _surround_gain(d_s, v["grating_decline_fraction"])
        centre = -math.expm1(-(diameter / d_s) ** 2)
        surround = -math.expm1(-(diameter / (2.0 * d_s)) ** 2)
        engaged = (t >= start + v["grating_surround_lag_ms"]).astype(np.float64)
        scale = centre / (1.0 + k * surround * engaged)
        direction = np.full_like(t, true_dir)
    else:
        raise ValueError(f"people: no published human data for stimulus family {family!r} "
                         f"(stimulus {stimulus.get('name')!r})")
    on = (t >= start).astype(np.float64)
    rad = np.radians(direction)
    return np.stack([speed * scale * on * np.cos(rad), speed * scale * on * np.sin(rad)], axis=-1)


_RANGES = ("diamond_transition_ms", "barberpole_2d_delay_ms", "barberpole_final_ms", "barberpole_final_fraction",
           "grating_decline_fraction")


@register(
    "people",
    track="motion",
    kind="stream",
    reference="published human pursuit and ocular following (psybench.motion.human_behaviour)",
    description="reference observer: published human behaviour for each stimulus (not a model)",
    bounds={**{k: edges(k) for k in _RANGES},
            "bar_transition_min_ms": edges("bar_transition_ms"), "bar_transition_max_ms": edges("bar_transition_ms")},
)
def people(
    chunks,
    *,
    display: Display,
    stimulus: Mapping[str, Any] | None = None,
    diamond_transition_ms: float = _value("diamond_transition_ms"),
    bar_transition_min_ms: float = HUMAN["bar_transition_ms"].low,
    bar_transition_max_ms: float = HUMAN["bar_transition_ms"].high,
    barberpole_2d_delay_ms: float = _value("barberpole_2d_delay_ms"),
    barberpole_final_ms: float = _value("barberpole_final_ms"),
    barberpole_final_fraction: float = _value("barberpole_final_fraction"),
    grating_decline_fraction: float = _value("grating_decline_fraction"),
) -> Iterator[dict[str, np.ndarray]]:
    """Published human behaviour on the run's stimulus, as a uniform flow field per frame.

    Parameters
    ----------
    chunks, display
        The stream kind's data (:mod:`psybench.motion.models`): only the blocks' lengths
        and shape are used.
    stimulus : mapping
        The stimulus attributes, passed by the response stage.
    diamond_transition_ms, barberpole_2d_delay_ms, barberpole_final_ms, barberpole_final_fraction,
    grating_decline_fraction : float
        Values within the published ranges of :data:`~psybench.motion.human_behaviour.HUMAN`.
    bar_transition_min_ms, bar_transition_max_ms : float
        The transition of the shortest and of the longest (sub-)bar's, within Born et al.
        2006's 50-400 ms (defaults: its ends).

    Yields
    ------
    dict
        ``{"flow": ndarray, shape (t, H, W, 2), float32 px/frame}``.
    """
    if stimulus is None:
        raise ValueError("people: the response stage must pass the stimulus attributes (stimulus=...)")
    if bar_transition_min_ms > bar_transition_max_ms:
        raise ValueError(f"people: bar_transition_min_ms ({bar_transition_min_ms}) exceeds bar_transition_max_ms "
                         f"({bar_transition_max_ms}); longer bars take longer (Born et al. 2006)")
    values = {"diamond_transition_ms": diamond_transition_ms, "bar_transition_min_ms": bar_transition_min_ms,
              "bar_transition_max_ms": bar_transition_max_ms, "barberpole_2d_delay_ms": barberpole_2d_delay_ms,
              "barberpole_final_ms": barberpole_final_ms, "barberpole_final_fraction": barberpole_final_fraction,
              "grating_decline_fraction": grating_decline_fraction}
    k = display.px_per_deg / display.frames_per_s  # deg/s -> px/frame
    start = 0
    for block in chunks:
        n, height, width = block.shape
        t = (start + np.arange(n)) * display.frame_ms
        vel = people_velocity(stimulus, t, **values)
        uv = np.stack([vel[:, 0] * k, -vel[:, 1] * k], axis=-1)  # image axes: v downward
        yield {"flow": np.broadcast_to(uv[:, None, None, :], (n, height, width, 2)).astype(np.float32)}
        start += n
