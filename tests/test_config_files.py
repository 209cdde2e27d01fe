"""Config files are read strictly: a key given twice or an alias bomb is refused, naming the key.

Snakemake's own YAML loader keeps the later of two equal keys and expands aliases while
it merges config files (its config digest alone walked a 0.4 KB bomb for a minute);
the Snakefile reads each file with :func:`psybench.config.read_config_file` before its
``configfile:`` line. The dry runs check that path end to end; the leaderboard and
name checks run through the same :func:`psybench.config.prepare_workflow` as the
cases of tests/test_config_validation.py.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import yaml

from psybench._yaml import MAX_ALIASES, YAMLContentError, strict_load
from psybench.config import ConfigError, load_config, read_config_file

ROOT = Path(__file__).resolve().parent.parent


def _bomb(levels: int = 9, shape: str = "list", top: str = "motion") -> str:
    """The "billion laughs" document: ``levels`` anchors, each nine aliases of the one before (9**levels leaves)."""
    names = "abcdefghijklmnop"[: levels + 1]
    if shape == "list":
        lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
        lines += [f"{n}: &{n} [{', '.join(['*' + p] * 9)}]" for p, n in zip(names, names[1:])]
    else:
        lines = ["a: &a {p: 1, q: 2, r: 3, s: 4, t: 5, u: 6, v: 7, w: 8, x: 9}"]
        lines += [f"{n}: &{n} {{{', '.join(f'k{j}: *{p}' for j in range(9))}}}" for p, n in zip(names, names[1:])]
    return f"{top}:\n  params:\n" + "".join(f"    {line}\n" for line in lines)


@pytest.mark.parametrize(
    "text,key,lines",
    [
        ("display: {width_px: 64}\ntracks: [motion]\ndisplay: {width_px: 128}\n", "display", "lines 1 and 3"),
        ("motion:\n  readout:\n    lambda_ms: 50\n    lambda_ms: 80\n", "motion.readout.lambda_ms", "lines 3 and 4"),
        ("motion:\n  models:\n    - {name: hs, algorithm: dis, name: lk}\n", "motion.models[0].name", "lines 3 and 3"),
    ],
    ids=["top-level", "nested", "in-a-list"],
)
def test_a_key_given_twice_is_refused_at_any_depth(text, key, lines):
    assert yaml.safe_load(text)  # YAML itself keeps the later value, silently
    with pytest.raises(YAMLContentError, match=re.escape(f"{key}: given twice ({lines})")) as err:
        strict_load(text)
    assert err.value.key == key


@pytest.mark.parametrize("shape", ["list", "dict"])
def test_an_alias_bomb_is_refused_before_it_is_expanded(shape):
    text = _bomb(shape=shape)
    assert len(text) < 1000  # 9**9 = 387 million leaves
    start = time.perf_counter()
    with pytest.raises(YAMLContentError, match=r"^motion\.params\.[a-i]: .*YAML aliases") as err:
        strict_load(text)
    assert time.perf_counter() - start < 1.0, "the check must not walk the expanded document"
    assert err.value.key.startswith("motion.params.")


def test_alias_uses_are_counted():
    """A wide document, not a deep one: each alias repeats a small list, but there are too many of them."""
    n = MAX_ALIASES + 1
    text = "base: &b [1, 2]\nuses:\n" + "".join(f"  k{i}: *b\n" for i in range(n))
    with pytest.raises(YAMLContentError, match=rf"uses\.k{n - 1}: the file uses more than {MAX_ALIASES} YAML aliases"):
        strict_load(text)
    fine = "base: &b [1, 2]\nuses:\n" + "".join(f"  k{i}: *b\n" for i in range(MAX_ALIASES))
    assert strict_load(fine) == yaml.safe_load(fine)


def test_merge_keys_and_the_shipped_alias_still_load():
    """The controls: a merge key may override what it merges, and config/config.yaml (one alias) loads as before."""
    text = "base: &b {a: 1, b: 2}\nd: {<<: *b, a: 3}\n"
    assert strict_load(text) == yaml.safe_load(text) == {"base": {"a": 1, "b": 2}, "d": {"a": 3, "b": 2}}
    shipped = ROOT / "config" / "config.yaml"
    assert read_config_file(shipped) == yaml.safe_load(shipped.read_text())


def test_config_file_errors_name_the_key_and_the_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("tracks: [motion]\ntracks: [attention]\n")
    with pytest.raises(ConfigError, match=re.escape(f"config key tracks: given twice (lines 1 and 2); YAML would "
                                                    f"keep the later one silently: remove one (config file {path})")):
        load_config(path)
    with pytest.raises(ConfigError, match=re.escape(f"config file {tmp_path} is a folder, expected a file")):
        read_config_file(tmp_path)


def test_criteria_known_to_the_leaderboards_are_those_each_track_writes():
    """The oracle of the criterion check: each track's own list of the metrics its score rows hold."""
    from psybench.aggregate.labels import track_metrics
    from psybench.attention.metrics import METRIC_DIRECTIONS
    from psybench.intphys.metrics import METRICS as INTPHYS_METRICS
    from psybench.motion import METRICS as MOTION_METRICS

    assert track_metrics("motion") == sorted(m.name for m in MOTION_METRICS)
    assert track_metrics("intphys") == sorted(INTPHYS_METRICS)
    assert track_metrics("attention") == sorted(METRIC_DIRECTIONS)


def test_score_reads_a_config_file_as_strictly(tmp_path):
    """``psybench.score(..., config=path)`` reads its file with the same reader as the workflow."""
    from psybench.api import score_config

    path = tmp_path / "mine.yaml"
    path.write_text("motion:\n  readout: {lambda_ms: 50}\n  readout: {lambda_ms: 80}\n")
    with pytest.raises(ConfigError, match=re.escape("config key motion.readout: given twice (lines 2 and 3)")):
        score_config(path)


# ---------------------------------------------------------------------------- dry runs

LONG_NAME = "m" * 300


def _dry_run(harness, work, *args):
    proc = harness.run(work, "-n", harness.table, *args, check=False, timeout=120)
    return proc, harness.output(proc)


@pytest.mark.workflow
@pytest.mark.parametrize(
    "where,text,expected",
    [
        ("config/config.yaml", "display:\n  width_px: 64\n", r"config key display: given twice \(lines \d+ and \d+\)"),
        ("config/config.yaml", _bomb(shape="dict", top="aggregate"),
         r"config key aggregate\.params\.[a-i]: .*YAML aliases"),
        ("mine.yaml", _bomb(shape="list"), r"config key motion\.params\.[a-i]: .*YAML aliases.*mine\.yaml"),
        ("mine.yaml", f"motion:\n  models:\n    - {{name: {LONG_NAME}, algorithm: horn_schunck}}\n",
         r"config key motion\.models\[0\]\.name: value 'm{40}\.\.\. \(300 characters\)' is longer than 64"),
        ("mine.yaml", "tracks: [motion, attention]\nattention:\n  models: [{name: raw, algorithm: raw, L: 1}]\n"
         "  movies:\n    '../../x': {popout: {n_frames: 10}, observers: {p_target: [0.9, 0.1]}}\n",
         r"config key attention\.movies: name '\.\./\.\./x' does not match"),
        ("mine.yaml", "aggregate:\n  leaderboards: [{name: m, track: motion}, {name: m}]\n",
         r"config key aggregate\.leaderboards\[1\]\.name: leaderboard name 'm' is used twice"),
    ],
    ids=["duplicate-key", "alias-bomb-in-config-yaml", "alias-bomb-in-configfile", "model-name-300-characters",
         "movie-name-up-the-tree", "leaderboard-name-twice"],
)
def test_dry_run_refuses_the_config_naming_the_key(harness, tmp_path, where, text, expected):
    """Each fails ``snakemake -n`` before any job; the bomb in config/config.yaml (mappings) used to
    hang Snakemake's own config merge, the one in a --configfile (lists) its config digest."""
    work = harness.copy(tmp_path / "wf")
    args = ()
    if where == "config/config.yaml":
        with open(work / where, "a") as f:
            f.write(text)
    else:
        (work / where).write_text(text)
        args = ("--configfile", where)
    start = time.perf_counter()
    proc, out = _dry_run(harness, work, *args)
    assert proc.returncode != 0, out
    assert re.search(expected, out, flags=re.S), out
    assert "Job stats" not in out and "jobid" not in out  # nothing was planned
    assert time.perf_counter() - start < 60, out
    assert not (work / "results").exists()

