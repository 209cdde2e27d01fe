"""Published human behaviour that the reference observer ``people`` is built from, each number cited.

Written down before any scoring: :mod:`psybench.motion.models.people` generates, for
each stimulus of a run, the response these numbers describe, and nothing else
(no model output, no criterion threshold). Where the literature at hand gives a
range, :data:`HUMAN` holds it (``low``, ``high``) and the value people's row uses
(``value``, the middle unless stated); where it gives only an ordering or a
bound, the entry says so (``kind``) and the model uses it as such. Most sources
were read through Tlapale et al. 2010 (RR-7317, sec. 3) or their abstracts:
``verified`` says which were checked against the source itself (see
``config/literature.yaml`` for the same caveat).

Conventions of the generated response (psybench's, not the sources'):

* A transition "complete" within a duration ``D`` decays by 95 %: an exponential
  with time constant ``D / 3`` (``exp(-3) = 0.05``).
* Before the latency the response is zero; from the latency on, its speed is the
  stimulus speed (for the gratings, scaled by the size curve) and its direction
  follows the time course of the entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

__all__ = ["HUMAN", "HumanNumber", "COMPLETE_FRACTION_TIME_CONSTANTS", "edges", "human_table"]

#: Time constants in the duration of a "complete" transition (95 %: exp(-3) = 0.05).
COMPLETE_FRACTION_TIME_CONSTANTS = 3.0


@dataclasses.dataclass(frozen=True)
class HumanNumber:
    """One published number (or range) of human behaviour.

    ``kind``: ``"value"`` (one number, ``low == high == value``), ``"range"`` (the
    published span, ``value`` the one people's row uses), ``"bound"`` (only a limit
    is published, ``low``/``high`` the limit and the other end of what is
    possible), ``"reading"`` (psybench's reading of a verbal statement, not a
    published number: stated as such in the report).
    """

    value: float
    low: float
    high: float
    unit: str
    kind: str
    citation: str
    measured: str
    verified: bool = False


#: The numbers people's row rests on (name -> entry); the model's keyword of the same
#: name may move a range's value within ``[low, high]`` (the edge runs), never out of it.
HUMAN: Mapping[str, HumanNumber] = {
    "pursuit_latency_ms": HumanNumber(
        100.0, 100.0, 100.0, "ms", "value",
        "Tlapale et al. 2010, RR-7317 sec. 3.2 (after Born et al. 2006; Pack & Born 2001)",
        "humans pursuing a 10 deg line at 10 deg/s: the 1D (normal) error shows ~100 ms after motion onset; "
        "used as the pursuit latency of diamonds and bars"),
    "ocular_following_latency_ms": HumanNumber(
        85.0, 85.0, 85.0, "ms", "value",
        "Masson, Rybarczyk, Castet & Mestre 2000 (abstract; RR-7317 sec. 3.3)",
        "ocular following of barber-poles and gratings starts ~85 ms after motion onset, in the grating "
        "(1D) direction"),
    "diamond_initial_bias_fraction": HumanNumber(
        1.0, 1.0, 1.0, "fraction of the vector-average angle", "value",
        "Wallace, Stone & Masson 2005 (abstract); Masson & Stone 2002 (RR-7317 sec. 3.2)",
        "pursuit of the translating diamonds is initiated in the vector-average direction of the edge "
        "motions (44 deg off the true direction for RR-7317's diamonds): people's limit at low contrast "
        "and high speed"),
    "diamond_dependence_exponent": HumanNumber(
        0.1, 0.1, 0.1, "exponent", "reading",
        "Wallace, Stone & Masson 2005, J. Neurophysiol. 93:2279 (abstract): ordering only",
        "the diamonds' direction error is larger and decays more slowly at low contrast and at high speed; "
        "no magnitude at hand: people's factor m = contrast^-e (speed / 10 deg/s)^e scales the transition "
        "(D m) and the bias (1 - (1 - f) / m, f the reference fraction below), e psybench's reading"),
    "diamond_reference_bias_fraction": HumanNumber(
        0.75, 0.75, 0.75, "fraction of the vector-average angle", "reading",
        "Wallace, Stone & Masson 2005 (abstract); Masson & Stone 2002 (RR-7317 sec. 3.2)",
        "initial bias at contrast 1 and 10 deg/s; 'initiated in the vector-average direction' (the entry "
        "above) is the limit it approaches at low contrast and high speed (psybench's reading)"),
    "diamond_transition_ms": HumanNumber(
        180.0, 60.0, 300.0, "ms", "range",
        "Pack & Born 2001 (MT: ~60 ms, the fastest 1D-to-2D shift reported); Wallace, Stone & Masson "
        "2005 (abstract: converges in under 300 ms)",
        "duration of the decay of the direction error from the vector average to the true direction; "
        "value: the middle of the range (the sources give no mean)"),
    "bar_peak_error_deg": HumanNumber(
        30.0, 30.0, 30.0, "deg", "value",
        "Biber & Ilg 2008, quoted by RR-7317 sec. 3.2 (not verified)",
        "peak pursuit direction error for a tilted bar 20 deg long, 0.5 deg wide, at 16 deg/s; taken "
        "against a 45 deg tilt (a fraction 2/3 of the normal's offset) and as growing with the length "
        "of each (sub-)bar, l / (l + l_half) with l_half = 10 deg through that point: the length and "
        "tiling orderings of Lorenceau et al. 1993 and Biber & Ilg 2008 (RR-7317 sec. 3.2); the "
        "saturating form is psybench's"),
    "bar_transition_ms": HumanNumber(
        225.0, 50.0, 400.0, "ms", "range",
        "Born, Pack, Ponce & Yi 2006, J. Neurophysiol. 95:284 (abstract)",
        "the 2D (terminator) response of pursuit of tilted bars evolves over 50-400 ms, longer for longer "
        "bars (larger 1D proportion); people's bar of fraction g = l / (l + l_half) takes "
        "low + g (high - low)", verified=True),
    "barberpole_2d_delay_ms": HumanNumber(
        17.5, 15.0, 20.0, "ms", "range",
        "Masson, Rybarczyk, Castet & Mestre 2000 (abstract; RR-7317 sec. 3.3)",
        "the terminator-driven (2D) component of ocular following starts 15-20 ms after the 1D one; "
        "its size depends on the aspect ratio"),
    "barberpole_final_ms": HumanNumber(
        155.0, 135.0, 175.0, "ms", "range",
        "Masson, Rybarczyk, Castet & Mestre 2000 (secondary summary)",
        "window after motion onset in which the final direction of ocular following was measured: the 2D "
        "component is complete by then"),
    "barberpole_final_fraction": HumanNumber(
        0.5, 0.0, 1.0, "fraction of the range", "bound",
        "Masson, Rybarczyk, Castet & Mestre 2000 (secondary summary)",
        "the final direction lies between the vector sum of grating plus terminators (0) and that of the "
        "terminators alone (1), both weighted by the number of terminators on each side (aspect ratio); "
        "value: the middle"),
    "grating_surround_lag_ms": HumanNumber(
        20.0, 20.0, 20.0, "ms", "value",
        "Barthelemy, Vanzetta & Masson 2006 (abstract; RR-7317 sec. 3.3)",
        "surround suppression of ocular following lags the response onset by ~20 ms"),
    "grating_summation_diameter_deg": HumanNumber(
        8.0, 8.0, 8.0, "deg", "reading",
        "Barthelemy, Vanzetta & Masson 2006 (RR-7317 sec. 3.3 and Fig. 1): shape only",
        "the early eye displacement grows with diameter, then saturates; the diameter is not verified "
        "(neither are the paper's diameters): psybench's reading, the response reaching 63 % of its "
        "centre's saturation at this diameter, the surround's scale twice it"),
    "grating_decline_fraction": HumanNumber(
        0.1, 0.0, 0.25, "fraction of the peak", "reading",
        "Barthelemy, Vanzetta & Masson 2006 (RR-7317 sec. 3.3: it 'slightly decreases')",
        "loss of the steady response from its peak to a very large grating; 'slightly' read as at most a "
        "quarter (the same reading as the criterion's decline_max)"),
}


def edges(name: str) -> tuple[float, float]:
    """``(low, high)`` of :data:`HUMAN` ``[name]`` (raises ``KeyError`` naming it)."""
    try:
        entry = HUMAN[name]
    except KeyError:
        raise KeyError(f"no human number {name!r}; known: {sorted(HUMAN)}") from None
    return entry.low, entry.high


def human_table() -> list[dict[str, object]]:
    """:data:`HUMAN` as rows (name, value, low, high, unit, kind, citation, measured, verified)."""
    return [{"name": k, **dataclasses.asdict(v)} for k, v in HUMAN.items()]
