"""The reference observer ``people``: published human behaviour through the models' readouts and criteria.

If people at any edge of a published range fail a criterion, the criterion (or its
source) is too strict (Tlapale et al. 2010, RR-7317 sec. 2.4: the ground truth is
the human behaviour).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from psybench.motion.criteria.barberpole import ocular_following_range
from psybench.motion.human_behaviour import HUMAN, edges
from psybench.motion.models.people import people_velocity
from psybench.registry import get_algorithm

# A small display that still holds every default stimulus (32 x 32 deg), at the default
# run's duration, frame rate and two directions: people need the full 500 ms.
SMALL = {
    "display": {"px_per_deg": 4, "frames_per_s": 100, "width_px": 128, "height_px": 128, "supersample": 1},
    "tracks": ["motion"],
    "motion": {"directions_deg": [0, 15], "models": [{"name": "people", "algorithm": "people"}]},
}
RANGES = {  # people's keyword -> the HUMAN range it moves within
    "diamond_transition_ms": "diamond_transition_ms",
    "bar_transition_min_ms": "bar_transition_ms",
    "bar_transition_max_ms": "bar_transition_ms",
    "barberpole_2d_delay_ms": "barberpole_2d_delay_ms",
    "barberpole_final_ms": "barberpole_final_ms",
    "barberpole_final_fraction": "barberpole_final_fraction",
    "grating_decline_fraction": "grating_decline_fraction",
}


def _t(n=61, frame_ms=10.0):
    return np.arange(n) * frame_ms


def _direction(vel):
    return np.degrees(np.arctan2(vel[:, 1], vel[:, 0]))


def _diamond(contrast=1.0, speed=10.0):
    return {"family": "diamond", "truth": {"direction_deg": 0.0, "speed_deg_s": speed},
            "params": {"contrast": contrast}, "vector_average_direction_deg": 44.0}


def test_diamond_starts_biased_toward_the_vector_average_and_converges_within_its_transition():
    t = _t()
    vel = people_velocity(_diamond(), t, diamond_transition_ms=300.0)
    latency = HUMAN["pursuit_latency_ms"].value
    assert np.all(vel[t < latency] == 0.0)  # nothing before the latency
    d = _direction(vel)
    bias = 44.0 * HUMAN["diamond_reference_bias_fraction"].value  # at contrast 1 and 10 deg/s
    assert d[t == latency][0] == pytest.approx(bias)
    assert d[t == latency + 300.0][0] == pytest.approx(bias * math.exp(-3.0))  # 95 % done at the transition
    assert np.allclose(np.hypot(*vel[t >= latency].T), 10.0)


@pytest.mark.parametrize(("low", "high"), [((1.0, 10.0), (0.1, 10.0)), ((1.0, 5.0), (1.0, 20.0))])
def test_diamond_error_is_larger_and_slower_at_low_contrast_and_high_speed(low, high):
    """Wallace, Stone & Masson 2005 (the generalisation table's dependence rows): an ordering."""
    t = _t()
    a, b = (_direction(people_velocity(_diamond(*x), t)) for x in (low, high))
    on = t >= HUMAN["pursuit_latency_ms"].value
    assert 44.0 > b[on][0] > a[on][0] > 10.0
    assert b[on][5] / b[on][0] > a[on][5] / a[on][0]  # decays more slowly


def test_bars_peak_grows_with_length_and_tiling_reduces_it():
    def peak(family, **attrs):
        stim = {"family": family, "truth": {"direction_deg": 0.0, "speed_deg_s": 10.0},
                "normal_direction_deg": 315.0, **attrs}
        return float(np.max(np.abs(_direction(people_velocity(stim, _t())))))

    lengths = [peak("bar", length_deg=x) for x in (2, 4, 8, 16, 20)]
    assert lengths == sorted(lengths)
    assert lengths[-1] == pytest.approx(HUMAN["bar_peak_error_deg"].value)  # Biber & Ilg 2008, 20 deg bar
    tiles = [peak("dashed_bar", tile_length_deg=16 / n) for n in (1, 2, 4)]
    assert tiles == sorted(tiles, reverse=True)


@pytest.mark.parametrize("fraction", [0.0, 1.0])
def test_barberpole_final_direction_is_the_published_bound(fraction):
    stim = {"family": "barberpole", "truth": {"direction_deg": 0.0, "speed_deg_s": 5.0},
            "params": {"aspect_ratio": 2.0}, "long_axis_deg": 45.0}
    d = _direction(people_velocity(stim, _t(), barberpole_final_fraction=fraction))
    lo, hi = ocular_following_range(2.0, 45.0)  # Masson et al. 2000's two vector sums
    assert d[-1] == pytest.approx(lo if fraction == 0 else hi, abs=1e-6)


def test_people_parameters_are_bounded_by_the_published_ranges():
    algo = get_algorithm("people")
    for keyword, name in RANGES.items():
        assert algo.bounds[keyword] == edges(name)
        assert edges(name)[0] <= algo.defaults[keyword] <= edges(name)[1]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    import psybench

    work = tmp_path_factory.mktemp("people")
    psybench.score("people", overrides=SMALL, workdir=work, progress=False)
    return work


@pytest.mark.parametrize("edge", ["low", "high"])
def test_people_pass_every_criterion_at_the_edges_of_each_published_range(rendered, tmp_path, edge):
    import psybench

    params = {k: edges(name)[0 if edge == "low" else 1] for k, name in RANGES.items()}
    psybench.score("people", params=params, overrides=SMALL, workdir=tmp_path, progress=False,
                   stimuli=rendered / "stimuli")
    table = pd.read_csv(tmp_path / "table1.csv")
    assert len(table) == 4
    failed = table.loc[~table["passed"], ["experiment", "error"]]
    assert failed.empty, f"people at the {edge} edges fail {failed.to_dict('records')}"


def test_docs_list_every_human_number_with_its_value_and_source():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "models.md").read_text(encoding="utf-8")
    for name, entry in HUMAN.items():
        line = next((x for x in text.splitlines() if x.startswith(f"| `{name}` |")), None)
        assert line is not None, f"docs/models.md lacks the human number {name}"
        assert f"| {entry.value:g} {entry.unit} |" in line and entry.citation in line


def test_people_row_in_the_workflow_table1_and_generalisation(harness, tmp_path):
    """Through Snakemake: people's rows of Table 1 and of the generalisation table all pass."""
    import copy

    from psybench.motion import EXPERIMENTS

    cfg = copy.deepcopy(harness.tiny_config(
        duration_ms=500,  # people's pursuit starts at 100 ms: the tiny config's 200 ms leave no time to converge
        diamonds={"speed_deg_s": 10, "size_deg": 8, "line_width_deg": 0.5},
        bars={"speed_deg_s": 10, "width_deg": 0.5, "tilt_deg": 45, "lengths_deg": [2, 4, 8, 16]},
        dashed_bars={"length_deg": 16, "n_tiles": [1, 2, 4, 8], "gap_fraction": 0.3},
        barberpole={"aspect_ratios": [1, 2, 3], "short_side_deg": 6, "sf_cpd": 0.5, "speed_deg_s": 5},
        gratings={"diameters_deg": [1, 2, 4, 8, 16, 28], "sf_cpd": 0.27, "speed_deg_s": 37},
        models=[{"name": "people", "algorithm": "people"}],
        # every experiment at the held-out levels (speed: the families with a speed parameter)
        generalisation={"directions_deg": [0],
                        "contrast": {"levels": [0.1], "experiments": list(EXPERIMENTS)},
                        "speed_deg_s": {"levels": [5, 20], "experiments": ["diamonds", "dashed_bars"]},
                        "frames_per_s": {"levels": [50, 200], "experiments": list(EXPERIMENTS)}},
    ))
    cfg["display"] = dict(SMALL["display"])
    work = harness.copy(tmp_path / "wf", cfg)
    generalisation = "results/aggregate/motion_generalisation.csv"
    harness.run(work, "--cores", "1", harness.table, generalisation)
    table = pd.read_csv(work / harness.table)
    assert set(table["model"]) == {"people"} and len(table) == 4
    assert table["passed"].all(), table[["experiment", "passed", "error"]].to_dict("records")
    held = pd.read_csv(work / generalisation)
    # 4 experiments x 2 contrasts, 2 x 3 speeds, 4 x 3 frame rates, and the two dependence rows
    # (Wallace, Stone & Masson 2005: larger and slower at low contrast and high speed); the display-scale
    # rows the schema's default adds are counted apart
    scale = held["nuisance"] == "px_per_deg"
    assert (~scale).sum() == 8 + 6 + 12 + 2 and {"diamonds_contrast_dependence", "diamonds_speed_dependence"} <= set(
        held["experiment"])
    assert held["passed"].all(), held.loc[~held["passed"], ["experiment", "nuisance", "level"]].to_dict("records")


def test_people_refuse_bar_transitions_out_of_order_and_unknown_families():
    from psybench.motion.display import Display
    from psybench.motion.models.people import people

    display = Display.from_config({"px_per_deg": 4, "frames_per_s": 100, "width_px": 8, "height_px": 8})
    chunks = [np.zeros((4, 8, 8), np.float32)]
    stim = _diamond()
    with pytest.raises(ValueError, match="bar_transition_min_ms"):
        next(people(chunks, display=display, stimulus=stim, bar_transition_min_ms=300.0, bar_transition_max_ms=100.0))
    with pytest.raises(ValueError, match="plaid"):
        people_velocity({"family": "plaid", "truth": {"direction_deg": 0.0, "speed_deg_s": 1.0}}, _t())
    (block,) = people(chunks, display=display, stimulus=stim)
    assert block["flow"].shape == (4, 8, 8, 2) and not block["flow"].any()  # all before the 100 ms latency
