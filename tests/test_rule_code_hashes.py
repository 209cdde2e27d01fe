"""Every rule's ``code_hash`` param covers the psybench code its job imports.

Snakemake reruns a job whose params changed, not one whose imported library modules
changed; each rule therefore carries a code hash (:mod:`psybench.provenance`). The
workflow copy is parsed once (``snakemake --list-rules``) through a driver that
records, for every digest :func:`psybench.provenance.code_hash` returns, the files it
hashed, and dumps each rule's script and ``code_hash`` values. The oracle is Python
itself: a fresh interpreter runs a script's ``import`` statements and lists the psybench
files that ``sys.modules`` then holds (lazy exports, parents' ``__init__`` and all).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.workflow

# Parsed after the workflow's own Snakefile: one row per rule with a script.
DRIVER = '''
import json as _json
import types as _types

import psybench.provenance as _provenance

_HASHED = {}
_code_hash = _provenance.code_hash


def _recording_code_hash(modules):
    modules = list(modules)
    digest = _code_hash(modules)
    _HASHED[digest] = sorted(str(f) for f in _provenance.module_files(modules))
    return digest


_provenance.code_hash = _recording_code_hash


include: "Snakefile"


_MODEL_NAMES = sorted({name for track in MODELS.values() for name in track})
_rows = {}
for _rule in workflow.rules:
    if not _rule.script:
        continue
    _values = []
    for _name, _value in _rule.params.items():
        if _name != "code_hash":
            continue
        if callable(_value):  # a function of the model wildcard
            for _model in _MODEL_NAMES:
                try:
                    _values.append(_value(_types.SimpleNamespace(model=_model, attention_map=_model)))
                except (KeyError, ValueError):  # not a model of this rule
                    pass
        else:
            _values.append(_value)
    _rows[_rule.name] = {
        "script": str(Path(_rule.basedir.get_path_or_uri(secret_free=True), _rule.script).resolve()),
        "hashes": {v: _HASHED.get(v) for v in _values},
    }
Path("rule_code_hashes.json").write_text(_json.dumps(_rows, indent=1))
'''

# Runs each script's import statements in a fork of one interpreter (third-party
# libraries imported once, before the forks; psybench never, so that each fork lists
# what its own imports load).
ORACLE = r'''
import ast, json, os, sys
package = os.path.join(os.path.realpath(sys.argv[1]), "psybench") + os.sep
import numpy, pandas, scipy.stats, scipy.optimize, zarr, dask.array, numcodecs, yaml  # noqa
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot  # noqa
out = {}
for script in sys.argv[2:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        tree = ast.parse(open(script).read())
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        exec(compile(ast.Module(imports, []), script, "exec"), {"__name__": "oracle"})
        files = sorted({os.path.realpath(m.__file__) for m in list(sys.modules.values())
                        if getattr(m, "__file__", None) and os.path.realpath(m.__file__).startswith(package)})
        with os.fdopen(write, "w") as f:
            f.write(json.dumps(files))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        out[script] = json.loads(f.read())
    _, status = os.waitpid(pid, 0)
    if status:
        raise SystemExit(f"importing the imports of {script} failed")
print(json.dumps(out))
'''


def _every_rule_config(root: Path) -> dict:
    """The default config: every track, IntPhys generated, motion generalisation runs, plus an attention
    map-output model (its scoring rule exists only when one is configured)."""
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    assert set(cfg["tracks"]) == {"motion", "attention", "intphys"} and cfg["motion"]["generalisation"]
    cfg["attention"]["models"].append({"name": "centre", "algorithm": "centre_bias", "kind": "map"})
    return cfg


def _dump(harness, work: Path) -> dict:
    (work / "dump.smk").write_text(DRIVER)
    harness.run(work, "-s", "dump.smk", "--list-rules", timeout=300)
    return json.loads((work / "rule_code_hashes.json").read_text())


def _oracle(work: Path, scripts: list[str]) -> dict[str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", ORACLE, str(work), *scripts], cwd=work, capture_output=True,
                          text=True, timeout=600, env={**__import__("os").environ, "PYTHONPATH": str(work)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def parsed(harness, tmp_path_factory):
    work = harness.copy(tmp_path_factory.mktemp("codehash") / "w", _every_rule_config(harness.root))
    return work, _dump(harness, work)


def test_every_rule_with_a_script_has_a_code_hash_over_its_imports(parsed):
    """Fails on the hand-kept lists: motion_generalisation_scores missed its own entry module,
    generalisation_runs.py; the motion figures display.py; the attention feature stores grid_coords.py."""
    work, rows = parsed
    # the rules that the default config with a generalisation run defines: each track's and the aggregate ones
    assert {"motion_generalisation_scores", "motion_figures_model", "attention_responses", "intphys_responses",
            "intphys_train", "report_leaderboard", "attention_map_scores"} <= set(rows), sorted(rows)
    oracle = _oracle(work, sorted({row["script"] for row in rows.values()}))
    missing = {}
    for rule, row in rows.items():
        if not row["hashes"]:
            missing[rule] = "no code_hash param"
        for digest, files in row["hashes"].items():
            if files is None:
                missing[rule] = f"code_hash {digest} is no code_hash() digest"
                continue
            absent = sorted(set(oracle[row["script"]]) - {str(Path(f).resolve()) for f in files})
            if absent:
                missing[rule] = [str(Path(f).relative_to(work.resolve())) for f in absent]
    assert not missing, json.dumps(missing, indent=1)


def test_editing_a_module_changes_the_hashes_of_the_rules_that_import_it_only(parsed, harness, tmp_path):
    work, before = parsed
    edited = harness.clone(work, tmp_path / "w")
    module = edited / "psybench" / "motion" / "generalisation_runs.py"
    module.write_text(module.read_text() + "# edited\n")
    after = _dump(harness, edited)
    changed = {rule for rule in before if set(before[rule]["hashes"]) != set(after[rule]["hashes"])}
    assert "motion_generalisation_scores" in changed
    assert not {r for r in changed if r.startswith(("attention", "intphys", "aggregate"))}, sorted(changed)
    assert not changed & {"motion_stimuli", "motion_responses", "motion_figures_model"}, sorted(changed)


def test_editing_the_generalisation_runs_plans_their_scores_again(harness, tmp_path):
    """The module that the generalisation readouts and scores run was in no hand-kept list: editing it reran nothing."""
    cfg = harness.tiny_config(generalisation={"contrast": {"levels": [0.5], "experiments": ["diamonds"]},
                                              "speed_deg_s": {"levels": []}, "frames_per_s": {"levels": []},
                                              "px_per_deg": {"levels": []}})
    work = harness.copy(tmp_path / "w", cfg)
    target = "results/aggregate/motion_generalisation.csv"
    harness.run(work, "--cores", "2", target)
    assert harness.job_counts(harness.run(work, "-n", target)) == {}  # up to date
    module = work / "psybench" / "motion" / "generalisation_runs.py"
    module.write_text(module.read_text() + "# edited\n")
    plan = harness.run(work, "-n", target)
    assert harness.job_counts(plan) == {"motion_generalisation_readouts": 1, "motion_generalisation_scores": 1,
                                        "motion_generalisation": 1}, \
        harness.output(plan)
