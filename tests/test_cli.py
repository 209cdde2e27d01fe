"""The ``psybench`` command line (psybench.cli:main), run in-process."""

from __future__ import annotations

import sys
import types

import pandas as pd

from psybench.aggregate.table import SCORE_COLUMNS
from psybench.cli import main

ROWS = [
    # model, track, experiment, metric, value, direction
    ("hs", "motion", "diamond", "rmse", 1.0, "lower"),
    ("hs", "motion", "barberpole", "score", 0.2, "higher"),
    ("lk", "motion", "diamond", "rmse", 2.0, "lower"),
    ("lk", "motion", "barberpole", "score", 0.9, "higher"),
    ("dis", "motion", "diamond", "rmse", 3.0, "lower"),
    ("dis", "motion", "barberpole", "score", 0.1, "higher"),
    ("itti", "attention", "movies", "auc", 0.7, "higher"),
]


def write_scores(path, rows=ROWS):
    df = pd.DataFrame(
        [
            {
                "model": m,
                "params_hash": "",
                "track": t,
                "experiment": e,
                "metric": k,
                "value": v,
                "direction": d,
                "ci_low": "",
                "ci_high": "",
                "source": f"figures/{t}/{e}.png",
            }
            for m, t, e, k, v, d in rows
        ],
        columns=SCORE_COLUMNS,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)
    return path


def table_lines(out):
    """Data lines of the printed table: {entry: (front, pareto)}."""
    rows, in_table = {}, False
    for line in out.splitlines():
        parts = line.split()
        if parts[:2] == ["front", "entry"]:
            in_table = True
        elif in_table and parts and parts[0].isdigit():
            rows[parts[1]] = (int(parts[0]), parts[2] == "yes")
    return rows


def test_score_table_prints_fronts_and_ranks(tmp_path, capsys):
    csv = write_scores(tmp_path / "scores.csv")
    assert main(["score-table", str(csv), "--track", "motion"]) == 0
    out = capsys.readouterr().out
    rows = table_lines(out)
    assert rows == {"hs": (1, True), "lk": (1, True), "dis": (2, False)}
    assert "track=motion" in out and "Pareto-optimal" in out
    # hs and lk: same front, same average rank (1.5), ties listed by name; dis last
    assert out.index(" hs ") < out.index(" lk ") < out.index(" dis ")
    assert "1.50" in out and "3.00" in out


def test_score_table_epsilon_and_values(tmp_path, capsys):
    csv = write_scores(tmp_path / "scores.csv")
    code = main(
        ["score-table", str(csv), "--track", "motion", "--epsilon", "2", "--epsilon", "motion/barberpole/score=0.85"]
    )
    assert code == 0
    assert table_lines(capsys.readouterr().out)["dis"] == (1, True)
    assert main(["score-table", str(csv), "--values", "--track", "motion"]) == 0
    out = capsys.readouterr().out
    rmse = next(line.split() for line in out.splitlines() if line.startswith("diamond/rmse"))
    assert rmse[1:] == ["1", "2", "3"]  # hs, lk, dis: the board's order


def test_score_table_folder_concatenates_csvs(tmp_path, capsys):
    write_scores(tmp_path / "res" / "motion" / "scores.csv", ROWS[:6])
    write_scores(tmp_path / "res" / "attention" / "scores.csv", ROWS[6:])
    (tmp_path / "res" / "notes.csv").write_text("a,b\n1,2\n")
    out_csv = tmp_path / "lb.csv"
    assert main(["score-table", str(tmp_path / "res"), "--out", str(out_csv)]) == 0
    captured = capsys.readouterr()
    assert set(table_lines(captured.out)) == {"hs", "lk", "dis", "itti"}
    assert "skipped 1 CSV file(s)" in captured.err and "notes.csv" in captured.err
    written = pd.read_csv(out_csv)
    assert set(written["entry"]) == {"hs", "lk", "dis", "itti"}
    assert out_csv.with_suffix(".parquet").exists()


def test_bad_file_exits_2_naming_the_file(tmp_path, capsys):
    bad = tmp_path / "broken_scores.csv"
    pd.DataFrame({"model": ["hs"], "value": [1.0]}).to_csv(bad, index=False)
    assert main(["score-table", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("psybench: error:")
    assert "broken_scores.csv" in err and "missing column 'params_hash'" in err
    assert main(["score-table", str(tmp_path / "nope.csv")]) == 2
    assert "nope.csv" in capsys.readouterr().err
    csv = write_scores(tmp_path / "ok.csv")
    assert main(["score-table", str(csv), "--track", "physics"]) == 2
    assert "track 'physics'" in capsys.readouterr().err
    assert main(["score-table", str(csv), "--epsilon", "x=1"]) == 2
    assert "unknown criterion 'x'" in capsys.readouterr().err


def test_cross_track_ranks_each_track_on_its_own_criteria(tmp_path, capsys):
    """No entry has another track's scores: the overall view is one front per track, so nothing is missing."""
    csv = write_scores(tmp_path / "scores.csv")
    assert main(["score-table", str(csv), "--missing", "raise"]) == 0
    out = capsys.readouterr().out
    assert "one front per track" in out and table_lines(out)["itti"] == (1, True)
    assert main(["score-table", str(csv)]) == 0  # default: ignore pairwise


def test_leaderboard_reads_results_folder(tmp_path, capsys):
    write_scores(tmp_path / "results" / "aggregate" / "scores_long.csv")
    assert main(["leaderboard", "--results", str(tmp_path / "results"), "--track", "motion"]) == 0
    out = capsys.readouterr().out
    assert "scores_long.csv" in out and table_lines(out)["dis"] == (2, False)
    assert main(["leaderboard", "--results", str(tmp_path / "elsewhere")]) == 2
    err = capsys.readouterr().err
    assert "scores_long.parquet" in err and "psybench score-table" in err


def test_models_and_benchmarks_without_registry(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "psybench.registry", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "psybench.benchmarks", None)
    assert main(["models"]) == 2
    assert "psybench.registry" in capsys.readouterr().err
    assert main(["benchmarks"]) == 2
    assert "psybench.benchmarks" in capsys.readouterr().err


def test_models_and_benchmarks_with_registry(monkeypatch, capsys):
    fake = types.ModuleType("psybench.registry")
    rows = [
        {"name": "horn_schunck", "track": "motion", "kind": "callable", "source": "builtin"},
        {"name": "itti", "track": "attention", "kind": "callable", "source": "builtin"},
    ]
    fake.list_models = lambda track=None: [r for r in rows if track in (None, r["track"])]
    monkeypatch.setitem(sys.modules, "psybench.registry", fake)
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "horn_schunck" in out and "itti" in out and out.split()[:4] == ["track", "name", "kind", "source"]
    assert main(["models", "--track", "motion"]) == 0
    assert "itti" not in capsys.readouterr().out
    row = {"name": "hs", "track": "motion", "kind": "pair", "source": "x", "extra": "E"}
    fake.list_models = lambda track=None: [row]
    assert main(["models"]) == 0
    assert "extra" not in capsys.readouterr().out
    assert main(["models", "--long"]) == 0
    assert "extra" in capsys.readouterr().out
    fake_benchmarks = types.ModuleType("psybench.benchmarks")
    monkeypatch.setitem(sys.modules, "psybench.benchmarks", fake_benchmarks)
    assert main(["benchmarks"]) == 2  # this module has no list_benchmarks()
    assert "list_benchmarks" in capsys.readouterr().err
    fake_benchmarks.list_benchmarks = lambda: [{"name": "motion_psychobench", "track": "motion"}]
    assert main(["benchmarks"]) == 0
    assert "motion_psychobench" in capsys.readouterr().out


def test_usage_errors_and_help(capsys):
    assert main([]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["--help"]) == 0
    assert "leaderboard" in capsys.readouterr().out


def test_models_params_come_last_unpadded(monkeypatch, capsys):
    fake = types.ModuleType("psybench.registry")
    fake.list_models = lambda track=None: [
        {"name": "horn_schunck", "track": "motion", "kind": "pair", "source": "builtin", "params": "alpha=0.02"},
        {"name": "itti", "track": "attention", "kind": "saliency", "source": "builtin", "params": ""},
    ]
    monkeypatch.setitem(sys.modules, "psybench.registry", fake)
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["track", "name", "kind", "source", "params"]
    assert lines[1].endswith("builtin  alpha=0.02") and lines[1].startswith("motion ")
    assert lines[0].index("name") == lines[1].index("horn_schunck") == lines[2].index("itti")


def _wide_scores(path):
    """Two tracks, 30 attention criteria with long names, motion errors and Table 1 verdicts."""
    rows = []
    for i, model in enumerate(["horn_schunck", "tlapale_v1mt_nofeedback", "lucas_kanade"]):
        for e, exp in enumerate(["barberpole", "diamonds", "dashed_bars", "grating_size"]):
            rows.append((model, "motion", exp, "error", 1.0 + i + e / 10, "lower"))
            rows.append((model, "motion", exp, "passed", float(e < 2 - i), "higher"))
    for i, model in enumerate(["itti", "pyramid"]):
        for k in range(30):
            pair = f"movie{k % 5}_on_movie{k // 5}"
            rows.append((model, "attention", pair, "median_rp_n_iid", 0.5 + i / 10 + k / 100, "higher"))
    return write_scores(path, rows)


def test_leaderboard_fits_80_and_100_columns_with_values_and_verdicts(tmp_path, capsys):
    """Without --values the board shows the values that fit and the Table 1 verdicts passed,
    every line within --width; --values folds every value into the same width."""
    csv = _wide_scores(tmp_path / "scores.csv")
    for width in (80, 100):
        for extra in ([], ["--values"]):
            assert main(["score-table", str(csv), "--width", str(width), *extra]) == 0
            out = capsys.readouterr().out
            assert max(len(line) for line in out.splitlines()) <= width, (width, extra)
            assert "passed" in out.split("motion", 1)[1]
    assert main(["score-table", str(csv), "--width", "80", "--track", "motion"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[1]: line.split() for line in out.splitlines() if line.split()[:1] == ["1"]}
    # horn_schunck passes barberpole and diamonds (2 of 4); its barberpole error is 1
    assert lines["horn_schunck"][4:7] == ["4", "2/4", "1"]
    assert "lucas_kanade" in out and "0/4" in out
    assert main(["score-table", str(csv), "--width", "80", "--track", "attention"]) == 0
    out = capsys.readouterr().out
    assert "more criteria of 30: --values shows all" in out
    assert main(["score-table", str(csv), "--width", "80", "--track", "attention", "--values"]) == 0
    out = capsys.readouterr().out
    row = next(line.split() for line in out.splitlines() if line.startswith("movie4_on_movie5"))
    assert row[1:] == ["[%]", "0.89", "0.79"]  # pyramid (front 1) first, then itti


def test_score_command_runs_a_config_entry_or_an_algorithm_with_parameters(harness, tmp_path, capfd):
    """``psybench score MODEL BENCHMARK --config``: the rows of psybench.score, named and hashed as given."""
    import yaml

    from psybench.provenance import params_hash
    from psybench.registry import get_algorithm

    cfg = harness.tiny_config()
    cfg["motion"]["models"] = [{"name": "fb_wide", "algorithm": "farneback", "params": {"winsize": 21}}]
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))
    defaults = get_algorithm("farneback", track="motion").defaults
    out = tmp_path / "fb9.csv"
    capfd.readouterr()
    assert main(["score", "farneback", "motion/barberpole", "--config", str(config), "--param", "winsize=9",
                 "--name", "fb9", "--out", str(out), "--quiet", "--width", "80"]) == 0
    printed, err = capfd.readouterr()
    assert err == ""  # --quiet: no progress lines
    rows = pd.read_csv(out, keep_default_na=False)
    assert set(rows["model"]) == {"fb9"} and set(rows["metric"]) == {"error", "passed"}
    assert set(rows["params_hash"]) == {params_hash({**defaults, "winsize": 9})}
    table = [line for line in printed.splitlines() if not line.startswith("wrote ")]  # that line is a path
    assert "fb9@" in printed and "barberpole" in printed and max(map(len, table)) <= 80
    assert main(["score", "fb_wide", "motion/barberpole", "--config", str(config), "--quiet"]) == 0
    printed = capfd.readouterr().out
    assert f"fb_wide@{params_hash({**defaults, 'winsize': 21})[:8]}" in printed
    assert main(["score", "fb_narrow", "motion", "--config", str(config)]) == 2
    err = capfd.readouterr().err
    assert "fb_narrow" in err and "nor is it a name of the config's motion.models: ['fb_wide']" in err
    assert main(["score", "farneback", "--param", "winsize", "--config", str(config)]) == 2
    assert "--param 'winsize': expected KEY=VALUE" in capfd.readouterr().err
