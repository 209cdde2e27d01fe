"""The evaluation's batched parts against loops: Fisher filters, rank counts, metrics, split jobs."""

import numpy as np
import pandas as pd
import pytest

from psybench.attention import evaluate as ev
from psybench.attention import gaze as gz
from psybench.attention import table1, tuning
from psybench.attention.batch_tuning import train_filters
from psybench.attention.defaults import EvaluationSettings
from psybench.attention.map_metrics import auc_borji, auc_shuffled
from psybench.attention.metrics import score_frames
from psybench.attention.movies import MovieData
from psybench.attention.responses import feature_maps
from psybench.attention.stimuli import render_popout
from psybench.io.tables import write_table


def loop_fisher(attended, other, scatter):
    """The one-trajectory trainer as it was before batching (tuning.fisher_filter), written out as the oracle."""
    attended, other = np.asarray(attended, np.float64), np.asarray(other, np.float64)
    D = attended.shape[1]

    def cov(x):
        xc = x - x.mean(0)
        return (xc.T @ xc) / (len(x) - 1)

    if scatter == "equal":
        sw = cov(attended) + cov(other)
    elif scatter == "pooled":
        n0, n1 = len(attended), len(other)
        sw = 2.0 * ((n0 - 1) * cov(attended) + (n1 - 1) * cov(other)) / (n0 + n1 - 2)
    else:
        sw = 2.0 * cov(other)
    ridge = 1e-6 * max(np.trace(sw) / D, 1e-12)
    w = np.linalg.solve(sw + ridge * np.eye(D), attended.mean(0) - other.mean(0))
    return w / np.linalg.norm(w)


@pytest.mark.parametrize("scatter", tuning.SCATTERS)
def test_batched_fisher_filters_equal_the_loop_to_the_bit(scatter):
    rng = np.random.default_rng(3)
    B, n0, D = 7, 40, 18
    A = (rng.normal(size=(B, n0, D)) * rng.uniform(0.1, 4, D) + 2).astype(np.float32)
    O = (rng.normal(size=(B, 15 * n0, D)) * rng.uniform(0.1, 4, D)).astype(np.float32)  # noqa: E741
    batched = tuning.fisher_filters(A, O, scatter=scatter)
    loop = np.stack([loop_fisher(a, o, scatter) for a, o in zip(A, O)])
    np.testing.assert_array_equal(batched, loop)  # same operations in the same order: no tolerance
    np.testing.assert_array_equal(batched[2], tuning.fisher_filter(A[2], O[2], scatter=scatter))
    assert np.all(np.einsum("bnd,bd->b", A, batched) / n0 > np.einsum("bnd,bd->b", O, batched) / (15 * n0))


@pytest.fixture(scope="module")
def small_movie():
    """A 24-frame pop-out clip, two observers and three random-saccade trajectories with gaps."""
    scene = render_popout(seed=4, n_frames=24, n_distractors=6)
    fps = scene.attrs["frames_per_s"]
    raw = gz.synthetic_observers(scene.target_xy, scene.lure_xy, p_target=[0.9, 0.1], frames_per_s=fps,
                                 source_size=(640, 480), seed=4, movie="A")
    table = gz.resample_to_frames(raw, frames_per_s=fps, n_frames=24, movie="A")
    maps = feature_maps(scene.frames, model="pyramid").compute()
    return MovieData("A", maps, fps, (640, 480), table, "pyramid")


def test_train_filters_equal_one_by_one_training(small_movie):
    m = small_movie
    paths = gz.random_saccade_scanpaths(24, source_size=(640, 480), frames_per_s=10.0, seed=1, n=4, jump_prob=0.3)
    tables = [g for _s, g in paths.groupby("subject", sort=True)]
    tables[1] = tables[1].assign(valid=tables[1]["frame"] % 5 != 0)  # fewer attended points: another stack
    lags = tuning.lag_frames([100.0, 300.0], 10.0)
    frames = tuning.train_frames(24, lags)
    seeds = [11, 12, 13, 14]
    batched = train_filters(m, tables, frames, seeds=seeds, lags=lags, L=3, batch_mb=0.01)  # several batches
    loop = np.stack([tuning.train_filter(m, g, frames, lags=lags, L=3, n_negatives=15, min_dist_frac=0.3125, seed=s)
                     for g, s in zip(tables, seeds)])
    assert batched.shape == (4, m.shape[-1] * 9 * 2)
    np.testing.assert_array_equal(batched, loop)
    with pytest.raises(ValueError, match="3 seeds"):
        train_filters(m, tables, frames, seeds=seeds[:3], lags=lags, L=3)


def test_rank_percentiles_of_many_cells_equal_one_column_at_a_time():
    rng = np.random.default_rng(5)
    S = rng.integers(0, 6, size=(4, 30, 3)).astype(np.float32)  # many ties
    cells = rng.integers(0, 30, size=(4, 9))
    many = ev.rank_percentiles(S, cells)
    assert many.shape == (4, 9, 3)
    for d in range(9):
        np.testing.assert_array_equal(many[:, d], ev.rank_percentiles(S, cells[:, d]))
        np.testing.assert_array_equal(ev.rank_percentiles(S[..., 0], cells)[:, d], many[:, d, 0])
    # the tie rule by hand: cell 1 of [0, 1, 1, 1, 2] has 1 lower and 2 other equal cells, over 4 cells
    assert ev.rank_percentiles(np.array([[0.0, 1.0, 1.0, 1.0, 2.0]]), np.array([[1, 4]]))[0].tolist() == [0.5, 1.0]


def test_stacked_score_frames_equal_one_map_at_a_time():
    rng = np.random.default_rng(6)
    counts = (rng.random((5, 6, 8)) < 0.08).astype(float)
    counts[2] = 0  # a frame without fixations is skipped
    maps = rng.random((3, 5, 6, 8))
    stacked = score_frames(maps, counts, n_splits=7)
    for m in range(3):
        assert stacked[m] == pytest.approx(score_frames(maps[m], counts, n_splits=7), rel=0, abs=0, nan_ok=True)
    s, f = maps[0, 0], counts[0]
    assert auc_borji(s, f, n_splits=7, seed=3) == auc_borji(s, f, negatives=None, n_splits=7, seed=3)
    assert np.isnan(auc_shuffled(s, f, np.zeros_like(f)))  # no other fixated cell: no negatives


def test_split_jobs_give_the_one_process_tables(small_movie, tmp_path, monkeypatch):
    """Parts per (model row, training movie), gathered, equal evaluate() on all pairs, rows in configured order."""
    monkeypatch.setattr(ev, "IID_SAMPLES", 300)  # the i.i.d. control's 20000 draws are not under test here
    m = small_movie
    other = MovieData("B", m.maps[::-1].copy(), m.frames_per_s, m.source_size, m.gaze.assign(movie="B"), "pyramid")
    movies = {"A": {"pyramid": m}, "B": {"pyramid": other}}
    models = [{"features": "pyramid", "L": 1}, {"features": "pyramid", "L": 3}]
    pairs = [("B", "A"), ("A", "A"), ("B", "B")]
    settings = dict(evaluation=EvaluationSettings(n_sets=2, n_per_set=2, seed=1))
    whole, whole_curves = ev.evaluate(movies, models=models, pairs=pairs, **settings)
    parts = []
    for model in models:
        for tr in ("A", "B"):
            t, c = ev.evaluate(movies, models=[model], pairs=[p for p in pairs if p[0] == tr], **settings)
            base = tmp_path / f"{model['L']}{tr}"
            parts.append({**model, "train": tr, "table": write_table(t, f"{base}t.csv"),
                          "curves": write_table(c, f"{base}c.csv")})
    out = table1.gather_evaluation(parts[::-1], models=models, pairs=pairs, table_path=tmp_path / "t1.csv",
                                   curves_path=tmp_path / "curves.csv", figure_path=tmp_path / "curves.png")
    pd.testing.assert_frame_equal(out, whole)
    assert (tmp_path / "t1.csv").read_bytes() == whole.to_csv(index=False, lineterminator="\n").encode()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "curves.parquet"), whole_curves)
    with pytest.raises(ValueError, match="no evaluation part for model 'pyramid' L=3 trained on 'B'"):
        table1.gather_evaluation(parts[:3], models=models, pairs=pairs, table_path=tmp_path / "x.csv",
                                 curves_path=tmp_path / "y.csv", figure_path=tmp_path / "z.png")


def test_control_scanpaths_round_trip(small_movie, tmp_path):
    from psybench.attention.controls import control_scanpaths

    drawn = control_scanpaths(small_movie, small_movie.gaze, n_sets=2, n_per_set=3, seed=2)
    table = pd.concat([t.assign(category=c, set=k) for c in ("rs", "rp") for k, t in enumerate(drawn[c])],
                      ignore_index=True)
    write_table(table, tmp_path / "c.csv")
    back = table1.read_control_scanpaths(tmp_path / "c.csv")
    for c in ("rs", "rp"):
        assert len(back[c]) == 2
        for a, b in zip(back[c], drawn[c]):
            pd.testing.assert_frame_equal(a, b, check_dtype=False)
    write_table(table.drop(columns="set"), tmp_path / "bad.csv")
    with pytest.raises(ValueError, match=r"bad.csv lacks column\(s\) \['set'\]"):
        table1.read_control_scanpaths(tmp_path / "bad.csv")


def test_one_job_per_training_movie_writes_each_rows_part(small_movie, tmp_path, monkeypatch):
    """run_evaluation_parts (all rows of a training movie in one process) writes every part's bytes as
    run_evaluation_part does for that row alone."""
    from psybench.attention.controls import control_scanpaths

    monkeypatch.setattr(ev, "IID_SAMPLES", 300)
    m = small_movie
    other = MovieData("B", m.maps[::-1].copy(), m.frames_per_s, m.source_size, m.gaze.assign(movie="B"), "pyramid")
    data = {"A": m, "B": other}
    monkeypatch.setattr(table1, "load_movies", lambda stores, _g, **_k: {
        mv: {label: data[mv] for label in labels} for mv, labels in stores.items()})
    monkeypatch.setattr(table1, "read_control_scanpaths",
                        lambda _p: control_scanpaths(m, m.gaze, n_sets=2, n_per_set=2, seed=1))
    settings = dict(pairs=[("A", "A"), ("A", "B"), ("B", "B")], lags_ms=[100.0, 300.0],
                    evaluation={"n_sets": 2, "n_per_set": 2, "seed": 1})  # a config section, as the rule passes
    stores = {"A": "a.zarr", "B": "b.zarr"}
    rows = [{"features": "p1", "L": 1}, {"features": "p3", "L": 3}]
    parts = [{**r, "table": tmp_path / f"{r['features']}t.csv", "curves": tmp_path / f"{r['features']}c.csv"}
             for r in rows]
    table1.run_evaluation_parts({r["features"]: stores for r in rows}, {}, scanpaths="c.parquet", parts=parts,
                                train="A", **settings)
    for r, p in zip(rows, parts):
        table1.run_evaluation_part(stores, {}, scanpaths="c.parquet", model=r, train="A", table_path=tmp_path / "t.csv",
                                   curves_path=tmp_path / "c.csv", **settings)
        assert len(pd.read_csv(p["table"])) == 2 * len(ev.GROUPS)  # A on A, A on B
        assert p["table"].read_bytes() == (tmp_path / "t.csv").read_bytes()
        assert p["curves"].read_bytes() == (tmp_path / "c.csv").read_bytes()


def test_metrics_parts_joined_are_the_whole_table(small_movie, tmp_path, monkeypatch):
    """run_metrics(train=) per training movie, joined by gather_metrics: the bytes of run_metrics on all pairs."""
    from psybench.attention import metrics

    m = small_movie
    other = MovieData("B", m.maps[::-1].copy(), m.frames_per_s, m.source_size, m.gaze.assign(movie="B"), "pyramid")
    data = {"A": m, "B": other}
    loaded = []
    monkeypatch.setattr(metrics, "load_movies", lambda stores, _g, **_k: loaded.append(sorted(stores)) or {
        mv: {label: data[mv] for label in labels} for mv, labels in stores.items()})
    stores = {mv: {"p1": f"{mv}.zarr", "p3": f"{mv}.zarr"} for mv in data}
    models = [{"features": "p3", "L": 3}, {"features": "p1", "L": 1}]
    pairs = [("B", "A"), ("A", "A"), ("B", "B")]
    settings = dict(models=models, pairs=pairs, evaluation=EvaluationSettings(n_negatives=3, seed=2), n_splits=4)
    metrics.run_metrics(stores, {}, out=tmp_path / "whole.csv", **settings)
    parts = {tr: tmp_path / f"{tr}.csv" for tr in ("B", "A")}
    for tr, path in parts.items():
        metrics.run_metrics(stores, {}, out=path, train=tr, **settings)
    assert loaded[1:] == [["A", "B"], ["A"]]  # a part loads only its pairs' movies
    metrics.gather_metrics(parts, models=models, pairs=pairs, out=tmp_path / "joined.csv")
    for ext in (".csv", ".parquet"):
        assert (tmp_path / f"joined{ext}").read_bytes() == (tmp_path / f"whole{ext}").read_bytes()
    with pytest.raises(ValueError, match="no metrics part of training movie 'B'"):
        metrics.gather_metrics({"A": parts["A"]}, models=models, pairs=pairs, out=tmp_path / "x.csv")
    with pytest.raises(ValueError, match="no pair training on movie 'C'"):
        metrics.run_metrics(stores, {}, out=tmp_path / "y.csv", train="C", **settings)


def test_score_frames_equal_the_per_map_functions_to_the_bit():
    """score_frames scores all maps and frames at once (stack_metrics); each number must be the per-map
    function's, bit for bit, on ties, constant maps, negative maps and frames with 1-3 fixated cells."""
    from psybench.attention import map_metrics as mm
    from psybench.attention import metrics as M

    rng = np.random.default_rng(8)
    counts = np.zeros((7, 6, 8))
    for t, n in enumerate([1, 2, 0, 3, 1, 2, 1]):
        counts[t].flat[rng.choice(48, n, replace=False)] = rng.integers(1, 3, n)
    maps = rng.random((4, 7, 6, 8))
    maps[1] = np.round(maps[1] * 3)  # many ties
    maps[2, 3] = 0.7  # a constant map
    maps[3] -= 0.5  # negative values
    got = M.score_frames(maps, counts, n_splits=7, seed=3)
    total, base, dens = counts.sum(0), M.centre_baseline((6, 8)), M.fixation_density(counts)
    for m in range(4):
        per = {k: [] for k in M.METRIC_DIRECTIONS}
        for t in np.flatnonzero(counts.sum((1, 2))):
            s, f = maps[m, t], counts[t]
            nb = mm.borji_negatives(48, int((f > 0).sum()), n_splits=7, seed=3 + t)
            ns = mm.shuffled_negatives(f, total - f, n_splits=7, seed=3 + t)
            for k, v in (("AUC-Judd", mm.auc_judd(s, f)), ("AUC-Borji", mm.auc_borji(s, f, negatives=nb)),
                         ("sAUC", mm.auc_shuffled(s, f, total - f, negatives=ns)), ("NSS", mm.nss(s, f)),
                         ("CC", mm.cc(s, dens[t])), ("KL", mm.kl_div(s, dens[t])),
                         ("SIM", mm.similarity(s, dens[t])), ("IG", mm.information_gain(s, f, base))):
                per[k].append(v)
        for k, v in per.items():
            want = float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
            assert np.array_equal(got[m][k], want, equal_nan=True), (m, k, got[m][k], want)
