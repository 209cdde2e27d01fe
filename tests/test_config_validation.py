"""Every malformed config fails before any job, with a message naming the key.

Library level: :func:`psybench.config.prepare_workflow` is what rules/common.smk calls
while the Snakefile is parsed, so an error raised there stops the run before any
job is planned; one ``snakemake -n`` run shows it through the workflow.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import pytest
import yaml

from psybench.config import ConfigError, prepare_workflow
from psybench.config_checks import array_estimates, check_memory
from psybench.motion.display import Display

ROOT = Path(__file__).resolve().parent.parent

ATTENTION = {
    "movies": {"A": {"popout": {"n_frames": 10}, "observers": {"p_target": [0.9, 0.1]}}},
    "models": [{"name": "raw", "algorithm": "raw", "L": [1]}],
    "pairs": [["A", "A"]],
}
# a recorded movie with its gaze file; both exist in the project (see ``project``)
RECORDED = {"file": "data/clip.mp4", "gaze": ["data/s01.csv"], "frames_per_s": 25}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder (the working directory) holding the literature file, a movie and a gaze file."""
    proj = tmp_path / "proj"
    (proj / "config").mkdir(parents=True)
    shutil.copy(ROOT / "config" / "literature.yaml", proj / "config" / "literature.yaml")
    (proj / "data").mkdir()
    (proj / "data" / "clip.mp4").write_bytes(b"\x00")
    (proj / "data" / "s01.csv").write_text("t,x,y\n0,1,1\n")
    (tmp_path / "outside.yaml").write_text("parameters: {}\n")
    (proj / "config" / "latin1.yaml").write_bytes("citation: Barth\xe9lemy\n".encode("latin-1"))
    monkeypatch.chdir(proj)
    return proj


def _tiny(harness, *tracks):
    cfg = harness.tiny_config()
    cfg["tracks"] = ["motion", *tracks]
    if "attention" in tracks:
        cfg["attention"] = copy.deepcopy(ATTENTION)
    return cfg


def _set(path, value):
    def mutate(cfg):
        node = cfg
        for key in path[:-1]:
            node = node[key] if isinstance(node, list) else node.setdefault(key, {})
        if isinstance(node, list) and path[-1] == len(node):
            node.append(value)
        else:
            node[path[-1]] = value
    return mutate


def _params(**params):
    return _set(["motion", "models", 0, "params"], params)


NAN, INF = float("nan"), float("inf")

# (id, extra tracks, mutation, the key the message must name)
CASES = [
    ("param-nan", (), _params(alpha=NAN), "motion.models[0].params.alpha"),
    ("param-negative", (), _params(alpha=-1.0), "motion.models[0].params.alpha"),
    ("param-list", (), _params(alpha=[1.0, 2.0]), "motion.models[0].params.alpha"),
    ("param-float-for-int", (), _params(levels=2.5), "motion.models[0].params.levels"),
    ("1e9-iterations", (), _params(n_iter=10**9), "motion.models[0].params.n_iter"),
    ("lambda-nan", (), _set(["motion", "readout", "lambda_ms"], NAN), "motion.readout.lambda_ms"),
    ("lambda-inf", (), _set(["motion", "readout", "lambda_ms"], INF), "motion.readout.lambda_ms"),
    ("criterion-nan", (), _set(["motion", "criteria", "diamonds", "r2_min"], NAN), "motion.criteria.diamonds.r2_min"),
    ("alpha-nan", (), _set(["aggregate", "alpha"], NAN), "aggregate.alpha"),
    ("width-1e6", (), _set(["display", "width_px"], 10**6), "display.width_px"),
    ("n-tiles-1e9", (), _set(["motion", "dashed_bars", "n_tiles"], [1, 10**9]), "motion.dashed_bars.n_tiles[1]"),
    ("aggregate-n-boot-1e9", (), _set(["aggregate", "n_boot"], 10**9), "aggregate.n_boot"),
    ("intphys-n-boot-1e9", ("intphys",), _set(["intphys", "n_boot"], 10**9), "intphys.n_boot"),
    ("intphys-1e9-frames", ("intphys",), _set(["intphys", "generator", "n_frames"], 10**9),
     "intphys.generator.n_frames"),
    ("fps-1e9", (), _set(["display", "frames_per_s"], 1e9), "display.frames_per_s"),
    ("fps-inf", (), _set(["display", "frames_per_s"], INF), "display.frames_per_s"),
    ("two-diameters", (), _set(["motion", "gratings", "diameters_deg"], [2, 8]), "motion.gratings.diameters_deg"),
    ("no-long-aperture", (), _set(["motion", "barberpole", "aspect_ratios"], [1, 1]),
     "motion.barberpole.aspect_ratios"),
    ("empty-tracks", (), _set(["tracks"], []), "tracks"),
    ("intphys-train-is-eval", ("intphys",), _set(["intphys", "eval_split"], "train"), "intphys.eval_split"),
    ("intphys-missing-answer", ("intphys",), _set(["intphys", "external_answers"], {"sub": "answer.txt"}),
     "intphys.external_answers.sub"),
    ("intphys-unknown-algorithm", ("intphys",), _set(["intphys", "models"], [{"name": "x", "algorithm": "psychic"}]),
     "intphys.models[0]"),
    ("intphys-unknown-kind", ("intphys",),
     _set(["intphys", "models"], [{"name": "x", "callable": "mine:f", "kind": "telepathy"}]), "intphys.models[0].kind"),
    ("missing-movie", ("attention",), _set(["attention", "movies", "C"], {**RECORDED, "file": "data/gone.mp4"}),
     "attention.movies.C.file"),
    ("missing-gaze", ("attention",), _set(["attention", "movies", "C"], {**RECORDED, "gaze": ["data/gone.csv"]}),
     "attention.movies.C.gaze[0]"),
    ("unknown-popout-keyword", ("attention",), _set(["attention", "movies", "A", "popout", "n_boxes"], 3),
     "attention.movies.A.popout.n_boxes"),
    ("popout-frames-text", ("attention",), _set(["attention", "movies", "A", "popout", "n_frames"], "ten"),
     "attention.movies.A.popout.n_frames"),
    ("literature-outside", (), _set(["literature"], "../outside.yaml"), "literature"),
    ("literature-missing", (), _set(["literature"], "config/nope.yaml"), "literature"),
    ("literature-not-utf8", (), _set(["literature"], "config/latin1.yaml"), "literature"),
    ("callable-os-system", (), _set(["motion", "models", 1], {"name": "x", "callable": "os:system"}),
     "motion.models[1].callable"),
    ("callable-builtins", ("attention",),
     _set(["attention", "models", 0], {"name": "x", "callable": "builtins:eval", "L": 1}),
     "attention.models[0].callable"),
    ("attention-no-models", ("attention",), _set(["attention", "models"], []), "attention.models"),
    ("leaderboard-absent-model", (), _set(["aggregate", "leaderboards"], [{"name": "s", "model": "tlapale_v1mt"}]),
     "aggregate.leaderboards[0].model"),
    ("leaderboard-absent-track", (), _set(["aggregate", "leaderboards"], [{"name": "i", "track": "intphys"}]),
     "aggregate.leaderboards[0].track"),
    ("leaderboard-absent-criterion", (),
     _set(["aggregate", "leaderboards"], [{"name": "a", "criteria": ["attention/A/rs"]}]),
     "aggregate.leaderboards[0].criteria[0]"),
    # a deep model's keys (psybench.deep): device, batch size, resources, weights
    ("deep-device-malformed", (), _set(["motion", "models", 0, "device"], "gpu0"), "motion.models[0].device"),
    ("deep-batch-size-zero", (), _set(["motion", "models", 0, "batch_size"], 0), "motion.models[0].batch_size"),
    ("deep-gpu-negative", (), _set(["motion", "models", 0, "resources"], {"gpu": -1}),
     "motion.models[0].resources.gpu"),
    ("deep-gpu-fraction", ("attention",), _set(["attention", "models", 0, "resources"], {"gpu": 0.5}),
     "attention.models[0].resources.gpu"),
    ("deep-threads-zero", ("intphys",),
     _set(["intphys", "models"], [{"name": "c", "algorithm": "constant", "resources": {"threads": 0}}]),
     "intphys.models[0].resources.threads"),
    ("deep-resources-unknown", (), _set(["motion", "models", 0, "resources"], {"gpus": 1}),
     "motion.models[0].resources"),
    ("deep-weights-of-a-plain-model", (), _set(["motion", "models", 0, "weights"], "data/clip.mp4"),
     "motion.models[0]: model 'hs': 'weights' applies to a factory model"),
    ("deep-batch-size-of-a-plain-model", (), _set(["motion", "models", 0, "batch_size"], 4),
     "motion.models[0]: model 'hs': 'batch_size' applies to a deep model"),
    # names become file names and Snakemake wildcards
    ("model-name-300-characters", (), _set(["motion", "models", 0, "name"], "m" * 300), "motion.models[0].name"),
    ("attention-model-name-300-characters", ("attention",), _set(["attention", "models", 0, "name"], "r" * 300),
     "attention.models[0].name"),
    ("movie-name-up-the-tree", ("attention",), _set(["attention", "movies", "../../x"], dict(RECORDED)),
     "attention.movies: name '../../x'"),
    ("movie-name-markup", ("attention",), _set(["attention", "movies", "<script>"], dict(RECORDED)),
     "attention.movies: name '<script>'"),
    # a folder where a file is expected, and the reverse
    ("movie-file-is-a-folder", ("attention",), _set(["attention", "movies", "C"], {**RECORDED, "file": "data"}),
     "attention.movies.C.file: data is a folder, expected a file"),
    ("literature-is-a-folder", (), _set(["literature"], "config"), "literature: config is a folder, expected a file"),
    ("intphys-root-is-a-file", ("intphys",), _set(["intphys"], {"data_root": "data/clip.mp4", "generate": False}),
     "intphys.data_root: data/clip.mp4 is a file, expected a folder"),
    # the leaderboard mistakes that the report job alone used to find, after all the compute
    ("leaderboard-unknown-criterion", (),
     _set(["aggregate", "leaderboards"], [{"name": "m", "track": "motion", "criteria": ["motion/diamond/error"]}]),
     "aggregate.leaderboards[0].criteria[0]: 'motion/diamond/error' has the experiment 'diamond'"),
    ("leaderboard-unknown-metric", (),
     _set(["aggregate", "leaderboards"], [{"name": "m", "criteria": ["motion/diamonds/eror"]}]),
     "aggregate.leaderboards[0].criteria[0]: 'motion/diamonds/eror' has the metric 'eror'"),
    ("leaderboard-other-tracks-criterion", ("intphys",),
     _set(["aggregate", "leaderboards"],
          [{"name": "m", "track": "motion", "criteria": ["intphys/all/all/all/all/L_R"]}]),
     "aggregate.leaderboards[0].criteria[0]: 'intphys/all/all/all/all/L_R' belongs to track 'intphys'"),
    ("leaderboard-empty-criteria", (), _set(["aggregate", "leaderboards"], [{"name": "m", "criteria": []}]),
     "aggregate.leaderboards[0].criteria: lists no criterion"),
    ("leaderboard-name-twice", (),
     _set(["aggregate", "leaderboards"], [{"name": "m"}, {"name": "m", "track": "motion"}]),
     "aggregate.leaderboards[1].name: leaderboard name 'm' is used twice"),
    ("leaderboard-misspelt-track", (), _set(["aggregate", "leaderboards"], [{"name": "m", "track": "motoin"}]),
     "aggregate.leaderboards[0].track: 'motoin' is not a track"),
    ("leaderboard-attention-pair-not-run", ("attention",),
     _set(["aggregate", "leaderboards"], [{"name": "a", "track": "attention", "criteria": ["attention/A_on_B/NSS"]}]),
     "aggregate.leaderboards[0].criteria[0]: 'attention/A_on_B/NSS' has the experiment 'A_on_B'"),
    ("leaderboard-intphys-criterion-shape", ("intphys",),
     _set(["aggregate", "leaderboards"], [{"name": "i", "criteria": ["intphys/all/L_R"]}]),
     "aggregate.leaderboards[0].criteria[0]: 'intphys/all/L_R' is not of the form"),
    # within every bound, but 60 s of a 4096 px display at 1000 frames/s: an 8 TB response
    ("motion-response-memory", (), lambda c: c["display"].update(width_px=4096, height_px=4096, frames_per_s=1000)
     or c["motion"].update(duration_ms=60000), "display.frames_per_s"),
    ("intphys-movie-memory", ("intphys",),
     _set(["intphys", "generator"], {"n_frames": 10000, "height": 4096, "width": 4096}), "intphys.generator.n_frames"),
    ("attention-feature-memory", ("attention",),
     lambda c: c["attention"].update(grid=[4096, 4096]) or c["attention"]["movies"]["A"]["popout"].update(
         n_frames=100000), "attention.movies.A.popout.n_frames"),
]


@pytest.mark.parametrize("tracks,mutate,key", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_config_is_refused_naming_the_key(harness, project, tracks, mutate, key):
    cfg = _tiny(harness, *tracks)
    mutate(cfg)
    with pytest.raises(ConfigError, match=re.escape(f"config key {key}")) as err:
        prepare_workflow(cfg)
    assert "Traceback" not in str(err.value)


@pytest.mark.parametrize("tracks", [(), ("intphys",), ("attention",)])
def test_the_unmodified_configs_pass(harness, project, tracks):
    """The controls of the cases above: each base config, and a recorded movie whose files exist."""
    cfg = _tiny(harness, *tracks)
    if "attention" in tracks:
        cfg["attention"]["movies"]["C"] = dict(RECORDED)
    models = prepare_workflow(cfg)
    assert set(models) == {"motion", *tracks}


LEADERBOARD_MISTAKES = {
    "unknown-criterion": ({"name": "m", "track": "motion", "criteria": ["motion/diamond/error"]},
                          "aggregate.leaderboards[0].criteria[0]"),
    "other-tracks-criterion": ({"name": "m", "track": "motion", "criteria": ["attention/A_on_A/NSS"]},
                               "aggregate.leaderboards[0].criteria[0]"),
    "empty-criteria": ({"name": "m", "track": "motion", "criteria": []}, "aggregate.leaderboards[0].criteria"),
    "misspelt-track": ({"name": "m", "track": "motoin"}, "aggregate.leaderboards[0].track"),
}


@pytest.mark.parametrize("board,key", LEADERBOARD_MISTAKES.values(), ids=LEADERBOARD_MISTAKES)
def test_leaderboard_mistakes_in_config_yaml_itself_are_refused(harness, project, board, key):
    """A leaderboard of config/config.yaml itself was taken as inherited from the shipped config,
    so each of these passed with at most a warning and failed the report job after all the compute."""
    cfg = _tiny(harness, "attention")
    cfg["aggregate"] = {"leaderboards": [board]}
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    with pytest.raises(ConfigError, match=re.escape(f"config key {key}:")):
        prepare_workflow(cfg)


def test_leaderboard_name_twice_in_config_yaml_itself_is_refused(harness, project):
    cfg = _tiny(harness)
    cfg["aggregate"] = {"leaderboards": [{"name": "m", "track": "motion"}, {"name": "m"}]}
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    with pytest.raises(ConfigError, match=re.escape("config key aggregate.leaderboards[1].name: leaderboard name "
                                                    "'m' is used twice (also aggregate.leaderboards[0])")):
        prepare_workflow(cfg)


def test_inherited_leaderboards_of_tracks_not_run_are_left_to_the_scope(harness, project):
    """The shipped leaderboards laid under a motion-only config: the attention and IntPhys boards
    and the sweep of a model not run pass here, and are left out with a warning later."""
    shipped = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(shipped, sort_keys=False))
    cfg = _tiny(harness)
    cfg["aggregate"] = {"leaderboards": shipped["aggregate"]["leaderboards"]}
    prepare_workflow(cfg)


def test_leaderboard_criteria_of_the_shipped_config_are_known(harness, project):
    """The controls of the criterion checks: every criterion the shipped config ranks, with its tracks run."""
    shipped = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg = _tiny(harness, "attention", "intphys")
    cfg["motion"]["models"].append({"name": "tv", "algorithm": "tlapale_v1mt"})
    cfg["aggregate"] = {"leaderboards": shipped["aggregate"]["leaderboards"] + [
        {"name": "att", "track": "attention", "criteria": ["attention/A_on_A/NSS", "attention/A_on_A/median_rp_n_ma"]},
        {"name": "fits", "criteria": ["motion/grating_size/speed/dir015/gaussian_score", "motion/diamonds/passed"]},
    ]}
    prepare_workflow(cfg)


def test_leaderboard_of_a_sweep_may_name_the_algorithm(harness, project):
    cfg = _tiny(harness)
    cfg["motion"]["models"].append({"name": "hs_smooth", "algorithm": "horn_schunck", "params": {"alpha": 0.5}})
    cfg["aggregate"] = {"leaderboards": [{"name": "sweep", "track": "motion", "model": "horn_schunck"}]}
    prepare_workflow(cfg)


@pytest.mark.parametrize(("duration_ms", "n_frames"), [(200, 10), (205, 10), (210, 10), (215, 11), (230, 12)])
def test_memory_estimate_counts_the_frames_the_display_renders(harness, project, duration_ms, n_frames):
    # 210 ms at 50 frames/s is 10.5 frames: the display renders round-half-even 10, so
    # does the estimate (a truncation plus one counted 11)
    cfg = _tiny(harness)
    cfg["motion"]["duration_ms"] = duration_ms
    prepare_workflow(cfg)
    (_keys, _what, nbytes), = array_estimates(cfg)
    assert Display.from_config(cfg["display"]).ms_to_frames(duration_ms) == n_frames
    assert nbytes == n_frames * 96 * 96 * 2 * 4


def test_memory_estimate_is_the_response_size_and_the_limit_is_the_machines(harness, project):
    cfg = _tiny(harness)
    prepare_workflow(cfg)  # fills the defaults
    (keys, what, nbytes), = array_estimates(cfg)
    # TINY_CONFIG: 200 ms at 50 frames/s = 10 frames of 96 x 96 (the run's response store has
    # shape (10, 96, 96, 2)), 2 float32 components
    assert nbytes == 10 * 96 * 96 * 2 * 4 and "10 x 96 x 96 x 2" in what
    check_memory(cfg, limit_bytes=nbytes)
    with pytest.raises(ConfigError, match=r"config key display\.frames_per_s, motion\.duration_ms.*GiB"):
        check_memory(cfg, limit_bytes=nbytes - 1)


def test_memory_estimate_counts_a_finer_display_scale(harness, project):
    """A px_per_deg re-run renders a larger frame (the same field of view in deg): the estimate names its key."""
    cfg = _tiny(harness)
    cfg["motion"]["generalisation"]["px_per_deg"] = {"levels": [8], "experiments": ["diamonds"]}
    prepare_workflow(cfg)
    (_, _, base), (keys, what, nbytes) = array_estimates(cfg)
    # TINY_CONFIG: 96 x 96 px at 4 px/deg; at 8 px/deg 192 x 192, four times the bytes
    assert keys.startswith("motion.generalisation.px_per_deg.levels[0]") and "192 x 192" in what
    assert nbytes == 4 * base
    with pytest.raises(ConfigError, match=r"motion\.generalisation\.px_per_deg\.levels\[0\]"):
        check_memory(cfg, limit_bytes=nbytes - 1)


@pytest.mark.workflow
def test_snakemake_refuses_a_nan_before_any_job(harness, tmp_path):
    cfg = harness.tiny_config()
    cfg["motion"]["readout"] = {"lambda_ms": NAN}
    work = harness.copy(tmp_path / "wf", cfg)
    proc = harness.run(work, "-n", harness.table, check=False, timeout=300)
    out = harness.output(proc)
    assert proc.returncode != 0, out
    assert "config key motion.readout.lambda_ms: nan is not a finite number" in out
    assert "Job stats" not in out and "jobid" not in out  # nothing was planned
    assert not (work / "results").exists()
