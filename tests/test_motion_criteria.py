"""Motion criteria on synthetic readouts with known answers.

Barber-pole against the ocular-following range (Masson et al. 2000), grating size in a
window tied to the model's own onset with a bounded decline and the integration area,
per-direction verdicts (pass only at every direction), and the generalisation table
with the contrast and speed dependence of the diamond error (Wallace et al. 2005).
"""

import json
import math

import numpy as np
import pandas as pd
import pytest

from psybench.motion.criteria import CRITERIA_DEFAULTS
from psybench.motion.criteria.barberpole import ocular_following_range
from psybench.motion.criteria.directions import combine_directions, direction_tag, motion_direction
from psybench.motion.criteria.grating_size import integration_area_growth
from psybench.motion.generalisation import (
    GENERALISATION_COLUMNS,
    dependence_rows,
    generalisation_table,
    generalisation_variants,
)
from psybench.motion.scores import score_model

FRAME_MS = 10.0
T = np.arange(50) * FRAME_MS


def _readout(stim, err, speed=None, onset=2):
    err = np.asarray(err, dtype=float).copy()
    err[:onset] = np.nan
    speed = np.full(T.size, 10.0) if speed is None else np.asarray(speed, dtype=float).copy()
    speed[:onset] = 0.0
    truth = stim["truth"]["direction_deg"]
    direction = np.where(np.isfinite(err), ((truth + err + 180) % 360) - 180, np.nan)
    return {"t_ms": T, "direction_deg": direction, "direction_error_deg": err, "speed_deg_s": speed,
            "stimulus": stim}


# ------------------------------------------------------------------ barber-pole
def test_ocular_following_range_is_the_vector_sums():
    for ar in (1.0, 2.0, 3.0, 5.0):
        lo, hi = ocular_following_range(ar)
        # terminators alone: atan(1/AR) from the long axis, i.e. 45 - atan(1/AR) from the normal
        assert hi == pytest.approx(45.0 - math.degrees(math.atan(1.0 / ar)), abs=1e-9)
        assert 0.0 <= lo <= hi + 1e-12
    assert ocular_following_range(1.0) == pytest.approx((0.0, 0.0), abs=1e-9)
    # AR 2 by hand: terminators (2, 1) * sqrt(2) / 3 plus the grating's (1, 1) / sqrt(2)
    v = np.array([2.0, 1.0]) * math.sqrt(2) / 3 + np.array([1.0, 1.0]) / math.sqrt(2)
    assert ocular_following_range(2.0)[0] == pytest.approx(45.0 - math.degrees(math.atan2(v[1], v[0])))
    with pytest.raises(ValueError, match="grating normal and long axis"):
        ocular_following_range(2.0, 90.0)


def _barberpoles(devs, rotation=0.0):
    out = {}
    for ar, dev in devs.items():
        stim = {"name": f"bp{ar}", "family": "barberpole", "experiment": "barberpole",
                "truth": {"direction_deg": rotation + 45.0},
                "params": {"aspect_ratio": ar, "aperture_orientation_deg": rotation},
                "grating_normal_deg": rotation + 45.0, "long_axis_deg": rotation}
        # the long axis lies at -45 deg from the normal: a deviation toward it is negative
        out[stim["name"]] = _readout(stim, np.where(T < 150, 0.0, -dev))
    return out


@pytest.mark.parametrize("devs,passed,check", [
    ({1: 0.0, 2: 14.0, 3: 20.0}, True, None),                                   # inside the range
    ({1: 0.0, 2: 40.0, 3: 44.0}, False, "within_ocular_following_range"),       # at the long axis: too far
    ({1: 0.0, 2: 0.0, 3: 0.0}, False, "within_ocular_following_range"),         # the grating normal only
    ({1: 12.0, 2: 14.0, 3: 20.0}, False, "square_reads_normal"),                # square off the normal
    ({1: 0.0, 2: 18.0, 3: 14.5}, False, "non_decreasing_with_aspect"),          # in range, not monotonic
])
def test_barberpole_range_square_and_monotonicity(devs, passed, check):
    for rotation in (0.0, 15.0):
        row = score_model("m", _barberpoles(devs, rotation))[0].iloc[0]
        assert bool(row["passed"]) is passed, (devs, rotation, row["details"]["checks"])
        if check:
            assert not row["details"]["checks"][check]
        # graded: 0 inside every range, the distance outside it otherwise
        assert (abs(float(row["error"])) < 1e-6) == (passed or check == "non_decreasing_with_aspect")


# ------------------------------------------------------------------ grating size
def _gratings(gain, delay_ms=0.0, tau_fn=lambda D: 50.0):
    out = {}
    for D in (1, 2, 4, 8, 16, 28):
        stim = {"name": f"g{D}", "family": "grating", "experiment": "grating_size", "truth": {"direction_deg": 0.0},
                "params": {"diameter_deg": D, "direction_deg": 0.0}}
        tt = np.clip(T - delay_ms, 0, None)
        speed = 20.0 * gain(D) * (1 - np.exp(-tt / tau_fn(D)))
        out[stim["name"]] = _readout(stim, np.zeros(T.size), speed=speed)
    return out


def human_gain(D):
    return D / (D + 2.0) * np.exp(-D / 60.0)  # grows, peaks near 10 deg, declines 16 % by 28 deg


def test_grating_window_is_tied_to_the_models_onset():
    early = score_model("m", _gratings(human_gain))[0].iloc[0]
    late = score_model("m", _gratings(human_gain, delay_ms=150.0))[0].iloc[0]
    assert bool(early["passed"]) and bool(late["passed"])
    d0, d1 = early["details"], late["details"]
    assert d1["t_onset_ms"] - d0["t_onset_ms"] == pytest.approx(150.0, abs=FRAME_MS)
    assert d0["window_ms"][1] - d0["window_ms"][0] == CRITERIA_DEFAULTS["grating_size"]["window_ms"] == 40.0
    r0 = [s["early_displacement_deg"] for s in d0["series"]]
    r1 = [s["early_displacement_deg"] for s in d1["series"]]
    np.testing.assert_allclose(r1, r0, rtol=0.2)  # the same response, measured from its own onset


def test_grating_decline_is_bounded_and_growth_required():
    steep = score_model("m", _gratings(lambda D: D / (D + 2.0) * np.exp(-D / 25.0)))[0].iloc[0]
    assert not steep["passed"] and not steep["details"]["checks"]["bounded_decline"]
    assert steep["details"]["relative_decline_peak_to_last"] > 0.25 and steep["error"] > 0
    flat = score_model("m", _gratings(lambda D: 1.0))[0].iloc[0]
    assert not flat["passed"] and not flat["details"]["checks"]["grows"]
    growing = score_model("m", _gratings(lambda D: D))[0].iloc[0]  # no saturation
    assert not growing["passed"] and not growing["details"]["checks"]["saturates"]


def test_integration_area_growing_with_time_is_reported_separately():
    d = np.array([1, 2, 4, 8, 16, 28.0])
    early = np.array([1, 2, 3, 4, 3.9, 3.5])
    later = np.array([1, 2, 3, 4, 5, 5.0])
    grows = integration_area_growth(d, early, later, 0.95)
    assert grows["passed"] and grows["early_area_deg"] == 8 and grows["later_area_deg"] == 16
    assert grows["error"] == 0.0
    shrinks = integration_area_growth(d, later, early, 0.95)
    assert not shrinks["passed"] and shrinks["error"] == pytest.approx(1.0)  # one octave
    # in the score table: separate columns, the Table 1 verdict untouched
    slow_big = _gratings(human_gain, tau_fn=lambda D: 20.0 + 10.0 * D)  # big apertures build up later
    row = score_model("m", slow_big)[0].iloc[0]
    assert "integration_passed" in row.index and bool(row["integration_passed"])
    # early response peaks at 16 deg, later at 4 deg: the integration area shrinks with time
    shrinking = {}
    for name, r in _gratings(human_gain).items():
        D = r["stimulus"]["params"]["diameter_deg"]
        early_gain, late_gain = min(D, 16) / 16.0, 1.0 / (1.0 + abs(np.log2(D / 4.0)))
        speed = np.where(T < 70.0, 20.0 * early_gain, 20.0 * late_gain)
        shrinking[name] = _readout(r["stimulus"], np.zeros(T.size), speed=speed)
    row2 = score_model("m", shrinking)[0].iloc[0]
    assert row2["details"]["integration"]["early_area_deg"] == 16.0
    assert row2["details"]["integration"]["later_area_deg"] == 4.0
    assert not bool(row2["integration_passed"]) and row2["integration_error"] > 0


# ------------------------------------------------------------------ directions
def _diamonds(kind_by_direction):
    out = {}
    tt = T - T[2]
    for d, kind in kind_by_direction.items():
        for hand, s in (("cw", 1.0), ("ccw", -1.0)):
            stim = {"name": f"diamond_{hand}_dir{d:03d}", "family": "diamond", "experiment": "diamonds",
                    "truth": {"direction_deg": float(d)}, "handedness": hand,
                    "params": {"direction_deg": float(d)}, "vector_average_direction_deg": float(d) + s * 44.0}
            err = s * (30.0 * np.exp(-tt / 80.0) + 0.5) if kind == "human" else np.full(T.size, s * 44.0)
            out[stim["name"]] = _readout(stim, err)
    return out


def test_a_model_passes_only_if_it_passes_at_every_direction():
    both = score_model("m", _diamonds({0: "human", 15: "human"}))[0].iloc[0]
    assert bool(both["passed"]) and both["n_directions"] == 2
    assert bool(both["passed_dir000"]) and bool(both["passed_dir015"])
    one = score_model("m", _diamonds({0: "human", 15: "static"}))[0].iloc[0]
    assert not one["passed"] and bool(one["passed_dir000"]) and not one["passed_dir015"]
    assert one["error"] == max(one["error_dir000"], one["error_dir015"])
    assert one["details"]["decisive_direction_deg"] == 15.0
    by = {b["direction_deg"]: b for b in one["details"]["by_direction"]}
    assert by[0.0]["tau_ms"] == pytest.approx(80.0, rel=1e-3) and by[0.0]["A"] == pytest.approx(30.0, rel=1e-3)
    fits = score_model("m", _diamonds({0: "human", 15: "static"}))[1]
    assert sorted(fits["direction_deg"]) == [0.0, 15.0]


def test_combine_directions_and_names():
    rows = [(0.0, {"experiment": "e", "model": "m", "passed": True, "error": 1.0, "details": {}}),
            (22.5, {"experiment": "e", "model": "m", "passed": True, "error": float("nan"), "details": {}})]
    out = combine_directions(rows)
    assert out["passed"] and math.isnan(out["error"])  # a gap is not a success
    assert "passed_dir022p5" in out and direction_tag(15) == "dir015"
    with pytest.raises(ValueError):
        combine_directions([])
    bp = {"family": "barberpole", "params": {"aperture_orientation_deg": 375.0}, "truth": {"direction_deg": 60.0}}
    assert motion_direction(bp) == 15.0
    assert motion_direction({"family": "bar", "params": {"direction_deg": -15.0}}) == 345.0


# ------------------------------------------------------------------ generalisation
def _config(**gen):
    from psybench.config import check_schema

    cfg = check_schema({"tracks": ["motion"], "motion": {"generalisation": gen}})
    return cfg


def test_generalisation_variants_change_one_nuisance_each():
    cfg = _config()
    v = generalisation_variants(cfg)
    assert set(v) == {"contrast_000p1", "speed_deg_s_005", "speed_deg_s_020", "frames_per_s_050",
                      "frames_per_s_200", "px_per_deg_012"}
    assert v["frames_per_s_200"]["display"]["frames_per_s"] == 200
    # a second display scale: 12 px/deg, the frame grown to keep its 32 x 32 deg field of view
    scaled = v["px_per_deg_012"]["display"]
    assert (scaled["px_per_deg"], scaled["width_px"], scaled["height_px"]) == (12.0, 384, 384)
    assert scaled["frames_per_s"] == cfg["display"]["frames_per_s"]
    assert v["contrast_000p1"]["display"] == cfg["display"]
    assert set(v["contrast_000p1"]["stimuli"]) == {"diamond_cw_dir000", "diamond_ccw_dir000"}
    assert v["contrast_000p1"]["stimuli"]["diamond_cw_dir000"]["params"]["contrast"] == 0.1
    assert v["speed_deg_s_020"]["stimuli"]["diamond_cw_dir000"]["params"]["speed_deg_s"] == 20.0
    # a level equal to the main run's is its baseline, not a re-run
    same = generalisation_variants(_config(contrast={"levels": [1.0, 0.3]}))
    assert "contrast_001" not in same and "contrast_000p3" in same
    # the barber-pole's main run is at 5 deg/s: only the diamonds are re-run there, both at 20
    both = generalisation_variants(_config(speed_deg_s={"levels": [5, 20], "experiments": ["diamonds", "barberpole"]}))
    assert both["speed_deg_s_005"]["experiments"] == ["diamonds"]
    assert not any(k.startswith("barberpole") for k in both["speed_deg_s_005"]["stimuli"])
    assert both["speed_deg_s_020"]["experiments"] == ["diamonds", "barberpole"]


def _write_scores(path, model, passed, error, A, tau, by_direction=True, checks=None):
    details = {"A": A, "tau_ms": tau}
    if checks is not None:
        details.update(checks=checks, decisive_direction_deg=0.0)
    if by_direction:
        details["by_direction"] = [{"direction_deg": 0.0, "passed": passed, "error": error, "A": A, "tau_ms": tau}]
    pd.DataFrame({"experiment": ["diamonds"], "model": [model], "passed": [passed], "error": [error],
                  "details": [json.dumps(details)]}).to_csv(path, index=False)
    return path


def test_generalisation_table_known_case(tmp_path):
    cfg = _config(speed_deg_s={"levels": []}, frames_per_s={"levels": []}, contrast={"levels": [0.1, 0.3]},
                  px_per_deg={"levels": []})
    main = [_write_scores(tmp_path / "main.csv", "m", True, 2.0, 30.0, 100.0)]
    variants = {"contrast_000p1": [_write_scores(tmp_path / "c01.csv", "m", True, 3.0, 40.0, 180.0)],
                "contrast_000p3": [_write_scores(tmp_path / "c03.csv", "m", False, 9.0, 35.0, 140.0)]}
    table = generalisation_table(main, variants, cfg)
    assert list(table.columns) == GENERALISATION_COLUMNS
    runs = table[table["experiment"] == "diamonds"]
    assert list(runs["level"]) == [0.1, 0.3, 1.0] and list(runs["baseline"]) == [False, False, True]
    assert list(runs["passed"]) == [True, False, True] and list(runs["error"]) == [3.0, 9.0, 2.0]
    assert list(runs["verdict_changed"]) == [False, True, False]  # 0.3 fails where the baseline passes
    dep = table[table["experiment"] == "diamonds_contrast_dependence"].iloc[0]
    assert bool(dep["passed"]) and dep["error"] == 0.0  # larger and slower at low contrast
    with pytest.raises(ValueError, match="unknown variant"):
        generalisation_table(main, {"contrast_000p5": []}, cfg)


def test_every_verdict_change_is_flagged_with_its_cause(tmp_path):
    """A cell that passes where the baseline fails is flagged as much as one that fails where it passes."""
    cfg = _config(speed_deg_s={"levels": [5, 20]}, frames_per_s={"levels": []}, contrast={"levels": []},
                  px_per_deg={"levels": []})
    ok = {"initial_bias": True, "converges": True}
    main = [_write_scores(tmp_path / "main.csv", "m", False, 17.9, 34.6, 369.0,
                          checks={"initial_bias": True, "converges": False})]
    variants = {"speed_deg_s_005": [_write_scores(tmp_path / "s5.csv", "m", False, 20.0, 30.0, 300.0,
                                                  checks={"initial_bias": True, "converges": False})],
                "speed_deg_s_020": [_write_scores(tmp_path / "s20.csv", "m", True, 3.87, 25.0, 120.0, checks=ok)]}
    table = generalisation_table(main, variants, cfg)
    runs = table[table["experiment"] == "diamonds"].set_index("level")
    assert list(runs["verdict_changed"]) == [False, False, True]  # 5 (fails like the baseline), 10, 20
    cause = runs.loc[20.0, "cause"]
    assert "passes at speed_deg_s 20, fails at the baseline 10" in cause
    assert "error 17.9 -> 3.87" in cause and "converges False -> True" in cause
    assert "A 34.6 -> 25 deg" in cause and "tau 369 -> 120 ms" in cause
    assert list(runs["cause"])[:2] == ["", ""]
    # the other way round: a pass at the baseline that fails at a level is flagged too
    main = [_write_scores(tmp_path / "main2.csv", "m", True, 2.0, 30.0, 100.0, checks=ok)]
    table = generalisation_table(main, {"speed_deg_s_020": variants["speed_deg_s_005"]}, cfg)
    row = table[(table["experiment"] == "diamonds") & (table["level"] == 20.0)].iloc[0]
    assert bool(row["verdict_changed"]) and "converges True -> False" in row["cause"]


def test_dependence_rows_grade_the_orderings():
    def table(nuisance, levels, A, tau):
        return pd.DataFrame({"model": "m", "experiment": "diamonds", "nuisance": nuisance, "level": levels,
                             "A_deg": A, "tau_ms": tau})

    human_speed = dependence_rows(table("speed_deg_s", [5, 10, 20], [20, 30, 40], [60, 100, 150])).iloc[0]
    assert human_speed["experiment"] == "diamonds_speed_dependence"
    assert bool(human_speed["passed"]) and human_speed["error"] == 0.0
    # the tlapale pattern: A and tau shrink at low contrast (opposite to people)
    reversed_contrast = dependence_rows(table("contrast", [0.05, 0.1, 0.3, 1.0], [30.2, 37.5, 43.3, 46.8],
                                              [16.5, 51, 127, 177])).iloc[0]
    assert not reversed_contrast["passed"] and reversed_contrast["error"] == 1.0
    half = dependence_rows(table("speed_deg_s", [5, 20], [20, 40], [150, 60])).iloc[0]
    assert not half["passed"] and half["error"] == 0.5
    missing = dependence_rows(table("speed_deg_s", [5, 20], [20, np.nan], [60, 150])).iloc[0]
    assert not missing["passed"] and missing["error"] == 1.0
    # the right orderings without any initial bias (A below the diamonds' 10 deg) show no error to compare
    unbiased = dependence_rows(table("contrast", [0.3, 1.0], [-0.9, -2.6], [46.9, 31.6])).iloc[0]
    assert not unbiased["passed"] and unbiased["error"] == 1.0


def test_generalisation_level_that_does_not_fit_names_its_key():
    with pytest.raises(ValueError, match=r"motion\.generalisation\.speed_deg_s\.levels\[1\] \(200\)"):
        generalisation_variants(_config(speed_deg_s={"levels": [5, 200]}))
    from psybench.config import ConfigError

    with pytest.raises(ConfigError, match=r"motion\.generalisation\.contrast\.levels\[0\]"):
        _config(contrast={"levels": [1.5]})


def test_score_rows_key_fits_by_direction(tmp_path):
    from psybench.motion.score_rows import score_rows

    t1 = tmp_path / "t1.csv"
    pd.DataFrame({"experiment": ["diamonds"], "model": ["m"], "passed": [True], "error": [1.0],
                  "passed_dir000": [True], "passed_dir015": [True]}).to_csv(t1, index=False)
    fits = tmp_path / "fits.csv"
    pd.DataFrame({"experiment": ["diamonds", "diamonds"], "model": ["m", "m"], "curve": ["half_differential"] * 2,
                  "gaussian_score": [0.5, 0.7], "direction_deg": [0.0, 15.0]}).to_csv(fits, index=False)
    rows = score_rows(t1, fits=[fits])
    g = rows[rows["metric"] == "gaussian_score"].set_index("experiment")["value"]
    assert g.to_dict() == {"diamonds/half_differential": 0.5, "diamonds/half_differential/dir015": 0.7}


def test_average_ranks_are_scipys_rankdata():
    """The dashed bars' rank correlation ranks as scipy.stats.rankdata does (the oracle), ties included."""
    from scipy.stats import rankdata

    from psybench.motion.criteria.common import _average_ranks

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 7, 30):
        for a in (rng.normal(size=n), rng.integers(0, 4, n).astype(float), np.full(n, 2.5)):
            assert np.array_equal(_average_ranks(a), rankdata(a))
