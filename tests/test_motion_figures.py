"""Tests of psybench.motion.figures: per-direction curves and the human reference next to the model."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import psybench.motion.figures as figures
from psybench.io.store import ArraySpec, write_store
from psybench.motion.display import Display
from psybench.motion.literature import human_reference, load_literature
from psybench.motion.scores import score_model

T = np.arange(60) * 10.0

LITERATURE = """
parameters:
  diamonds:
    half_differential:
      A: {value: 30.0, sigma: 5.0, sigma_source: test, citation: "Test & Author (2001)", measured: x}
      tau_ms: {value: 100.0, sigma: 20.0, sigma_source: test, citation: "Test & Author (2001)", measured: x}
      B: {value: 0.0, sigma: 2.0, sigma_source: test, citation: "Other (2002)", measured: x}
facts:
  diamonds:
    convergence_time_ms: {value: 300.0, kind: bound, citation: "Bound (2005)", measured: x}
"""


def _diamonds():
    out = {}
    for d in (0.0, 90.0):
        for hand, s in (("cw", 1.0), ("ccw", -1.0)):
            err = s * ((30.0 if d == 0 else 20.0) * np.exp(-T / 80.0) + 0.5)
            stim = {"name": f"diamond_{hand}_{d:03.0f}", "family": "diamond", "experiment": "diamonds",
                    "handedness": hand, "direction_deg": d, "truth": {"direction_deg": d},
                    "vector_average_direction_deg": d + s * 44.0}
            out[stim["name"]] = {"t_ms": T, "direction_error_deg": err, "direction_deg": d + err,
                                 "speed_deg_s": np.full(T.size, 10.0), "stimulus": stim}
    return out


def _readout_stores(tmp_path, readouts):
    """The readouts' stores under ``tmp_path`` (as the readout stage writes them) and their s.csv, f.csv."""
    display = Display(frames_per_s=100.0)
    paths = []
    for name, r in readouts.items():
        arrays = {k: ArraySpec(np.asarray(r[k], dtype=np.float64), ("t",))
                  for k in ("direction_error_deg", "speed_deg_s")}
        paths.append(write_store(tmp_path / f"{name}.zarr", arrays, {
            "display": display.to_attrs(), "stimulus": r["stimulus"], "model": {"name": "m"}}))
    scores, fits = score_model("m", readouts)
    scores["details"] = scores["details"].map(str)
    scores.to_csv(tmp_path / "s.csv", index=False)
    fits.to_csv(tmp_path / "f.csv", index=False)
    return paths


def test_human_reference_band_is_the_literature_exponential():
    lit = {"parameters": {"diamonds": {"half_differential": {
        "A": {"value": 30.0, "sigma": 5.0, "citation": "a", "kind": "value"},
        "tau_ms": {"value": 100.0, "sigma": None, "citation": "a", "kind": "value"},
        "B": {"value": 0.0, "sigma": 1.0, "citation": "b", "kind": "value"}}}}, "facts": {}}
    ref = human_reference(lit, "diamonds", "half_differential")
    assert ref.complete and ref.citations() == "a; b"
    mean, lo, hi = ref.band([0.0, 100.0])
    np.testing.assert_allclose(mean, [30.0, 30.0 / np.e])
    np.testing.assert_allclose(lo, [24.0, 25.0 / np.e - 1.0])  # A - sd_A, B - sd_B; tau has no SD
    np.testing.assert_allclose(hi, [36.0, 35.0 / np.e + 1.0])
    partial = human_reference(load_literature("config/literature.yaml"), "diamonds", "half_differential")
    assert not partial.complete and np.all(np.isnan(partial.band([0.0])[0]))
    assert "convergence_time_ms" in partial.bounds


@pytest.mark.parametrize("complete", [True, False])
def test_direction_error_figure_draws_directions_and_the_human_reference(tmp_path, monkeypatch, complete):
    readouts = _diamonds()
    paths = _readout_stores(tmp_path, readouts)
    lit = tmp_path / "lit.yaml"
    lit.write_text(LITERATURE if complete else Path("config/literature.yaml").read_text())
    seen = {}

    def capture(fig, path):
        # legend labels as read (long ones are wrapped onto lines beside the curves)
        seen["labels"] = [" ".join(t.get_text().split()) for ax in fig.axes if ax.get_legend()
                          for t in ax.get_legend().get_texts()]
        seen["lines"] = [(line.get_label(), line.get_ydata()) for ax in fig.axes for line in ax.get_lines()]
        return path

    monkeypatch.setattr(figures, "save_png", capture)
    figures.direction_error_figure(paths, tmp_path / "f.csv", tmp_path / "s.csv", tmp_path / "x.png",
                                   literature_path=lit)
    labels = seen["labels"]
    assert any("at 0 deg" in s for s in labels) and any("at 90 deg" in s for s in labels)
    if complete:
        human = [y for label, y in seen["lines"] if label.startswith("human: Test & Author (2001); Other (2002)")]
        assert len(human) == 1 and human[0][0] == pytest.approx(30.0)  # A at the model's onset
    else:
        assert any(s.startswith("human asymptote B = 0 (no SD): Masson & Stone (2002)") for s in labels)
    assert any("human convergence time < 300 ms" in s for s in labels)  # the record is 590 ms long
    # without a literature file nothing human is drawn
    figures.direction_error_figure(paths, tmp_path / "f.csv", tmp_path / "s.csv", tmp_path / "x.png")
    assert not any("human" in s for s in seen["labels"])
    assert isinstance(pd.read_csv(tmp_path / "f.csv")["verdict_tau_ms"].iloc[0], float)


def test_stimuli_montage_is_a_grid_not_a_strip(tmp_path):
    """30 stimuli: triplets of frames in about square rows and columns (was one 3-panel column, 405 x 3375 px)."""
    display = Display(frames_per_s=100.0)
    paths = [write_store(tmp_path / f"s{k:02d}.zarr", {"frames": ArraySpec(np.full((3, 8, 8), k / 30.0, np.float32),
                                                                        ("t", "y", "x"))},
                         {"display": display.to_attrs()}) for k in range(30)]
    out = figures.stimuli_montage(paths, tmp_path / "stimuli.png")
    import matplotlib.image as mpimg

    h, w = mpimg.imread(out).shape[:2]
    assert 0.5 < w / h < 2.0, (w, h)


def test_a_models_figures_drawn_in_one_job_are_the_ones_drawn_alone(tmp_path):
    """model_figures (one job per model) writes the very bytes of flow_figure and direction_error_figure."""
    readouts = dict(list(_diamonds().items())[:2])  # one CW/CCW pair
    readout_paths = _readout_stores(tmp_path, readouts)
    rng = np.random.default_rng(2)
    response_paths = [
        write_store(tmp_path / "responses" / f"{name}.zarr",
                    {"flow": ArraySpec(rng.normal(size=(3, 24, 24, 2)).astype(np.float32), ("t", "y", "x", "c"))},
                    {"display": Display(frames_per_s=100.0).to_attrs(), "stimulus": r["stimulus"],
                     "model": {"name": "m"}})
        for name, r in readouts.items()]
    tables = (tmp_path / "f.csv", tmp_path / "s.csv")
    figures.flow_figure(response_paths, tmp_path / "flow_alone.png")
    figures.direction_error_figure(readout_paths, *tables, tmp_path / "error_alone.png")
    figures.model_figures(response_paths, readout_paths, *tables, tmp_path / "flow.png", tmp_path / "error.png")
    for name in ("flow", "error"):
        assert (tmp_path / f"{name}.png").read_bytes() == (tmp_path / f"{name}_alone.png").read_bytes()


def test_direction_error_figure_is_readable(tmp_path, monkeypatch):
    """Every text at least 10 px at the saved 90 dpi, and each legend beside its curves, not over them."""
    paths = _readout_stores(tmp_path, _diamonds())
    lit = tmp_path / "lit.yaml"
    lit.write_text(Path("config/literature.yaml").read_text())
    seen = {}

    def capture(fig, path):
        fig.canvas.draw()
        seen["fig"] = fig
        return path

    monkeypatch.setattr(figures, "save_png", capture)
    figures.direction_error_figure(paths, tmp_path / "f.csv", tmp_path / "s.csv", tmp_path / "x.png",
                                   literature_path=lit)
    fig = seen["fig"]
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
             if t.get_visible() and t.get_text().strip()]
    small = [(t.get_text(), t.get_fontsize() * 90 / 72) for t in texts if t.get_fontsize() * 90 / 72 < 10]
    assert not small, small
    renderer = fig.canvas.get_renderer()
    legends = [ax for ax in fig.axes if ax.get_legend()]
    assert legends
    for ax in legends:
        assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
