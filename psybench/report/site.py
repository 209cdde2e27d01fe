"""The people-facing leaderboard report: a static HTML site rendered from computed leaderboards.

:func:`render_site` reads what :func:`psybench.aggregate.leaderboard.write_leaderboards`
wrote (the leaderboard tables and their JSON page data) and renders a self-contained
folder of plain HTML pages (inline CSS, no JavaScript, nothing downloaded) from the
Jinja2 templates in ``psybench/report/templates/``, with the PNG figures of
:mod:`psybench.report.figures`: one page per leaderboard plus ``index.html``.  It
computes nothing: fronts, ranks, ties and projections come from the files.

Every number links to where it comes from: criterion values to the figure or table
of their ``source`` (resolved against ``results_root`` and made relative to the
report), fronts and average ranks to the projection and parallel-coordinate
figures, tied ranks to the ties figure.  Missing scores show as "–".  Same files
in, byte-identical site out.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import numpy as np
import pandas as pd

from psybench.aggregate.labels import criterion_label
from psybench.aggregate.leaderboard import Leaderboard, read_leaderboards
from psybench.io.atomic import atomic_output
from psybench.io.tables import read_table
from psybench.report.figures import (
    parallel_figure,
    profile_figure,
    projections_figure,
    ties_figure,
)
from psybench.report.human import attention_ceilings, human_reference
from psybench.report.paper_tables import track_tables

__all__ = ["render_site"]

_MARKER = ".psybench-report"
_PROFILE_COLUMNS = ["track", "experiment", "metric", "value", "direction", "ci_low", "ci_high"]
_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_.") or "x"


def _unique_slugs(labels: Sequence[str]) -> dict[str, str]:
    """File-name-safe, distinct slug per label (collisions get a numeric suffix, in sorted order)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in sorted(labels):
        base = _slug(label)
        s, k = base, 2
        while s.lower() in used:
            s, k = f"{base}-{k}", k + 1
        used.add(s.lower())
        out[label] = s
    return out


def _href(path: str) -> str:
    return quote(path, safe="/#.-_~")


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return ""
    return f"{v:.4g}"


def _check_folder(out_dir: Path) -> None:
    # Snakemake drops a hidden .snakemake_timestamp into directory outputs: not user content.
    foreign = [p for p in out_dir.iterdir() if p.name != ".snakemake_timestamp"] if out_dir.is_dir() else []
    if out_dir.exists() and (not out_dir.is_dir() or foreign) and not (out_dir / _MARKER).exists():
        raise ValueError(f"{out_dir} exists and is not a psybench report folder; refusing to replace it")


# ---------------------------------------------------------------------------- figures of one leaderboard


def _draw(board: Leaderboard, site: Path, drawn: dict, tasks: list,
          copies: list) -> tuple[dict[str, str], dict[str, str]]:
    """Plan one leaderboard's figures under ``site``; return the figure and profile paths (relative).

    Each figure to draw is appended to ``tasks`` as ``(function, args)``, each profile to
    copy from another leaderboard's to ``copies`` as ``(source, destination)``
    (:func:`_draw_all` then draws them).
    """
    fig_dir = Path("figures") / board.name
    matrix = board.table.set_index("entry")[board.criteria]
    labels = list(matrix.index)
    front = board.table["front"].to_numpy(int)
    figs: dict[str, str] = {}
    if board.projections:
        figs["projections"] = (fig_dir / "projections.png").as_posix()
        tasks.append((projections_figure, (matrix, dict(zip(board.criteria, board.directions)), front, labels,
                                           board.projections, site / figs["projections"])))
    figs["parallel"] = (fig_dir / "parallel.png").as_posix()
    tasks.append((parallel_figure, (matrix, board.directions, front, labels, site / figs["parallel"])))
    if board.ties:
        figs["ties"] = (fig_dir / "ties.png").as_posix()
        tasks.append((ties_figure, (board.ties, site / figs["ties"])))
    slugs = _unique_slugs(labels)
    profile_of = {}
    for e in labels:
        profile_of[e] = (fig_dir / f"profile_{slugs[e]}.png").as_posix()
        rows = board.cells[board.cells["entry"] == e]
        # the same entry with the same scores in another leaderboard: copy, don't redraw
        key = (e, pd.util.hash_pandas_object(rows[_PROFILE_COLUMNS], index=False).to_numpy().tobytes())
        if key in drawn:
            copies.append((site / drawn[key], site / profile_of[e]))
        else:
            tasks.append((profile_figure, (rows, e, site / profile_of[e])))
            drawn[key] = profile_of[e]
    return figs, profile_of


def _draw_all(tasks: Sequence[tuple], copies: Sequence[tuple[Path, Path]], workers: int) -> None:
    """Draw every planned figure, in ``workers`` processes, then make the copies.

    Each figure is drawn by its own function from its own arguments, in whichever
    process, so its PNG has the same bytes (the report is the run's last job,
    alone on the machine, and drawing is nearly all of it). Forked workers inherit the
    imported Matplotlib: no start-up.
    """
    if workers > 1 and len(tasks) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=multiprocessing.get_context("fork")) as pool:
            for done in [pool.submit(function, *args) for function, args in tasks]:
                done.result()
    else:
        for function, args in tasks:
            function(*args)
    for source, destination in copies:
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)


# ---------------------------------------------------------------------------- pages


def _cell(v: float, lo: float, hi: float, src: str, fallback: str, out_dir: Path, results_root: Path) -> dict:
    if src:
        href = Path(os.path.relpath(results_root / src, out_dir)).as_posix()
        title = f"from {src}"
    else:
        href, title = fallback, "no source recorded: see the profile figure"
    ci = f"[{_fmt(lo)}, {_fmt(hi)}]" if np.isfinite(lo) and np.isfinite(hi) else ""
    return {"missing": not np.isfinite(v), "value": _fmt(v), "ci": ci, "href": _href(href), "title": title}


def _scope(spec: dict[str, Any], *, long: bool) -> str:
    scope = (f"track {spec['track']}" if long else spec["track"]) if spec["track"] else "all tracks"
    if spec["model"]:
        scope += (f"; intra-technique: parameter sets of model {spec['model']}" if long
                  else f" (parameter sets of {spec['model']})")
    return scope


def _pareto(board: Leaderboard) -> str:
    return ", ".join(str(e) for e in board.table.loc[board.table["pareto_optimal"], "entry"])


def _people(board: Leaderboard, human: dict[str, Any]) -> list[dict[str, Any]]:
    """The human reference of each track on a page (psybench.report.human), with this run's facts."""
    tracks = [board.spec["track"]] if board.spec["track"] else sorted(set(board.cells["track"]))
    out = []
    for t in tracks:
        ref = human_reference(t)
        if ref is None:
            continue
        out.append({
            "track": t, "summary": ref.summary, "citation": ref.citation,
            "targets": [{"criterion": e.replace("_", " "), "text": v} for e, v in ref.per_criterion.items()],
            "synthetic": ref.synthetic_default if t in human.get("synthetic", ()) else "",
            "ceilings": human.get("ceilings", {}) if t == "attention" else {},
            "gaze_counts": human.get("gaze_counts", []) if t == "attention" else [],
        })
    return out


def _gaze_counts(paths: Sequence[str | os.PathLike]) -> list[dict[str, Any]]:
    """Rows of the attention gaze stage's sample counts (``attention/gaze/<movie>.counts.csv`` under results,
    :data:`psybench.attention.gaze.movie_table.COUNT_COLUMNS`), one per gaze file, for the attention page."""
    tables = [read_table(p) for p in paths]
    tables = [t for t in tables if len(t)]
    if not tables:
        return []
    rows = []
    for r in pd.concat(tables, ignore_index=True).itertuples(index=False):
        rows.append({"movie": r.movie, "file": r.file, "samples": int(r.samples), "valid": int(r.valid),
                     "lost": [int(r.flagged), int(r.no_time), int(r.off_screen)],
                     "off_movie": int(getattr(r, "off_movie", 0)),
                     "outside_movie": int(r.outside_movie), "saccade": int(r.saccade),
                     "geometry": _geometry_used(r),
                     "lost_share": f"{100 * r.lost_share:.1f}", "max_lost_share": f"{100 * r.max_lost_share:.0f}",
                     "over": bool(r.lost_share > r.max_lost_share)})
    return rows


def _geometry_used(r: Any) -> str:
    """The screen and shown movie a gaze file was mapped with, and where each came from (config, file, assumed)."""
    parts = []
    for label, size, source in (("screen", "screen_px", "screen_from"), ("movie", "movie_px", "movie_from")):
        value, origin = getattr(r, size, ""), getattr(r, source, "none")
        if isinstance(value, str) and value and origin != "none":
            parts.append(f"{label} {value} px ({origin})")
    return ", ".join(parts) or "none (positions are movie pixels)"


def _held_out(section: dict[str, Any], out_dir: Path, results_root: Path) -> dict[str, Any] | None:
    """The bio-inspired models' failing held-out cells (computed by the motion track), with links for the page."""
    if not section.get("table1"):
        return None
    gen_path = section.get("generalisation")
    models = copy.deepcopy(list(section.get("models") or []))

    def rel(path: Path) -> str:
        return _href(Path(os.path.relpath(path, out_dir)).as_posix())

    for m in models:
        for cell in m["table1"] + m["generalisation"]:
            cell["figures"] = [{"label": f["label"], "href": rel(results_root / f["path"])} for f in cell["figures"]]
            cell["error"] = _fmt(cell["error"])
            for d in cell.get("directions", ()):
                d["error"] = _fmt(d["error"])
    return {"models": models, "table1_href": rel(Path(section["table1"])),
            "generalisation_href": rel(Path(gen_path)) if gen_path else ""}


def _page(board: Leaderboard, figs, profile_of, table_href: str, out_dir: Path, results_root: Path,
          human: dict[str, Any]) -> str:
    spec, table, criteria = board.spec, board.table, board.criteria
    c_ = board.cells
    where = {(e, c): (lo, hi, src) for e, c, lo, hi, src in zip(c_["entry"], c_["criterion"], c_["ci_low"],
                                                                 c_["ci_high"], c_["source"])}
    tie_cols = [c for c in criteria if c in board.ties]
    fallback_fig = figs.get("projections") or figs["parallel"]
    rows = []
    for _, r in table.iterrows():
        e = r["entry"]
        row_cells = []
        for c in criteria:
            lo, hi, src = where.get((e, c), (np.nan, np.nan, ""))
            src = src if isinstance(src, str) else ""
            row_cells.append(_cell(float(r[c]), float(lo), float(hi), src, profile_of[e], out_dir, results_root))
        track = r.get("track", "")
        rows.append({
            "entry": e, "track": track, "slug": _slug(e), "front": int(r["front"]),
            "track_href": _href(human["track_pages"].get(track, f"#human-{track}")),
            "pareto_optimal": bool(r["pareto_optimal"]),
            "average_rank": _fmt(float(r["average_rank"])), "n_ranked": int(r["n_ranked"]),
            "tied_ranks": [int(r[f"tied_rank:{c}"]) if pd.notna(r[f"tied_rank:{c}"]) else None for c in tie_cols],
            "dominated_by": r["dominated_by"], "cells": row_cells,
        })
    eps = spec["epsilon"]
    return _TEMPLATES.get_template("leaderboard.html").render(
        title=spec["title"] or f"Leaderboard: {spec['name']}",
        scope=_scope(spec, long=True),
        criteria=[{"name": c, "short": criterion_label(c, with_track=spec["track"] is None),
                   "better": "lower" if d == "min" else "higher"} for c, d in zip(criteria, board.directions)],
        tie_columns=[{"name": c, "short": criterion_label(c, with_track=spec["track"] is None)} for c in tie_cols],
        people=_people(board, human),
        paper=human["paper"].get(board.spec["track"]) if board.spec["model"] is None else None,
        paper_track=board.spec["track"] or "",
        paper_links=human["paper_links"] if board.spec["track"] is None else [],
        held_out=human["held_out"] if board.spec["track"] == "motion" and board.spec["model"] is None else None,
        per_track="track" in table.columns,
        workflow_report=_href(human["workflow_report"]) if human["workflow_report"] else "",
        pareto=_pareto(board),
        epsilon="none (ordinary Pareto dominance)" if not eps else str(eps),
        missing=("missing scores are ignored pairwise: two entries are compared on the criteria both have, and "
                 "the average rank is over the criteria an entry has (column n)" if spec["missing"] == "ignore"
                 else "missing scores are not allowed (missing='raise')"),
        table_href=_href(table_href),
        rows=rows,
        figures={"fronts": _href(fallback_fig), "parallel": _href(figs["parallel"]),
                 "projections": _href(figs["projections"]) if "projections" in figs else "",
                 "ties": _href(figs["ties"]) if "ties" in figs else ""},
        profiles=[{"entry": e, "slug": _slug(e), "href": _href(profile_of[e])} for e in table["entry"]],
    )


def render_site(
    pages: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    results_root: str | os.PathLike,
    title: str = "psybench leaderboards",
    synthetic: Sequence[str] = (),
    attention_table: str | os.PathLike | None = None,
    attention_metrics: str | os.PathLike | None = None,
    gaze_counts: Sequence[str | os.PathLike] = (),
    workflow_report: str = "",
    motion_held_out: dict[str, Any] | None = None,
    scores: str | os.PathLike | None = None,
    workers: int = 1,
) -> list[Leaderboard]:
    """Render the HTML leaderboard report from computed leaderboards.

    Parameters
    ----------
    pages : path
        The JSON page data of :func:`psybench.aggregate.leaderboard.write_leaderboards`;
        the leaderboard tables sit beside it.
    out_dir : path
        Report folder: ``index.html``, ``<name>.html`` per leaderboard,
        ``figures/<name>/*.png``.  Built in a temporary sibling and renamed into
        place (:func:`psybench.io.atomic.atomic_output`); an existing report there
        (marked by a hidden ``.psybench-report`` file) is replaced; any other
        non-empty folder is an error.
    results_root : path
        Folder the ``source`` column is relative to; links are made relative to
        ``out_dir``.
    title : str
        Title of ``index.html``.
    synthetic : sequence of str
        Tracks whose data in this run stand in for people (generated IntPhys
        movies, synthetic observers): their pages say so.
    attention_table : path, optional
        The attention evaluation table (``table1.csv``): its inter-observer ceiling
        per ``<train>_on_<test>`` pair (:func:`psybench.report.human.attention_ceilings`)
        is shown with the attention reference.
    attention_metrics : path, optional
        The attention metrics table (``metrics.csv``): shown under attention Table 1
        with each metric's chance level, ceiling and share of the way from one to the other.
    gaze_counts : sequence of path
        The attention gaze stage's sample counts (``attention/gaze/<movie>.counts.csv`` under the results folder):
        per gaze file its samples, valid samples and the samples lost to each validity
        rule, shown with the attention reference (recordings over their
        ``max_lost_share`` marked).
    workflow_report : str
        Link (relative to ``out_dir``) to the Snakemake report, shown on every page.
    motion_held_out : dict, optional
        ``{"table1": path, "generalisation": path or None, "models": [...]}`` as the
        motion track computes it (``psybench.motion.held_out.held_out_section``): the
        motion track page then lists every failing held-out cell of the bio-inspired
        models, linked to their figures under ``<results_root>/motion/figures/``.
    scores : path, optional
        The long score table (``scores_long.csv``): its IntPhys rows give the IntPhys
        page's L_R / L_A per block and visibility.
    workers : int
        Processes drawing the figures (the same PNGs for any number).

    Each track page opens with the track's paper table (:mod:`psybench.report.paper_tables`):
    motion Table 1 from ``motion_held_out["table1"]``, attention Table 1 from
    ``attention_table``, IntPhys from ``scores``.

    Returns
    -------
    list of Leaderboard
        The leaderboards as read.

    Raises
    ------
    ValueError
        A non-report folder at ``out_dir``, or a page-data file of another format.
    """
    pages, out_dir, results_root = Path(pages), Path(out_dir), Path(results_root)
    attention = read_table(attention_table) if attention_table else None
    ceilings = attention_ceilings(attention) if attention is not None else {}
    held = motion_held_out or {}
    paper = track_tables(motion_table1=held.get("table1"), motion_generalisation=held.get("generalisation"),
                         motion_bounds=held.get("bounds"), attention_table1=attention,
                         attention_metrics=read_table(attention_metrics) if attention_metrics else None, scores=scores)
    _check_folder(out_dir)
    boards = read_leaderboards(pages)
    human = {"synthetic": list(synthetic), "ceilings": ceilings, "workflow_report": workflow_report, "paper": paper,
             "gaze_counts": _gaze_counts(gaze_counts),
             "held_out": _held_out(motion_held_out or {}, out_dir, results_root),
             "track_pages": {b.spec["track"]: f"{b.name}.html" for b in reversed(boards)
                             if b.spec["track"] and b.spec["model"] is None}}
    if not boards:
        raise ValueError(f"{pages}: no leaderboards to render")
    human["paper_links"] = [{"track": t, "href": _href(f"{human['track_pages'][t]}#paper-table")}
                            for t in sorted(paper) if t in human["track_pages"]]
    summaries = []
    drawn: dict[tuple[str, bytes], str] = {}
    tasks: list[tuple] = []
    copies: list[tuple[Path, Path]] = []
    with atomic_output(out_dir, directory=True) as site:
        (site / _MARKER).write_text("psybench leaderboard report\n")
        for board in boards:
            figs, profile_of = _draw(board, site, drawn, tasks, copies)
            table_href = Path(os.path.relpath(pages.parent / board.table_name, out_dir)).as_posix()
            page = _page(board, figs, profile_of, table_href, out_dir, results_root, human)
            (site / f"{board.name}.html").write_text(page, encoding="utf-8")
            summaries.append({
                "name": board.name, "page_href": _href(board.name + ".html"),
                "title": board.spec["title"] or board.name,
                "scope": _scope(board.spec, long=False), "n_entries": len(board.table),
                "n_criteria": len(board.criteria), "pareto": _pareto(board), "table_href": _href(table_href),
                "thumb": _href(figs.get("projections") or figs["parallel"]),
            })
        _draw_all(tasks, copies, workers)
        people = list({p["track"]: p for b in boards for p in _people(b, human)}.values())
        index = _TEMPLATES.get_template("index.html").render(title=title, boards=summaries, first=summaries[0],
                                                             people=people, workflow_report=workflow_report,
                                                             paper_links=human["paper_links"])
        (site / "index.html").write_text(index, encoding="utf-8")
    return boards
