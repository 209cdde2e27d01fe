"""Thresholds of the motion criteria, with their sources; overridable from ``motion.criteria``.

The rules are the same for every model: the thresholds come from the literature
(cited per key), never from any model's result (Tlapale et al. 2010, RR-7317 Table 1).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["CRITERIA_DEFAULTS", "merge_criteria"]

#: Thresholds of the criteria. Sources are given per key; override any of them in
#: the config under ``motion.criteria.<section>.<key>``.
CRITERIA_DEFAULTS: dict[str, dict[str, float]] = {
    "common": {
        # Wallace, Stone & Masson 2005: human pursuit of the diamonds converges in < 300 ms.
        "late_ms": 300.0,
        # Window of the perceived (steady-state) direction.
        "final_window_ms": 100.0,
        # Kass & Raftery 1995: Delta BIC > 2 is positive evidence for the larger model.
        "bic_margin": 2.0,
    },
    "diamonds": {
        # Initial bias toward the vector average: the diamonds' vector average is 44 deg
        # off (Masson & Stone 2002, RR-7317 sec. 3.2); requiring a quarter of it (10 deg)
        # separates "starts biased" from "starts right".
        "a_min_deg": 10.0,
        # Converged: final half-differential error within 5 deg of the true direction.
        "b_max_deg": 5.0,
        # Decay time constant in a biological range: above two 10 ms frames (faster than
        # any cortical transition; Pack & Born 2001: ~60 ms in MT) and below 500 ms (humans
        # converge in < 300 ms, Wallace et al. 2005).
        "tau_min_ms": 20.0,
        "tau_max_ms": 500.0,
        # The exponential must explain most of the variance of the time course.
        "r2_min": 0.7,
    },
    "dashed_bars": {
        "a_min_deg": 10.0,
        "b_max_deg": 5.0,
        "tau_min_ms": 20.0,
        "tau_max_ms": 500.0,
        "r2_min": 0.7,
        # Peak error grows with bar length (Lorenceau et al. 1993; Biber & Ilg 2008):
        # Spearman rho(length, peak error) must exceed this.
        "length_rho_min": 0.0,
        # Tiling a long bar helps (Lorenceau et al. 1993; Biber & Ilg 2008):
        # Spearman rho(number of tiles, peak error) must be below this.
        "tiles_rho_max": 0.0,
    },
    "barberpole": {
        # Further lower bound on the deviation from the grating normal toward the long axis,
        # as a fraction of the angle between them. 0: none beyond the ocular-following range
        # below (the earlier rule's 0.5, "closer to the long axis", is stricter than the pursuit
        # data at aspect ratio 2, whose terminator sum lies at a fraction 0.41; Masson et al. 2000).
        "min_fraction_toward_long_axis": 0.0,
        # Deviation toward the long axis must not decrease with aspect ratio (Masson et al.
        # 2000: the 2D component's size depends on the aspect ratio); a decrease smaller than
        # this tolerance (deg) counts as flat.
        "monotonic_tol_deg": 2.0,
        # The final direction must lie between the grating-plus-terminators and the
        # terminators-alone vector sums (Masson, Rybarczyk, Castet & Mestre 2000; computed by
        # psybench.motion.criteria.barberpole.ocular_following_range); this tolerance (deg) on
        # either bound is a resolution allowance of the readout, not a literature value.
        "range_tol_deg": 5.0,
        # A square aperture has no dominant axis: by symmetry the direction is the grating
        # normal (both vector sums are); tolerance (deg) as above.
        "square_tol_deg": 5.0,
    },
    "grating_size": {
        # Early window (ms) after the model's own response onset over which the pursuit
        # displacement is integrated: Barthelemy, Vanzetta & Masson 2006 measure the change in
        # eye position over the first tens of ms of ocular following (open loop), before
        # feedback; 40 ms is that order (the exact windows of the paper are not verified).
        "window_ms": 40.0,
        # Response onset of a model: the first time its pursuit speed along the motion reaches
        # this fraction of the series' largest speed (a latency criterion, as the eye-movement
        # literature defines onset by a threshold on velocity).
        "onset_fraction": 0.1,
        # Growth from the smallest diameter to the peak, relative to the peak, must be at
        # least this ("increases with diameter").
        "growth_min": 0.05,
        # Growth over the last diameter step, relative to the peak, must be at most this
        # ("then saturates or declines").
        "saturation_tol": 0.05,
        # Bounded decline: from the peak to the largest diameter the early response may fall
        # by at most this fraction of the peak (RR-7317 sec. 3.3 after Barthelemy et al. 2006:
        # it "slightly decreases" beyond the summation area; 0.25 is our reading of "slightly",
        # not a verified value).
        "decline_max": 0.25,
        # Integration area (separately reported): the smallest diameter whose response reaches
        # this fraction of the peak (RR-7317 sec. 3.3: "the smallest diameter leading to the
        # strongest change in eye position"); it must not shrink from the early window to the
        # next one of the same length (Barthelemy et al. 2006: integration grows with time).
        "area_fraction": 0.95,
    },
}


# ------------------------------------------------------------------------- config
def merge_criteria(overrides: Mapping[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """:data:`CRITERIA_DEFAULTS` updated with ``overrides`` (``{section: {key: value}}``).

    Raises
    ------
    ValueError
        For an unknown section or key, or a non-numeric value, naming it as
        ``criteria.<section>.<key>``.
    """
    out = copy.deepcopy(CRITERIA_DEFAULTS)
    for section, values in (overrides or {}).items():
        if section not in out:
            raise ValueError(f"criteria.{section}: unknown section; allowed {sorted(out)}")
        if not isinstance(values, Mapping):
            raise ValueError(f"criteria.{section} must be a mapping of thresholds")
        for key, value in values.items():
            if key not in out[section]:
                raise ValueError(f"criteria.{section}.{key}: unknown threshold; allowed {sorted(out[section])}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"criteria.{section}.{key} must be a finite number; got {value!r}")
            out[section][key] = float(value)
    return out
