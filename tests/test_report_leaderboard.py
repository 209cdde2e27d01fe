"""The leaderboards (computed by the aggregate stage) and the HTML report rendered from them:
content, links, determinism, and a real headless browser."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest

from psybench.aggregate.leaderboard import compute_leaderboards, write_leaderboards
from psybench.aggregate.ranks import ranks_with_ties
from psybench.aggregate.table import SCORE_COLUMNS, leaderboard
from psybench.report.site import render_site

MOTION_EXPS = ["barberpole", "diamonds", "dashed_bars"]
# Hand-made errors: HS and FB are mutually non-dominated, LK is dominated by HS, BAD by all.
MOTION = {
    "HS": [0.1, 0.5, 0.3],
    "FB": [0.4, 0.2, 0.3],
    "LK": [0.2, 0.6, 0.35],
    "BAD": [0.9, 0.9, np.nan],  # missing dashed_bars: stays missing
}
LEADERBOARDS = [
    {"name": "overall", "track": None},
    {"name": "motion", "track": "motion", "epsilon": {}},
    {"name": "intphys", "track": "intphys"},
    {"name": "attention", "track": "attention"},
]


def build_report(long_df, out_dir, *, leaderboards=None, results_root=None, samples=None, n_boot=1000, workers=1):
    """The workflow's two steps: aggregate_leaderboards (compute, write tables + page data), then the report."""
    results_root = Path(results_root) if results_root is not None else Path(out_dir).parent
    boards = compute_leaderboards(long_df, leaderboards=leaderboards, samples=samples, n_boot=n_boot)
    table_dir = results_root / "aggregate"
    write_leaderboards(boards, table_dir, table_dir / "leaderboards.json")
    render_site(table_dir / "leaderboards.json", out_dir, results_root=results_root, workers=workers)
    return {b.name: b.table for b in boards}


def synthetic_long() -> pd.DataFrame:
    rows = []
    for model, errs in MOTION.items():
        for exp, v in zip(MOTION_EXPS, errs):
            rows.append((model, "", "motion", exp, "error", v, "lower", np.nan, np.nan,
                         f"figures/motion/{model}_direction_error.png"))
    for model, (lr, la) in {"nextframe": (0.3, 0.35), "constant": (0.5, 0.5)}.items():
        rows.append((model, "", "intphys", "all/all/all/all", "L_R", lr, "lower", lr - 0.05, lr + 0.05,
                     f"intphys/{model}/scores.csv"))
        rows.append((model, "", "intphys", "all/all/all/all", "L_A", la, "lower", np.nan, np.nan,
                     f"intphys/{model}/scores.csv"))
    for model, ph, nss, med in [("itti", "a1", 1.5, 80.0), ("itti", "b2", 1.2, 85.0), ("raw", "", 0.5, 60.0)]:
        rows.append((model, ph, "attention", "all", "NSS", nss, "higher", np.nan, np.nan, ""))
        rows.append((model, ph, "attention", "A_on_B", "median_rp_n_ma", med, "higher", np.nan, np.nan,
                     "figures/attention/curves.png"))
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def synthetic_samples() -> pd.DataFrame:
    """Per-stimulus diamonds errors: HS and FB indistinguishable, LK and BAD clearly worse."""
    rng = np.random.default_rng(3)
    means = {"HS": 0.5, "FB": 0.5, "LK": 2.0, "BAD": 4.0}
    rows = [(m, "motion", "diamonds", "error", i, mu + rng.normal(0, 0.3)) for m, mu in means.items()
            for i in range(30)]
    return pd.DataFrame(rows, columns=["model", "track", "experiment", "metric", "item", "value"])


def _touch_sources(results: Path, long_df: pd.DataFrame) -> None:
    for s in sorted(set(long_df["source"]) - {""}):
        p = results / s
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"\x89PNG placeholder")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    results = tmp_path_factory.mktemp("run") / "results"
    long_df = synthetic_long()
    _touch_sources(results, long_df)
    tables = build_report(long_df, results / "report", leaderboards=LEADERBOARDS, results_root=results,
                          samples=synthetic_samples(), n_boot=300)
    return results, long_df, tables


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.imgs, self.cells, self._td, self._in_lb, self._a = [], [], [], None, False, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "leaderboard":
            self._in_lb = True
        if tag == "a":
            self.hrefs.append(a["href"])
            if self._td is not None:
                self._td["link"] = True
        if tag == "img":
            self.imgs.append(a["src"])
        if tag == "td" and self._in_lb:
            self._td = {"text": "", "link": False, "cls": a.get("class", "")}

    def handle_endtag(self, tag):
        if tag == "td" and self._td is not None:
            self.cells.append(self._td)
            self._td = None
        if tag == "table":
            self._in_lb = False

    def handle_data(self, data):
        if self._td is not None:
            self._td["text"] += data


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_tables_match_leaderboard_and_are_written(report):
    results, long_df, tables = report
    assert sorted(tables) == ["attention", "intphys", "motion", "overall"]
    motion = tables["motion"].set_index("entry")
    ref = leaderboard(long_df, track="motion").set_index("entry")
    assert motion["front"].to_dict() == ref["front"].to_dict()
    assert motion["front"].to_dict() == {"HS": 1, "FB": 1, "LK": 2, "BAD": 3}
    assert motion.loc["LK", "dominated_by"] == "HS"
    assert np.isnan(motion.loc["BAD", "motion/dashed_bars/error"])  # missing stays missing
    on_disk = pd.read_csv(results / "aggregate" / "leaderboard_motion.csv").set_index("entry")
    assert on_disk["front"].to_dict() == motion["front"].to_dict()
    assert (results / "aggregate" / "leaderboard_motion.parquet").is_file()
    # intra-model parameter sets show up as model@params_hash in the attention board
    assert set(tables["attention"]["entry"]) == {"itti@a1", "itti@b2", "raw"}


def test_tied_ranks_from_samples(report):
    _, _, tables = report
    col = "tied_rank:motion/diamonds/error"
    got = tables["motion"].set_index("entry")[col].to_dict()
    s = synthetic_samples()
    ref = ranks_with_ties({m: g.sort_values("item")["value"].to_numpy() for m, g in s.groupby("model")},
                          n_boot=300, seed=0)
    assert got == dict(zip(ref["model"], ref["rank"]))
    assert got["HS"] == got["FB"] == 1 and got["LK"] == 2 and got["BAD"] == 3
    assert col not in tables["intphys"].columns  # no samples there: no tied ranks


def test_every_number_links_to_an_existing_file(report):
    results, long_df, tables = report
    out = results / "report"
    for name, table in tables.items():
        page = out / f"{name}.html"
        p = _parse(page)
        numeric = [c for c in p.cells if c["cls"] not in ("entry", "dom") and c["text"].strip() not in ("", "yes", "–")]
        # the count column n (criteria an average rank is over) is the only number without a link
        unlinked = [c["text"] for c in numeric if not c["link"]]
        assert len(unlinked) == len(table) and all(t.strip().isdigit() for t in unlinked), unlinked
        m = len(table.attrs["criteria"])
        n_missing = int(table[table.attrs["criteria"]].isna().to_numpy().sum())
        n_ties = int(table.filter(like="tied_rank:").notna().to_numpy().sum())
        n_track = len(table) if "track" in table.columns else 0  # overall: each track links to its page
        # front + average rank + every present criterion value + tied ranks; missing values link too ("–")
        assert sum(c["link"] for c in numeric) == len(table) * (2 + m) - n_missing + n_ties + n_track
        for href in p.hrefs + p.imgs:
            if href.startswith("#"):
                continue
            target = (out / unquote(href.split("#")[0])).resolve()
            assert target.is_file() and target.stat().st_size > 0, (name, href)
        assert len(p.imgs) == len(table) + 1 + ("projections.png" in " ".join(p.imgs)) + (
            "ties.png" in " ".join(p.imgs))
    idx = _parse(out / "index.html")
    assert {h for h in idx.hrefs if h.endswith(".html")} == {f"{n}.html" for n in tables}


def test_deterministic_rebuild(report, tmp_path):
    """The same files in, the same site out, its figures drawn in one process or (here) in two."""
    results, long_df, _ = report
    other = tmp_path / "results"
    shutil.copytree(results, other)
    build_report(long_df, other / "report", leaderboards=LEADERBOARDS, results_root=other,
                 samples=synthetic_samples(), n_boot=300, workers=2)
    a = sorted(p.relative_to(results) for p in results.rglob("*") if p.is_file())
    b = sorted(p.relative_to(other) for p in other.rglob("*") if p.is_file())
    assert a == b
    for rel in a:
        assert (results / rel).read_bytes() == (other / rel).read_bytes(), rel


def test_bad_specs_and_folders(tmp_path):
    long_df = synthetic_long()
    with pytest.raises(ValueError, match=r"leaderboards\[0\] has unknown key\(s\) \['tracks'\]"):
        build_report(long_df, tmp_path / "r", leaderboards=[{"name": "x", "tracks": "motion"}])
    with pytest.raises(ValueError, match=r"leaderboard 'x': track 'physics' has no scores"):
        build_report(long_df, tmp_path / "r", leaderboards=[{"name": "x", "track": "physics"}],
                     results_root=tmp_path)
    with pytest.raises(ValueError, match="used more than once"):
        build_report(long_df, tmp_path / "r", leaderboards=[{"name": "x"}, {"name": "x"}])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a psybench report folder"):
        build_report(long_df, tmp_path / "mine", leaderboards=[{"name": "x", "track": "intphys"}],
                     results_root=tmp_path)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "r").exists()  # nothing half-written


# ---------------------------------------------------------------------------- real headless browser


def _chromium() -> str | None:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but chromium is missing: run .ci/setup_chromium.sh before the tests")
        pytest.skip("chromium is not installed (Debian package 'chromium'; install with .ci/setup_chromium.sh)")
    return found


def _run_chromium(exe: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", "--allow-file-access-from-files", f"--user-data-dir={tmp / 'profile'}",
           "--virtual-time-budget=5000", *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("http_proxy", "https_proxy"))}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_report_renders_in_headless_chromium(report, tmp_path):
    exe = _chromium()
    results, _, tables = report
    page = (results / "report" / "motion.html").resolve()
    url = page.as_uri()
    dom = _run_chromium(exe, tmp_path, "--dump-dom", url).stdout
    # the rendered DOM holds the leaderboard table with one row per entry, and the figures
    assert '<table class="lb" id="leaderboard">' in dom
    body = dom.split('id="leaderboard">', 1)[1].split("</table>", 1)[0]
    assert body.count("<tr") == 1 + len(tables["motion"])  # header + entries
    for entry in tables["motion"]["entry"]:
        assert f">{entry}</a>" in body
    imgs = [s.split('"', 1)[0] for s in dom.split('<img src="')[1:]]
    assert "figures/motion/projections.png" in imgs and "figures/motion/parallel.png" in imgs
    for src in imgs:
        f = results / "report" / unquote(src)
        assert f.is_file() and f.stat().st_size > 0, src

    shot = tmp_path / "shot.png"
    _run_chromium(exe, tmp_path, "--window-size=1200,1500", f"--screenshot={shot}", url)
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    assert img.shape[:2] == (1500, 1200)
    rgb = np.round(img * 255).astype(int)
    non_white = (rgb < 245).any(axis=2).mean()
    assert non_white > 0.02, non_white  # not blank
    # the table rendered: front-1 rows have their green background (#eef7ee) ...
    assert (np.abs(rgb - [0xEE, 0xF7, 0xEE]).sum(axis=2) <= 3).sum() > 500
    # ... and the projection figure's front-1 points (matplotlib tab:blue) are painted
    assert (np.abs(rgb - [31, 119, 180]).sum(axis=2) <= 12).sum() > 200


def test_page_data_reads_back_what_was_computed(tmp_path):
    from psybench.aggregate.leaderboard import read_leaderboards

    boards = compute_leaderboards(synthetic_long(), leaderboards=LEADERBOARDS, samples=synthetic_samples(), n_boot=50)
    write_leaderboards(boards, tmp_path, tmp_path / "leaderboards.json")
    back = {b.name: b for b in read_leaderboards(tmp_path / "leaderboards.json")}
    assert list(back) == [b.name for b in boards]
    for b in boards:
        r = back[b.name]
        assert r.criteria == b.criteria and r.directions == b.directions and r.projections == b.projections
        pd.testing.assert_frame_equal(r.table, b.table, check_dtype=False)
        pd.testing.assert_frame_equal(r.cells, b.cells, check_dtype=False)
        assert sorted(r.ties) == sorted(b.ties)
        for c in b.ties:
            pd.testing.assert_frame_equal(r.ties[c], b.ties[c], check_dtype=False)
