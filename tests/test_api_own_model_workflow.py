"""Acceptance: following only the README, a new user's flow model is scored on the first try.

The test reads the README's "Your own model" section: the model's signature, the
user's config file and the command. It writes a real flow model with an ordinary
keyword parameter (windowed Lucas & Kanade 1981 least squares, window radius
``radius``), lays the README's config over the repository's default
``config/config.yaml`` (with its ``tlapale_sweep`` leaderboard), cut down to the
harness's tiny motion display and stimulus set, and runs the README's command.
"""

from __future__ import annotations

import re
import shlex

import pandas as pd
import pytest
import yaml

from psybench.aggregate.scope import applicable_leaderboards

README = '''
import numpy as np
from scipy.ndimage import uniform_filter


def estimate(frame0, frame1, radius=3):
    """Lucas & Kanade (1981) flow: least squares of the brightness constancy over a (2r+1)^2 window."""
    f0, f1 = np.asarray(frame0, np.float64), np.asarray(frame1, np.float64)
    gy, gx = np.gradient(0.5 * (f0 + f1))
    gt = f1 - f0
    size = 2 * int(radius) + 1
    a, b, c = (uniform_filter(g, size) for g in (gx * gx, gx * gy, gy * gy))
    p, q = uniform_filter(gx * gt, size), uniform_filter(gy * gt, size)
    det = a * c - b * b
    ok = det > 1e-9
    u = np.where(ok, (-c * p + b * q) / np.where(ok, det, 1.0), 0.0)
    v = np.where(ok, (b * p - a * q) / np.where(ok, det, 1.0), 0.0)
    return np.stack([u, v], axis=-1).astype(np.float32)
'''


def _readme_section(harness) -> str:
    text = (harness.root / "README.md").read_text()
    return text[text.index("## Your own model"):text.index("Every track takes this entry shape")]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


@pytest.mark.workflow
def test_readme_user_flow_model_is_scored_first_try(harness, tmp_path):
    section = _readme_section(harness)
    signature = re.search(r"^def (\w+)\((.*?)\):", _blocks(section, "python")[0], flags=re.M)
    assert signature.groups() == ("estimate", "frame0, frame1, radius=3")  # ordinary keyword parameter
    user_cfg = yaml.safe_load(_blocks(section, "yaml")[0])
    (command,) = [line for line in _blocks(section, "bash")[0].splitlines() if "snakemake" in line]
    args = shlex.split(command)[1:]  # what follows .venv/bin/snakemake
    assert args[0] == "all"  # the target first: --configfile would swallow it

    # the repository's default config stays config/config.yaml; the user's file is laid over it,
    # cut down to the tests' tiny display and stimulus set (same keys as harness.tiny_config)
    work = harness.copy(tmp_path / "wf", modules={"mypackage/__init__.py": "", "mypackage/flow.py": README})
    (work / "config" / "config.yaml").write_text((harness.root / "config" / "config.yaml").read_text())
    tiny = harness.tiny_config(models=user_cfg["motion"]["models"])
    cut_down = {**tiny, "tracks": user_cfg["tracks"]}
    config_name = args[args.index("--configfile") + 1]
    (work / config_name).write_text(yaml.safe_dump(cut_down, sort_keys=False))

    proc = harness.run(work, *args)  # raises with Snakemake's output on any failure
    out = harness.output(proc)
    assert "aggregate.leaderboards[2] ('tlapale_sweep') left out: its model 'tlapale_v1mt' is not run" in out

    table1 = pd.read_csv(work / "results/aggregate/motion_table1.csv")
    assert set(table1["model"]) == {"horn_schunck", "my_flow"}
    assert table1.loc[table1["model"] == "my_flow", "error"].notna().any()
    long = pd.read_csv(work / "results/aggregate/scores_long.csv")
    assert {"horn_schunck", "my_flow"} <= set(long["model"])
    # the configured radius reached the model: the response store records it
    attrs = (work / "results/motion/responses/my_flow").glob("*.zarr/zarr.json")
    assert any('"radius": 5' in p.read_text() for p in attrs)
    assert "my_flow" in (work / "results/report/motion.html").read_text()  # its row on the motion leaderboard page


def test_leaderboards_of_absent_tracks_and_models_are_left_out_by_name():
    lbs = [{"name": "overall", "track": None}, {"name": "motion", "track": "motion"},
           {"name": "tlapale_sweep", "track": "motion", "model": "tlapale_v1mt"},
           {"name": "attention", "track": "attention"}, {"name": "mine", "track": None, "model": "my_flow"}]
    kept, skipped = applicable_leaderboards(lbs, ["motion"], {"motion": ["horn_schunck", "my_flow"]})
    assert [lb["name"] for lb in kept] == ["overall", "motion", "mine"]
    assert skipped == [
        "aggregate.leaderboards[2] ('tlapale_sweep') left out: its model 'tlapale_v1mt' is not run "
        "(models: ['horn_schunck', 'my_flow'])",
        "aggregate.leaderboards[3] ('attention') left out: its track 'attention' is not run (tracks: ['motion'])",
    ]
