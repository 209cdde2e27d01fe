"""``psybench score MODEL [BENCHMARK]``: :func:`psybench.score` on the command line.

MODEL is the name of an entry of the config's ``<track>.models`` (its algorithm and
parameters), a registered algorithm (``psybench models``) or a user function
``package.module:function``; BENCHMARK a track or one experiment
(``motion/barberpole``); ``--config`` a YAML config laid over the repository's
``config/config.yaml`` key by key, as ``snakemake --configfile`` lays it (a file
holding only what it changes, like the workflow's).  The score rows are printed
as a table of experiments by metrics, folded to the terminal's width, and written
whole with ``--out`` (``.csv``, and ``.parquet`` beside it): the same rows, with the
same ``model`` and ``params_hash``, as the Python call returns.
"""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd

__all__ = ["add_score_parser", "run_score", "parse_params", "format_rows"]

#: Rows of the printed table; the rest are written by ``--out`` only.
MAX_PRINTED_ROWS = 40


def add_score_parser(sub: Any) -> None:
    """Add the ``score`` subcommand to the ``psybench`` parser's subparsers ``sub``."""
    p = sub.add_parser(
        "score",
        help="score one model on a benchmark (psybench.score), without the workflow",
        description="Score MODEL (a config entry's name, a registered algorithm or package.module:function) on "
        "BENCHMARK (a track, or track/experiment) with the config's stimuli and criteria, as the workflow does.",
    )
    p.add_argument("model", help="config entry name, registered algorithm (psybench models) or package.module:function")
    p.add_argument("benchmark", nargs="?", default="motion",
                   help="motion, attention, intphys or one experiment, e.g. motion/barberpole (default: motion)")
    p.add_argument("--config", help="YAML config laid over the repository's config/config.yaml, as snakemake "
                   "--configfile lays it (default: that config alone)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a model parameter (VALUE read as YAML: 0.5, true, [1, 2]); repeatable")
    p.add_argument("--name", help="the model column (default: the config entry's or algorithm's name)")
    p.add_argument("--kind", help="interface of a user function (default: the track's first)")
    p.add_argument("--L", type=int, nargs="+", help="attention: neighbourhood side(s) L of the feature vector")
    p.add_argument("--stimuli", help="folder of stimulus stores already rendered for this config")
    p.add_argument("--workdir", help="keep the intermediate stores here (default: a temporary folder)")
    p.add_argument("--threads", type=int, default=1, help="threads of a pair model's frame pairs (default: 1)")
    p.add_argument("--out", metavar="CSV", help="also write every row to this .csv (+ .parquet)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--width", type=int, help="columns of the printed table (default: the terminal's, else 80)")


def parse_params(items: list[str]) -> dict[str, Any]:
    """``["alpha=0.5", "levels=2"]`` -> ``{"alpha": 0.5, "levels": 2}`` (values read as YAML).

    >>> parse_params(["alpha=0.5", "multigrid=false", "speeds_deg_s=[5, 10]"])
    {'alpha': 0.5, 'multigrid': False, 'speeds_deg_s': [5, 10]}
    """
    from psybench._yaml import safe_load

    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param {item!r}: expected KEY=VALUE, e.g. --param alpha=0.5")
        try:
            params[key.strip()] = safe_load(value)
        except Exception as exc:
            raise ValueError(f"--param {item!r}: {value!r} is not a YAML value ({exc})") from None
    return params


def format_rows(rows: pd.DataFrame, *, width: int) -> str:
    """Score rows as a table of (model, experiment) by metric, folded to ``width`` columns."""
    label = rows["model"].astype(str)
    hashes = rows["params_hash"].fillna("").astype(str)
    label = label.where(hashes == "", label + "@" + hashes.str[:8])
    table = rows.assign(model=label).pivot_table(index=["model", "experiment"], columns="metric", values="value",
                                                 aggfunc="first", dropna=False, sort=False)
    table.columns.name = None
    shown = table.head(MAX_PRINTED_ROWS).map(lambda v: "-" if pd.isna(v) else f"{float(v):.4g}")
    text = shown.to_string(line_width=width)
    if len(table) > len(shown):
        text += f"\n({len(table) - len(shown)} more rows of {len(table)}: --out writes them all)"
    return text


def run_score(args: argparse.Namespace) -> int:
    """The ``score`` subcommand: score, print the table, write ``--out``; 0 on success."""
    import psybench
    from psybench.board_text import terminal_width
    from psybench.config import read_config_file
    from psybench.io.tables import write_table

    overrides = read_config_file(args.config) if args.config else None
    rows = psybench.score(args.model, args.benchmark, params=parse_params(args.param) or None, name=args.name,
                          kind=args.kind, overrides=overrides, stimuli=args.stimuli, workdir=args.workdir,
                          L=args.L, threads=args.threads, progress=not args.quiet)
    print(f"{args.model} on {args.benchmark}: {len(rows)} score rows")
    print(format_rows(rows, width=terminal_width() if args.width is None else args.width))
    if args.out:
        write_table(rows, args.out)
        print(f"wrote {args.out}")
    return 0
