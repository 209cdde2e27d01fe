"""Tilted and dashed bars: decay, length and tiling (Lorenceau et al. 1993; Biber & Ilg 2008;
Tlapale et al. 2010, RR-7317 sec. 3.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from psybench.motion.criteria.common import (
    _axis_toward,
    _decay_checks,
    _fit_curve,
    _late_abs,
    _lookup,
    _onset,
    _row,
    _spearman,
    _stimulus_param,
    _truth,
)
from psybench.motion.display import wrap_deg
from psybench.motion.readouts import nanmean_quiet

__all__ = ["score_dashed_bars"]


def _oriented_bar_error(name: str, data: Mapping[str, Any]) -> tuple[np.ndarray, str]:
    """Direction error signed toward the bar normal (the 1D, aperture-problem direction)."""
    stim = data["stimulus"]
    truth = _truth(stim)
    normal = _lookup(stim, ("normal_direction_deg", "bar_normal_deg", "one_d_direction_deg",
                            "vector_average_direction_deg", "grating_normal_deg"))
    err = data["direction_error_deg"]
    if normal is None:
        return np.abs(err), "abs (stimulus gives no normal direction)"
    s = np.sign(wrap_deg(_axis_toward(float(normal), truth) - truth))
    if s == 0:
        return np.abs(err), "abs (normal equals the true direction)"
    return s * err, "toward the bar normal"


def score_dashed_bars(
    model: str, readouts: Mapping[str, Mapping[str, Any]], criteria: Mapping[str, Any],
    literature: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Tilted bars and dashed bars (Lorenceau et al. 1993; Biber & Ilg 2008; Born et al. 2006).

    Rule
    ----
    For each stimulus, the direction error is signed so that positive points
    toward the bar normal (the 1D motion); its peak is the maximum of that
    oriented error over time. **Pass** iff all of:

    (a1) decay: on the longest tilted bar (family ``bar``), the oriented error,
         fitted by one or two exponentials (Born et al. 2006: at most two),
         starts biased (``A >= a_min_deg``, 10), converges (``|B| <= b_max_deg``, 5),
         with ``tau`` in [``tau_min_ms``, ``tau_max_ms``] (20-500 ms; monkeys align
         ~300 ms after onset, Pack & Born 2001 / Born et al. 2006) and
         ``R^2 >= r2_min``; and every tilted bar converges (``|B| <= b_max_deg``);
    (a2) length: Spearman rho(length, peak error) > ``length_rho_min`` (0): "as the
         bar length is increased, it becomes more complicated to recover its true
         direction" (RR-7317 sec. 3.2);
    (b)  tiling: over the dashed bars (family ``dashed_bar``, fixed total length),
         Spearman rho(number of tiles, peak error) < ``tiles_rho_max`` (0): "it is
         easier to pursue one long bar if it is tiled into several sub bars"
         (Lorenceau et al. 1993; Biber & Ilg 2008). RR-7317 suggests the slope of
         the *peak* error against length and tiles, hence peaks in (a2) and (b).

    Continuous error (deg): mean over all bar and dashed-bar stimuli of the late
    ``|direction error|`` (>= 300 ms after onset) plus the shortfall
    ``max(0, a_min_deg - A)`` of the longest bar's initial bias.
    """
    c = {**criteria["common"], **criteria["dashed_bars"]}
    bars, dashed = [], []
    fit_rows, late = [], []
    for name, data in readouts.items():
        stim = data["stimulus"]
        fam = stim.get("family")
        oriented, how = _oriented_bar_error(name, data)
        peak = float(np.nanmax(oriented)) if np.isfinite(oriented).any() else float("nan")
        t = data["t_ms"]
        t_on = _onset(oriented, t)
        late.append(_late_abs(data["direction_error_deg"], t, t_on, c))
        if fam == "bar":
            length = _stimulus_param(stim, ("length_deg", "bar_length_deg", "length"), "bar length")
            fit_row, sel = _fit_curve("dashed_bars", model, name, "bar", t, oriented, criteria["common"], literature)
            fit_rows.append(fit_row)
            bars.append({"stimulus": name, "length_deg": length, "peak_deg": peak, "orientation": how,
                         "decay": _decay_checks(sel, c)})
        elif fam == "dashed_bar":
            n_tiles = _stimulus_param(stim, ("n_tiles", "tiles", "n_segments"), "tile count")
            fit_row, _ = _fit_curve("dashed_bars", model, name, "dashed_bar", t, oriented, criteria["common"],
                                    literature)
            fit_rows.append(fit_row)
            dashed.append({"stimulus": name, "n_tiles": n_tiles, "peak_deg": peak, "orientation": how})
        else:
            raise ValueError(f"stimulus {name!r}: family {fam!r} is not 'bar' or 'dashed_bar'")
    if len(bars) < 2 or len(dashed) < 2:
        raise ValueError(f"dashed_bars needs >= 2 tilted bars and >= 2 dashed bars; got {len(bars)} and {len(dashed)}")
    bars.sort(key=lambda b: b["length_deg"])
    dashed.sort(key=lambda b: b["n_tiles"])
    longest = bars[-1]["decay"]
    all_converge = all(b["decay"]["checks"]["converges"] for b in bars)
    decay_ok = all(longest["checks"].values()) and all_converge
    rho_len = _spearman([b["length_deg"] for b in bars], [b["peak_deg"] for b in bars])
    rho_tiles = _spearman([b["n_tiles"] for b in dashed], [b["peak_deg"] for b in dashed])
    length_ok = bool(np.isfinite(rho_len) and rho_len > c["length_rho_min"])
    tiles_ok = bool(np.isfinite(rho_tiles) and rho_tiles < c["tiles_rho_max"])
    A = longest["A"]
    shortfall = max(0.0, c["a_min_deg"] - A) if np.isfinite(A) else c["a_min_deg"]
    late_mean = float(nanmean_quiet(np.array(late)))
    error = late_mean + shortfall if np.isfinite(late_mean) else float("nan")
    details = {
        "rule": "(a1) longest bar's error decays (A>=a_min, |B|<=b_max, tau in range, R2) and all bars converge; "
                "(a2) Spearman(length, peak) > length_rho_min; (b) Spearman(tiles, peak) < tiles_rho_max",
        "checks": {"decay": bool(decay_ok), "all_bars_converge": bool(all_converge),
                   "peak_grows_with_length": length_ok, "tiling_reduces_peak": tiles_ok},
        "rho_length_peak": rho_len, "rho_tiles_peak": rho_tiles,
        "bars": bars, "dashed_bars": dashed, "late_abs_error_deg": late_mean,
        "initial_bias_shortfall_deg": shortfall, "thresholds": c,
    }
    return _row("dashed_bars", model, decay_ok and length_ok and tiles_ok, error, details), fit_rows
