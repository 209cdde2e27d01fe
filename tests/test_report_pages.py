"""Every report page as a reader opens it: the paper's table first (a row per model, a user's included, and
people's row), every local link alive, and an attention leaderboard whose fronts separate its entries."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd
import pytest
from test_aggregate_labels import attention_rows
from test_report_leaderboard import _chromium, _run_chromium

from psybench.aggregate.leaderboard import compute_leaderboards, write_leaderboards
from psybench.aggregate.table import SCORE_COLUMNS
from psybench.io.tables import write_table
from psybench.motion.held_out import held_out_section
from psybench.report.paper_tables import motion_table
from psybench.report.site import render_site

EXPS = ("barberpole", "diamonds", "dashed_bars", "grating_size")
# Table 1 verdicts and errors; my_flow is a user's own model, people the reference observer's rows
TABLE1 = {"people": (True, True, True, True), "horn_schunck": (True, False, False, False),
          "my_flow": (True, True, False, True)}
INTPHYS = {"tracking": 0.05, "my_physics": 0.3}
LEADERBOARDS = [{"name": "overall", "track": None}, {"name": "motion", "track": "motion"},
                {"name": "attention", "track": "attention"}, {"name": "intphys", "track": "intphys"}]


def _row(model, track, experiment, metric, value, direction, source=""):
    return {"model": model, "params_hash": "", "track": track, "experiment": experiment, "metric": metric,
            "value": value, "direction": direction, "ci_low": np.nan, "ci_high": np.nan, "source": source}


def _motion_table1() -> pd.DataFrame:
    rows = []
    for model, verdicts in TABLE1.items():
        for k, (exp, ok) in enumerate(zip(EXPS, verdicts)):
            err = 0.0 if ok else 10.0 + k
            rows.append({"experiment": exp, "model": model, "passed": ok, "error": err, "n_directions": 2,
                         "passed_dir000": ok, "error_dir000": err, "passed_dir015": ok, "error_dir015": err})
    return pd.DataFrame(rows)


def _long(table1: pd.DataFrame) -> pd.DataFrame:
    rows = [_row(r.model, "motion", r.experiment, "error", r.error, "lower", f"motion/figures/{r.model}_flow.png")
            for r in table1.itertuples()]
    for model, base in INTPHYS.items():
        for block in ("O1", "O2", "all"):
            for vis, extra in (("visible", 0.0), ("occluded", 0.2), ("all", 0.1)):
                for metric in ("L_R", "L_A"):
                    rows.append(_row(model, "intphys", f"{block}/{vis}/all/all", metric, base + extra, "lower",
                                     f"intphys/scores/{model}/scores.csv"))
    long_df = pd.concat([pd.DataFrame(rows), pd.DataFrame(attention_rows())], ignore_index=True)
    return long_df[SCORE_COLUMNS]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    results = tmp_path_factory.mktemp("pages") / "results"
    table1 = _motion_table1()
    long_df = _long(table1)
    for src in sorted(set(long_df["source"]) - {""}):  # the figures and tables the numbers link to
        (results / src).parent.mkdir(parents=True, exist_ok=True)
        (results / src).write_bytes(b"placeholder")
    boards = compute_leaderboards(long_df, leaderboards=LEADERBOARDS, n_boot=50)
    agg = results / "aggregate"
    write_leaderboards(boards, agg, agg / "leaderboards.json")
    write_table(long_df, agg / "scores_long.csv")
    write_table(table1, agg / "motion_table1.csv")
    attention = results / "attention" / "table1.csv"
    attention.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"train": "A", "test": "B", "features": f, "L": 1, "group": g, "median": m, "sd": 1.0,
                   "n_pairs": 6, "ceiling": 97.5}
                  for f, base in (("raw", 85.0), ("itti", 88.0))
                  for g, m in (("n ma", base + 2), ("n un", base), ("rf/n", 50.0), ("n/shift", 50.5))
                  ]).to_csv(attention, index=False)
    metrics = results / "attention" / "metrics.csv"
    pd.DataFrame([{"model": "raw L=1 tuned", "metric": k, "value": v, "direction": d, "train": "A", "test": "B",
                   "ceiling": c, "chance": ch, "chance_se": 0.0, "of_ceiling": (v - ch) / (c - ch)}
                  for k, v, d, c, ch in (("AUC-Judd", 0.8, "higher", 0.95, 0.65), ("KL", 2.0, "lower", 1.0, 3.0))
                  ]).to_csv(metrics, index=False)
    render_site(agg / "leaderboards.json", results / "report", results_root=results, attention_table=attention,
                attention_metrics=metrics,
                motion_held_out=held_out_section(agg / "motion_table1.csv", None, {}), scores=agg / "scores_long.csv")
    return results / "report", {b.name: b for b in boards}


class _Page(HTMLParser):
    """Links, ids and the rows (first cell text, all cell texts) of the table with id table1-matrix."""

    def __init__(self):
        super().__init__()
        self.links, self.ids, self.rows = [], set(), []
        self._in_matrix, self._cell, self._row = False, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(a[key])
        if tag == "table" and a.get("id") == "table1-matrix":
            self._in_matrix = True
        elif self._in_matrix and tag == "tr":
            self._row = []
        elif self._in_matrix and tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_matrix = False
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


def test_each_track_page_opens_with_the_papers_table_in_a_browser(site, tmp_path):
    """Opened in Chromium: the paper's table comes before the leaderboard, with a row per model of the run's
    tables (the user's my_flow and my_physics included), people's row first, and the cells of the tables."""
    exe = _chromium()
    report, _ = site
    paper = ["paper: horn_schunck", "paper: lucas_kanade", "paper: simoncelli_heeger", "paper: tlapale_v1mt"]
    want = {"motion": ["people", *paper, "horn_schunck", "my_flow"],
            "attention": ["people (inter-observer ceiling)", "raw L=1", "itti L=1"],
            "intphys": ["people", "tracking", "my_physics"]}
    for track, models in want.items():
        dom = _run_chromium(exe, tmp_path, "--dump-dom", (report / f"{track}.html").resolve().as_uri()).stdout
        assert dom.index('id="table1-matrix"') < dom.index('id="leaderboard"'), track  # the page opens with it
        rows = _parse(dom).rows
        assert [r[0] for r in rows[1:]] == models, (track, rows)
        cells = {r[0]: r[1:] for r in rows[1:]}
        if track == "motion":
            assert rows[0][1:] == ["Barberpole", "Translating diamonds", "Translating dashed bars", "Grating size"]
            assert cells["my_flow"] == ["pass 0", "pass 0", "FAIL 12", "pass 0"]
            assert cells["people"] == ["pass 0"] * 4  # the reference observer's rows, not an invented row
            # the source paper's own verdicts (Tlapale et al. 2010, RR-7317, Table 1) beside the run's
            assert cells["paper: tlapale_v1mt"] == ["pass", "pass", "pass", "FAIL"]
            assert cells["paper: simoncelli_heeger"] == ["pass", "FAIL", "FAIL", "FAIL"]
            assert 'title="0 deg: fail (error 12); 15 deg: fail (error 12)"' in dom
        elif track == "attention":
            assert rows[0][1:] == ["n ma", "n/shift", "n un", "rf/n"]  # the chance twin beside n ma
            assert cells["itti L=1"] == ["90.0", "50.5", "88.0", "50.0"]
            assert cells["people (inter-observer ceiling)"] == ["97.5"]
        else:
            assert rows[0][1:] == ["O1 visible", "O1 occluded", "O2 visible", "O2 occluded", "all blocks visible",
                                   "all blocks occluded", "every movie"]
            assert cells["my_physics"][:2] == ["0.3 / 0.3", "0.5 / 0.5"]
            people = cells["people"]
            assert len(people) == 1 and "figure only" in people[0] and not re.search(r"\d / \d", people[0])


def test_people_without_rows_come_from_the_literature_with_sources():
    """A run without the reference observer: people's row states the criteria's human findings and sources."""
    t = motion_table(_motion_table1().query("model != 'people'"), bounds={"diamonds": "A >= 10 deg"})
    paper = ["paper: horn_schunck", "paper: lucas_kanade", "paper: simoncelli_heeger", "paper: tlapale_v1mt"]
    assert [r["model"] for r in t["rows"]] == ["people (literature)", *paper, "horn_schunck", "my_flow"]
    people = t["rows"][0]
    assert all(c["passed"] is None and c["text"] == "pass by definition" for c in people["cells"])
    assert "Masson & Stone 2002" in people["cells"][1]["title"] and "A >= 10 deg" in people["cells"][1]["title"]
    assert "Tlapale" in people["note"]


def test_every_local_link_of_every_page_resolves(site):
    """Each href and src of every page names a file of the run (and an anchor of the page it names)."""
    report, _ = site
    pages = sorted(report.glob("*.html"))
    assert {p.stem for p in pages} == {"index", "overall", "motion", "attention", "intphys"}
    ids = {p.resolve(): _parse(p.read_text()).ids for p in pages}
    checked = 0
    for page in pages:
        for link in _parse(page.read_text()).links:
            url = urlparse(link)
            if url.scheme or url.netloc:
                continue  # not local
            target = (page.parent / unquote(url.path)).resolve() if url.path else page.resolve()
            assert target.is_file(), (page.name, link)
            if url.fragment and target.suffix == ".html":
                assert url.fragment in ids[target], (page.name, link)
            checked += 1
    assert checked > 100


def test_attention_front_one_holds_fewer_entries_than_the_leaderboard(site):
    report, boards = site
    table = boards["attention"].table
    assert (table["front"] == 1).sum() < len(table)
    page = (report / "attention.html").read_text()
    body = page.split('id="leaderboard">', 1)[1].split("</table>", 1)[0]
    assert body.count('class="front1"') == (table["front"] == 1).sum() < body.count("<tr") - 1


def _table_rows(html: str, table_id: str) -> list[list[str]]:
    """The cell texts of each row of the table with id ``table_id`` (header row first)."""
    body = html.split(f'id="{table_id}">', 1)[1].split("</table>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_attention_page_shows_the_shift_control_and_chance_beside_each_metric(site):
    """Table 1 has n/shift beside n ma, explained as chance by construction; the metrics table under it has
    the file's chance, ceiling and of_ceiling columns, and AUC-Judd's chance level is explained."""
    report, _ = site
    page = (report / "attention.html").read_text()
    head = _table_rows(page, "table1-matrix")[0]
    assert head[1:3] == ["n ma", "n/shift"]
    note = re.sub(r"\s+", " ", page.split('id="shift-control">', 1)[1].split("</p>", 1)[0])
    assert "shifted in time" in note and "chance (50) by construction" in note
    rows = _table_rows(page, "attention-metrics-table")
    assert rows[0] == ["model", "metric", "value", "chance", "ceiling", "of ceiling"]
    cells = {r[1].split(" (")[0]: r for r in rows[1:]}
    assert cells["AUC-Judd"][2:] == ["0.8", "0.65", "0.95", "0.5"]  # (0.8 - 0.65) / (0.95 - 0.65)
    assert cells["KL"][2:] == ["2", "3", "1", "0.5"]  # lower is better: (2 - 3) / (1 - 3)
    text = re.sub(r"\s+", " ", page)
    assert "0.5 + 1/(2(n+1))" in text and "n fixated cells" in text
