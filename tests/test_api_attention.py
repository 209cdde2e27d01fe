"""``psybench.score(model, "attention")``: the workflow's attention numbers from one Python call."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import psybench
from psybench.aggregate.table import SCORE_COLUMNS
from psybench.attention.ingest import MovieReadError
from psybench.io.store import open_store
from psybench.registry import ModelError

KEYS = ["model", "params_hash", "track", "experiment", "metric", "direction"]


def _sorted(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.fillna({"params_hash": ""}).sort_values(KEYS, kind="stable").reset_index(drop=True)


@pytest.mark.workflow
def test_registered_model_gives_the_workflows_rows_and_tables(harness, completed_attention_workflow, tmp_path,
                                                              capsys):
    """Every score row of 'raw' in results/aggregate/scores_attention.csv, and the stage tables bit for bit."""
    run = completed_attention_workflow
    rows = psybench.score("raw", "attention", config=harness.tiny_attention_config(), workdir=tmp_path)
    assert list(rows.columns) == [*SCORE_COLUMNS, "data"]  # data: the gaze is recorded or synthetic
    assert (rows["source"] == "psybench.score(attention)").all() and (rows["data"] == "synthetic").all()
    want = pd.read_csv(run / "results/aggregate/scores_attention.csv", keep_default_na=False,
                       na_values=[""], dtype={"params_hash": str})
    want = want[(want["model"] == "raw") | want["model"].str.startswith("raw L=")]
    # 2 pairs x (7 Table 1 groups + 2 tunings x 8 metrics)
    assert len(rows) == len(want) == 2 * (7 + 2 * 8)
    got, want = _sorted(rows), _sorted(want)
    pd.testing.assert_frame_equal(got[KEYS], want[KEYS], check_dtype=False)
    np.testing.assert_array_equal(got["value"], want["value"])  # exact: both read the same tables
    # the stages are deterministic: the tables behind the rows are equal, not just close
    for name in ("table1.csv", "curves.csv", "metrics.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "attention" / name),
                                      pd.read_csv(run / "results/attention" / name), check_exact=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "controls/A.csv"),
                                  pd.read_csv(run / "results/attention/controls/A.csv"), check_exact=True)
    err = capsys.readouterr().err
    # 3 stages per movie, controls and Table 1 part per training movie, Table 1, a metrics part per training
    # movie (as the workflow's jobs), metrics, score rows
    assert "psybench.score('raw', 'attention'): 12/12 (100 %)" in err and "left" in err


@pytest.mark.workflow
def test_table1_alone_on_the_runs_stimulus_stores(harness, completed_attention_workflow):
    """``attention/table1`` reads the run's stimulus stores and gives its Table 1 rows only (no metrics stage)."""
    run = completed_attention_workflow
    rows = psybench.score("raw", "attention/table1", config=harness.tiny_attention_config(),
                          stimuli=run / "results/attention/stimuli", progress=False)
    want = pd.read_csv(run / "results/aggregate/scores_attention.csv", dtype={"params_hash": str})
    want = want[want["model"] == "raw"]
    assert set(rows["metric"]) == {f"median_rp_{g}" for g in ("n_ma", "n_un", "rf_n", "rs_n", "rp_n", "n_iid",
                                                              "n_shift")}
    np.testing.assert_allclose(_sorted(rows)["value"], _sorted(want)["value"], rtol=1e-12)


def dot_movie(n_frames=60, fps=10.0, size=(80, 60), hold=10, seed=0):
    """A bright 8 px square on a noisy dark background, jumping to a new place every ``hold`` frames,
    and two observers whose gaze (100 Hz samples) sits on it. Frames uint8 (T, H, W)."""
    rng = np.random.default_rng(seed)
    W, H = size
    frames = rng.integers(20, 60, size=(n_frames, H, W)).astype(np.uint8)
    centres = np.repeat(rng.integers(8, [W - 8, H - 8], size=(n_frames // hold + 1, 2)), hold, axis=0)[:n_frames]
    for t, (x, y) in enumerate(centres):
        frames[t, y - 4 : y + 4, x - 4 : x + 4] = 230
    t_ms = np.arange(0, n_frames * 1000 / fps, 10.0)
    at = centres[(t_ms * fps / 1000).astype(int)]
    gaze = pd.concat([pd.DataFrame({"subject": s, "t": t_ms, "x": at[:, 0] + rng.normal(0, 1, len(t_ms)),
                                    "y": at[:, 1] + rng.normal(0, 1, len(t_ms))}) for s in ("s1", "s2")])
    return frames, gaze


def test_user_saliency_callable_on_in_memory_movie_and_gaze(tmp_path):
    """A user's function on an in-memory movie and gaze: people's tuned filters find the gazed square
    (Shic & Scassellati 2007, Table 1: people well above the random controls' chance level)."""

    def luminance(frames, gain=1.0):
        return gain * np.asarray(frames)[..., None]

    frames, gaze = dot_movie()
    recording = tmp_path / "M_gaze.csv"  # on disk, in the csv gaze format (a DataFrame: tests/test_docs_tasks.py)
    gaze.to_csv(recording, index=False)
    rows = psybench.score(luminance, "attention", params={"gain": 2.0}, L=[1, 3], workdir=tmp_path / "work",
                          stimuli={"M": {"frames": frames, "frames_per_s": 10.0}}, gaze={"M": recording},
                          overrides={"attention": {"pairs": [["M", "M"]], "evaluation": {"n_sets": 1, "n_per_set": 2},
                                                   "metrics": {"n_splits": 5}}}, progress=False)
    assert set(rows["model"]) == {"luminance", *(f"luminance L={L} {t}" for L in (1, 3) for t in ("untuned", "tuned"))}
    value = rows.set_index(["model", "params_hash", "metric"])["value"]
    table1 = rows[rows["model"] == "luminance"].pivot(index="params_hash", columns="metric", values="value")
    assert len(table1) == 2  # one Table 1 row per L
    assert (table1["median_rp_n_ma"] > 90).all() and (table1["median_rp_n_un"] > 90).all()
    assert ((table1["median_rp_n_iid"] - 50).abs() < 10).all()  # uniform gaze: chance
    assert value["luminance L=1 tuned", "", "AUC-Judd"] > 0.9
    # the in-memory frames were ingested as a file is: grayscale, then area-averaged to the 40 x 30 grid
    store = np.asarray(open_store(tmp_path / "work/stimuli/M.zarr")["frames"])
    blocks = frames.reshape(60, 30, 2, 40, 2).mean(axis=(2, 4)) / 255.0
    np.testing.assert_allclose(store, blocks, atol=1e-6)


def test_errors_name_the_model_movie_and_file(harness, tmp_path):
    cfg = harness.tiny_attention_config()
    with pytest.raises(ModelError, match=r"model 'deepgaze'.*'deepgaze'.*(raw|itti)"):
        psybench.score("deepgaze", "attention", config=cfg)
    missing = tmp_path / "s01-A.e-ceyeS"
    with pytest.raises(FileNotFoundError, match=rf"attention\.movies\.A\.gaze: gaze file {missing} does not exist"):
        psybench.score("raw", "attention", config=cfg, gaze={"A": missing})
    no_file = harness.tiny_attention_config(movies={"A": {"popout": {"n_frames": 45}, "gaze": str(missing)}},
                                            pairs=[["A", "A"]])
    with pytest.raises(FileNotFoundError, match=r"attention\.movies\.A\.gaze: gaze file .*s01-A\.e-ceyeS"):
        psybench.score("raw", "attention", config=no_file)
    frames, _ = dot_movie(n_frames=10)
    with pytest.raises(ValueError, match=r"movie 'M' has no gaze"):
        psybench.score("raw", "attention", config=cfg, stimuli={"M": frames}, overrides={"attention": {
            "pairs": [["M", "M"]]}})
    with pytest.raises(ValueError, match=r"movie\(s\) \['M'\] of stimuli= are in no \(train, test\) pair"):
        psybench.score("raw", "attention", config=cfg, stimuli={"M": frames})
    with pytest.raises(ValueError, match=r"gaze of movie 'M' lacks column\(s\) \['t'\]"):
        bad = pd.DataFrame({"subject": ["s1"], "t_ms": [0.0], "x": [1.0], "y": [1.0]})
        psybench.score("raw", "attention", config=cfg, stimuli={"M": frames}, gaze={"M": bad},
                       overrides={"attention": {"pairs": [["M", "M"]]}})
    with pytest.raises(MovieReadError, match=r"movie 'M': frames_per_s must be a positive number, got None"):
        psybench.score("raw", "attention", config=cfg, stimuli={"M": frames}, gaze={"M": dot_movie(10)[1]},
                       overrides={"attention": {"pairs": [["M", "M"]]}}, workdir=tmp_path, progress=False)
    with pytest.raises(ValueError, match=r"attention model 'raw': L=2 is not a positive odd integer"):
        psybench.score("raw", "attention", config=cfg, L=2)
    with pytest.raises(ValueError, match=r"unknown attention experiment 'heatmaps'; known: \['table1'"):
        psybench.score("raw", "attention/heatmaps", config=cfg)
    with pytest.raises(ValueError, match=r"gaze= and L= belong to the attention track, not to 'motion'"):
        psybench.score("horn_schunck", "motion", L=3)
