"""People next to every model: each leaderboard page shows the human reference of its track, in a real browser."""

from __future__ import annotations

import pandas as pd
import pytest
from test_report_held_out import HEADING as HELD_OUT_HEADING
from test_report_held_out import MODELS as HELD_OUT_MODELS
from test_report_held_out import _generalisation as held_out_generalisation
from test_report_held_out import _table1 as held_out_table1
from test_report_leaderboard import LEADERBOARDS, _chromium, _run_chromium, _touch_sources, synthetic_long

from psybench.aggregate.leaderboard import compute_leaderboards, write_leaderboards
from psybench.attention.gaze.movie_table import COUNT_COLUMNS
from psybench.io.tables import write_table
from psybench.motion.held_out import held_out_section
from psybench.report.human import HUMAN_REFERENCES, attention_ceilings
from psybench.report.site import render_site

# what each track's page must show, as a person reads it in the browser
HUMAN_TEXT = {
    "motion": ("each criterion encodes what human observers see", "Tlapale", "Masson, Rybarczyk, Castet & Mestre 2000"),
    "intphys": ("71 online observers", "Riochet et al. 2018"),
    "attention": ("inter-observer ceiling", "Shic & Scassellati 2007", "91.5"),
}
SYNTHETIC = ("attention", "intphys")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    results = tmp_path_factory.mktemp("people") / "results"
    long_df = synthetic_long()
    _touch_sources(results, long_df)
    boards = compute_leaderboards(long_df, leaderboards=LEADERBOARDS, n_boot=100)
    write_leaderboards(boards, results / "aggregate", results / "aggregate" / "leaderboards.json")
    table1 = results / "attention" / "table1.csv"
    table1.parent.mkdir(parents=True)
    pd.DataFrame({"train": ["A", "A"], "test": ["B", "B"], "features": ["raw", "raw"], "L": [1, 1],
                  "group": ["n ma", "n un"], "median": [88.0, 87.0],
                  "ceiling": [91.0, 92.0]}).to_csv(table1, index=False)
    counts = results / "attention" / "gaze" / "B.counts.csv"
    counts.parent.mkdir(parents=True)
    pd.DataFrame([["B", "gaze/s01.coord", 134, 0, 0, 99, 0, 0, 0, 35, 99 / 134, 0.25, "", "none", "", "none", "none",
                   ""],
                  ["B", "gaze/s02.arff", 127, 1, 0, 0, 4, 3, 6, 113, 1 / 127, 0.25, "1280x1024", "file", "1280x720",
                   "assumed", "file", ""]],
                 columns=COUNT_COLUMNS).to_csv(counts, index=False)
    (results.parent / "report.html").write_text("<html>workflow report</html>")
    motion_t1 = results / "aggregate" / "motion_table1.csv"
    motion_gen = results / "aggregate" / "motion_generalisation.csv"
    write_table(held_out_table1(), motion_t1)
    write_table(held_out_generalisation(), motion_gen)
    render_site(results / "aggregate" / "leaderboards.json", results / "report", results_root=results,
                synthetic=SYNTHETIC, attention_table=table1, gaze_counts=[counts],
                workflow_report="../../report.html",
                motion_held_out=held_out_section(motion_t1, motion_gen, HELD_OUT_MODELS))
    return results / "report", boards


def test_attention_ceiling_is_the_mean_per_pair():
    t = pd.DataFrame({"train": ["A", "A", "B"], "test": ["B", "B", "B"], "ceiling": [90.0, 92.0, 80.0]})
    assert attention_ceilings(t) == {"A_on_B": 91.0, "B_on_B": 80.0}
    assert attention_ceilings(t.drop(columns="ceiling")) == {}  # older runs: nothing invented


def test_every_page_shows_people_in_a_headless_browser(site, tmp_path):
    """Every report page opened in Chromium: each track's page carries its human reference, the overall page
    and the index carry all of them, and the synthetic tracks say so."""
    exe = _chromium()
    out, boards = site
    pages = {"index": None, **{b.name: b.spec["track"] for b in boards}}
    for name, track in pages.items():
        dom = _run_chromium(exe, tmp_path, "--dump-dom", (out / f"{name}.html").resolve().as_uri()).stdout
        assert 'id="human"' in dom, name
        people = dom.split('id="human"', 1)[1].split("</section>", 1)[0]
        shown = [track] if track else sorted(HUMAN_TEXT)
        for t in shown:
            for text in HUMAN_TEXT[t]:
                assert text in people.replace("&amp;", "&"), (name, t, text)
            assert ("Synthetic data in this run" in people.split(f'id="human-{t}"', 1)[1].split("</div>", 1)[0]) == (
                t in SYNTHETIC), (name, t)
        assert 'href="../../report.html"' in dom, name  # back to the workflow report
        assert (HELD_OUT_HEADING in dom) == (track == "motion"), name  # the bio models' held-out verdicts
        assert (out / "../../report.html").resolve().is_file()


def test_attention_page_shows_the_gaze_counts_and_marks_a_recording_over_its_lost_share(site):
    """The counts the gaze stage wrote, one row per file; the .coord file lost 73.9 % (> 25 %) and is marked."""
    report, boards = site
    page = next((report / f"{b.name}.html").read_text() for b in boards
                if b.spec["track"] == "attention" and b.spec["model"] is None)
    table = page.split('id="gaze-counts"', 1)[1].split("</table>", 1)[0]
    rows = [r for r in table.split("<tr")[2:]]
    assert len(rows) == 2
    cells = [[c.split("<", 1)[0] for c in r.split("<td>")[1:]] for r in rows]
    assert cells[0][:12] == ["B", "gaze/s01.coord", "134", "35", "0", "0", "99", "0", "0", "0", "73.9 (over 25 %: "
                             "check the screen geometry)", "none (positions are movie pixels)"]
    # gaze on the letterbox bars is counted (off the movie's picture) and the file's own screen is named
    assert cells[1][:12] == ["B", "gaze/s02.arff", "127", "113", "1", "0", "0", "4", "3", "6", "0.8",
                             "screen 1280x1024 px (file), movie 1280x720 px (assumed)"]
    assert rows[0].startswith(' class="warn"') and not rows[1].startswith(' class="warn"')
    # a page of another track has no gaze counts
    motion = next((report / f"{b.name}.html").read_text() for b in boards if b.spec["track"] == "motion")
    assert 'id="gaze-counts"' not in motion


def test_references_cite_author_and_year():
    for ref in HUMAN_REFERENCES.values():
        assert any(str(y) in ref.citation for y in range(1990, 2030)) and "/work" not in ref.citation
