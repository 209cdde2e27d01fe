"""``psybench`` command line: leaderboards in the terminal, for people who do not read Snakemake output.

Subcommands
-----------
``psybench leaderboard [--results results] [--track TRACK]``
    Pareto fronts (Cabezas & Trujillo 2011, A non-linear quantitative evaluation approach
    for disparity estimation, VISAPP) and Middlebury-style average rank of the workflow's
    long score table ``<results>/aggregate/scores_long.parquet`` (or ``.csv``).
``psybench score MODEL [BENCHMARK] [--config YAML] [--param KEY=VALUE] [--out CSV]``
    Score one model without the workflow (:func:`psybench.score`,
    :mod:`psybench.cli_score`): a config entry's name, a registered algorithm or a
    ``package.module:function``, on a track or one experiment.
``psybench score-table PATH``
    The same for any long-format score CSV a user gives, or a folder of them
    (every ``*.csv`` below PATH that has the score columns is concatenated).
``psybench models`` / ``psybench benchmarks``
    List what the registry (``psybench.registry``) knows.
``psybench validate-answer ANSWER --data-root ROOT [--split test] [--conditions CSV]``
    Check an IntPhys submission (``answer.txt``) against a tree: every movie scored
    once in [0, 1], every quadruplet complete, no unknown id (the official scorer's
    descriptive ids, or the short ``<block>/<index>/<run>``)
    (:func:`psybench.intphys.answer.validate_answer`).
``psybench score-answer ANSWER --tree ROOT [--split dev] [--out scores.csv]``
    Score it against a labelled tree's split as the workflow scores a model
    (:func:`psybench.intphys.score_answer.score_answer`); the test split has no
    labels and is scored only by submission.

Exit codes: 0 success, 2 usage or data error (one line on stderr naming the file,
column or key).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from psybench.cli_score import add_score_parser, run_score

__all__ = ["main", "build_parser", "format_leaderboard"]

EXIT_OK = 0
EXIT_ERROR = 2
_LONG_TABLE = ("aggregate/scores_long.parquet", "aggregate/scores_long.csv")


class CLIError(Exception):
    """An error to print as one line and exit with status 2."""


def _add_scoring_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--track", help="only this track (default: all tracks, the cross-track leaderboard)")
    p.add_argument(
        "--model",
        help="intra-technique evaluation: compare the parameter sets of this one model "
        "(Cabezas & Trujillo 2011, sec. 3.3)",
    )
    p.add_argument(
        "--criteria",
        nargs="+",
        metavar="CRITERION",
        help="criteria to compare, named track/experiment/metric (default: all present)",
    )
    p.add_argument(
        "--epsilon",
        action="append",
        default=[],
        metavar="[CRITERION=]EPS",
        help="dominance tolerance: a bare number applies to every criterion, CRITERION=EPS to one "
        "(repeatable); a must beat b by more than EPS to count as better",
    )
    p.add_argument(
        "--missing",
        choices=("ignore", "raise"),
        default="ignore",
        help="missing scores: 'ignore' compares each pair on the criteria both have and averages ranks "
        "over available criteria (default); 'raise' refuses tables with missing scores",
    )
    p.add_argument("--values", action="store_true",
                   help="print every criterion's value, folded to the width (default: the values that fit)")
    p.add_argument("--width", type=int, help="columns of the printed table (default: the terminal's, else 80)")
    p.add_argument("--out", metavar="CSV", help="also write the leaderboard to this .csv (+ .parquet)")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``psybench`` command."""
    parser = argparse.ArgumentParser(
        prog="psybench",
        description="Benchmark vision models against human behaviour: scores, leaderboards and registry listings.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser(
        "leaderboard",
        help="print Pareto fronts and average ranks of the workflow's results",
        description="Pareto fronts (Cabezas & Trujillo 2011) and average rank from "
        "<results>/aggregate/scores_long.parquet or .csv.",
    )
    p.add_argument("--results", default="results", help="results folder of a workflow run (default: results)")
    _add_scoring_options(p)
    add_score_parser(sub)
    p = sub.add_parser(
        "score-table",
        help="fronts and ranks of a long-format score CSV, or a folder of them",
        description="Score any long-format table with columns "
        "model, params_hash, track, experiment, metric, value, direction, ci_low, ci_high, source.",
    )
    p.add_argument("path", help="a .csv/.parquet score table, or a folder: every *.csv below it with the score columns")
    _add_scoring_options(p)
    p = sub.add_parser("models", help="list registered models of every track, with their parameters and defaults")
    p.add_argument("--track", help="only models of this track")
    p.add_argument("--long", action="store_true", help="show every field the registry gives, not only the main ones")
    p = sub.add_parser("benchmarks", help="list registered benchmarks")
    p.add_argument("--long", action="store_true", help="show every field the registry gives, not only the main ones")
    what = "an IntPhys answer.txt against a tree: one '<movie id> <score>' line per movie, "
    p = sub.add_parser("validate-answer", help=f"check {what}...", description=f"Check {what}every quadruplet "
                       "complete, scores in [0, 1].")
    p.add_argument("answer", help="the answer.txt to check")
    p.add_argument("--data-root", required=True, help="IntPhys dataset root holding <split>/")
    p.add_argument("--split", default="test", choices=("dev", "test"), help="split the answer is for (default: test)")
    p.add_argument("--conditions", help="condition table (intphys.conditions) the answer's ids were written with")
    p = sub.add_parser("score-answer", help="score an IntPhys answer.txt against a labelled tree (L_R, L_A)",
                       description="Score an IntPhys answer.txt against the labels of TREE/<split>, as the workflow "
                       "scores a model (Riochet et al. 2018, sec. 3.2); the answer is checked as validate-answer "
                       "checks it. The released test split has no labels: submit its answer instead.")
    p.add_argument("answer", help="the answer.txt to score")
    p.add_argument("--tree", required=True, help="IntPhys dataset root holding <split>/")
    p.add_argument("--split", default="dev", choices=("dev", "test"), help="labelled split to score on (default: dev)")
    p.add_argument("--conditions", help="condition table for movies without conditions (intphys.conditions)")
    p.add_argument("--model", help="name in the model column (default: the answer's folder)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples of the intervals (default: 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--out", help="also write the table here (.csv, + .parquet beside it)")
    return parser


# ---------------------------------------------------------------------------- scores


def _read_folder(folder: Path) -> pd.DataFrame:
    from psybench.aggregate.table import SCORE_COLUMNS, concat_scores, read_scores

    files = sorted(p for p in folder.rglob("*.csv") if p.is_file())
    if not files:
        raise CLIError(f"{folder}: no *.csv files in this folder")
    frames, skipped = [], []
    for f in files:
        try:
            header = list(pd.read_csv(f, nrows=0, dtype=str).columns)
        except Exception as exc:
            raise CLIError(f"{f}: cannot be read as CSV ({type(exc).__name__}: {exc})") from exc
        if all(c in header for c in SCORE_COLUMNS):
            frames.append((str(f), read_scores(f)))
        else:
            skipped.append(f)
    if not frames:
        first = skipped[0]
        header = list(pd.read_csv(first, nrows=0, dtype=str).columns)
        missing = [c for c in SCORE_COLUMNS if c not in header]
        raise CLIError(
            f"{folder}: no score table found; e.g. {first} lacks columns {missing} "
            f"(a score table needs {SCORE_COLUMNS})"
        )
    if skipped:
        names = ", ".join(str(s) for s in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
        print(f"psybench: note: skipped {len(skipped)} CSV file(s) without the score columns: {names}", file=sys.stderr)
    return concat_scores(dict(frames))  # re-checked together: a key in two files is an error naming both


def _load_scores(path: Path) -> pd.DataFrame:
    from psybench.aggregate.table import read_scores

    if path.is_dir():
        return _read_folder(path)
    if not path.exists():
        raise CLIError(f"{path}: no such file or folder")
    return read_scores(path)


def _parse_epsilon(specs: Sequence[str], criteria: Sequence[str]) -> dict[str, float] | None:
    if not specs:
        return None
    default = 0.0
    per: dict[str, float] = {}
    for spec in specs:
        name, sep, value = spec.rpartition("=")
        try:
            eps = float(value)
        except ValueError:
            raise CLIError(f"--epsilon {spec!r}: {value!r} is not a number") from None
        if not sep:
            default = eps
        elif name not in criteria:
            raise CLIError(f"--epsilon {spec!r}: unknown criterion {name!r} (criteria: {list(criteria)})")
        else:
            per[name] = eps
    return {c: per.get(c, default) for c in criteria}


def format_leaderboard(table: pd.DataFrame, *, show_values: bool = False, title: str = "",
                       width: int | None = None, verdicts: dict[str, str] | None = None) -> str:
    """Render a :func:`psybench.aggregate.leaderboard` table for the terminal, every line within ``width``.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`psybench.aggregate.table.leaderboard`.
    show_values : bool
        Every criterion's value, folded to the width (default: the values that fit).
    title : str
        First line(s).
    width : int, optional
        Columns (default: the terminal's, :func:`psybench.board_text.terminal_width`).
    verdicts : dict, optional
        ``{entry: "k/n"}`` verdicts passed (:func:`psybench.board_text.entry_verdicts`).

    Returns
    -------
    str
    """
    import textwrap

    from psybench.board_text import render_leaderboard, terminal_width

    width = terminal_width() if width is None else width
    criteria = list(table.attrs.get("criteria", []))
    missing = table.attrs.get("missing", "")
    legend = (f"{len(table)} entries, {len(criteria)} criteria, missing={missing}; front 1 = Pareto-optimal set "
              "(Cabezas & Trujillo 2011), avg_rank = Middlebury-style average rank (1 = best) over n criteria"
              + ("; passed = Table 1 verdicts passed" if verdicts else ""))
    lines = [textwrap.fill(text, width=width) for text in [*title.splitlines(), legend] if text]
    lines.append(render_leaderboard(table, width=width, values=show_values, verdicts=verdicts))
    return "\n".join(lines)


def _report_specs(results: Path | None) -> list[dict[str, Any]]:
    """The leaderboard specs the workflow's report used (``<results>/aggregate/leaderboards.json``), if any."""
    import json

    pages = None if results is None else results / "aggregate" / "leaderboards.json"
    if pages is None or not pages.is_file():
        return []
    return [dict(e["spec"]) for e in json.loads(pages.read_text(encoding="utf-8")).get("leaderboards", [])]


def _leaderboard(args: argparse.Namespace, long_df: pd.DataFrame, title: str, results: Path | None = None) -> int:
    """Rank as the report does: the same function, and the report's criteria when none are given."""
    from psybench.aggregate.leaderboard import compute_leaderboards
    from psybench.aggregate.overall import track_criteria
    from psybench.aggregate.table import error_matrix
    from psybench.io.tables import write_table

    specs = _report_specs(results)
    criteria = args.criteria
    if criteria is None:
        same = [s for s in specs if s.get("track") == args.track and s.get("model") == args.model]
        criteria = same[0].get("criteria") if same else None
    matrix, _ = error_matrix(long_df, criteria=criteria, track=args.track, model=args.model)
    spec = {"name": "cli", "track": args.track, "criteria": criteria, "model": args.model,
            "epsilon": _parse_epsilon(args.epsilon, list(matrix.columns)), "missing": args.missing}
    board = compute_leaderboards(long_df, leaderboards=[spec], by_track=track_criteria(specs))[0]
    table = board.table
    scope = f"track={args.track}" if args.track else "all tracks (one front per track)"
    if args.model:
        scope += f", parameter sets of model {args.model}"
    from psybench.board_text import entry_verdicts

    print(format_leaderboard(table, show_values=args.values, title=f"{title}\n({scope})", width=args.width,
                             verdicts=entry_verdicts(long_df, model=args.model)))
    if args.out:
        write_table(table, args.out)
        print(f"wrote {args.out}")
    return EXIT_OK


def _cmd_leaderboard(args: argparse.Namespace) -> int:
    from psybench.aggregate.table import read_scores

    results = Path(args.results)
    for rel in _LONG_TABLE:
        path = results / rel
        if path.is_file():
            return _leaderboard(args, read_scores(path), f"Leaderboard from {path}", results)
    raise CLIError(
        f"{results / _LONG_TABLE[0]} (or .csv) not found: run the workflow first, "
        "or score a folder with `psybench score-table PATH`"
    )


def _cmd_score_table(args: argparse.Namespace) -> int:
    path = Path(args.path)
    return _leaderboard(args, _load_scores(path), f"Leaderboard of {path}")


# ---------------------------------------------------------------------------- registry


def _registry_call(function: str, module: str = "psybench.registry", **kwargs: Any) -> list[dict[str, Any]]:
    try:
        registry = importlib.import_module(module)
    except ImportError as exc:
        raise CLIError(f"{module} cannot be imported: {exc}") from exc
    fn = getattr(registry, function, None)
    if fn is None:
        raise CLIError(f"{module} has no {function}(); this psybench version cannot list these")
    records = list(fn(**kwargs))
    for r in records:
        if not isinstance(r, dict):
            raise CLIError(f"{module}.{function}() returned {type(r).__name__} items, expected dicts")
    return records


def _print_records(records: list[dict[str, Any]], preferred: Sequence[str], what: str, *, long: bool) -> None:
    """Left-aligned columns in ``preferred`` order; the last column (often long, e.g. params) is not padded."""
    if not records:
        print(f"no {what} registered")
        return
    cols = [c for c in preferred if any(c in r for r in records)]
    if long or not cols:
        cols += sorted({k for r in records for k in r} - set(cols))
    cells = [[str(r.get(c, "")) for c in cols] for r in records]
    widths = [max(len(c), *(len(row[j]) for row in cells)) for j, c in enumerate(cols)]
    for row in [cols, *cells]:
        print("  ".join(v.ljust(w) for v, w in zip(row[:-1], widths)) + ("  " if len(row) > 1 else "") + row[-1])


def _cmd_models(args: argparse.Namespace) -> int:
    records = _registry_call("list_models", track=args.track)
    _print_records(records, ["track", "name", "kind", "source", "params"], "models", long=args.long)
    return EXIT_OK


def _cmd_benchmarks(args: argparse.Namespace) -> int:
    records = _registry_call("list_benchmarks", module="psybench.benchmarks")
    _print_records(records, ["name", "track", "paper", "experiments"], "benchmarks", long=args.long)
    return EXIT_OK


_COMMANDS = {
    "leaderboard": _cmd_leaderboard,
    "score": run_score,
    "score-table": _cmd_score_table,
    "models": _cmd_models,
    "benchmarks": _cmd_benchmarks,
}


def _cmd_validate_answer(args: argparse.Namespace) -> int:
    from psybench.intphys.answer import validate_answer

    r = validate_answer(args.answer, args.data_root, args.split, conditions=args.conditions)
    print(f"{args.answer}: valid submission for {Path(args.data_root) / args.split}: {r['movies']} movies, "
          f"{r['quadruplets']} complete quadruplets, scores in [{r['min']:.4g}, {r['max']:.4g}]")
    return EXIT_OK


_COMMANDS["validate-answer"] = _cmd_validate_answer


def _cmd_score_answer(args: argparse.Namespace) -> int:
    from psybench.intphys.metrics import FACTORS
    from psybench.intphys.score_answer import score_answer
    from psybench.io.tables import write_table

    table = score_answer(args.answer, args.tree, args.split, model=args.model, conditions=args.conditions,
                         n_boot=args.n_boot, seed=args.seed)
    if args.out:
        write_table(table, args.out)
    overall = table[(table[list(FACTORS)].astype(str) == "all").all(axis=1)]
    print(f"{args.answer} on {Path(args.tree) / args.split}:")
    print(overall[["model", "metric", "value", "ci_low", "ci_high", "n_quadruplets"]].to_string(index=False))
    return EXIT_OK


_COMMANDS["score-answer"] = _cmd_score_answer


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``psybench`` command; return the exit status (0 ok, 2 error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2): argparse already printed
        return int(exc.code) if isinstance(exc.code, int) else EXIT_ERROR
    try:
        return _COMMANDS[args.command](args)
    except (CLIError, ValueError, OSError) as exc:  # ScoreTableError is a ValueError
        message = " ".join(str(exc).split())
        print(f"psybench: error: {message}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
