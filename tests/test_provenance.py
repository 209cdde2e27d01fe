import pytest

from psybench.provenance import callable_modules, code_hash, module_files, params_hash, rule_code_hash, script_modules


def test_params_hash_is_order_independent_and_sensitive():
    assert params_hash({"a": 1, "b": [1, 2]}) == params_hash({"b": [1, 2], "a": 1})
    assert params_hash({"a": 1}) != params_hash({"a": 2})


def test_code_hash_changes_with_source(tmp_path, monkeypatch):
    pkg = tmp_path / "hashme"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "stage.py").write_text("X = 1\n")
    (pkg / "other.py").write_text("Y = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before_stage, before_other = code_hash(["hashme.stage"]), code_hash(["hashme.other"])
    whole = code_hash(["hashme"])
    (pkg / "stage.py").write_text("X = 2\n")
    assert code_hash(["hashme.stage"]) != before_stage
    assert code_hash(["hashme.other"]) == before_other  # an unrelated module keeps its hash
    assert code_hash(["hashme"]) != whole
    assert len(module_files(["hashme"])) == 3


def test_unknown_module():
    with pytest.raises(ValueError, match="no_such_module"):
        code_hash(["no_such_module"])


# A package with every import form the closure must follow (and two it must not).
CLOSURE_PACKAGE = {
    "__init__.py": "from cpkg_pv import eager\n\ndef __getattr__(name):\n    from cpkg_pv import heavy\n",
    "eager.py": "",
    "heavy.py": "",  # imported by the package's __getattr__ only: no module here asks for it
    "entry.py": "import os\nimport numpy as np\nfrom . import sibling\nfrom .sub.deep import K\n"
                "import cpkg_pv.alias as al\nfrom cpkg_pv.lazy import loaded\n\ndef run():\n"
                "    from cpkg_pv.sub import late\n",
    "sibling.py": "",
    "alias.py": "",
    "unused.py": "",
    "sub/__init__.py": "",
    "sub/deep.py": "from ..helpers import GAIN\nK = GAIN\n",
    "sub/late.py": "",
    "helpers.py": "GAIN = 1\n",
    "lazy/__init__.py": "from psybench._lazy import lazy_exports\n_EXPORTS = {'other': 'cpkg_pv.lazy.other', "
                        "**dict.fromkeys(['loaded', 'also'], 'cpkg_pv.lazy.impl')}\n"
                        "__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)\n",
    "lazy/impl.py": "",
    "lazy/other.py": "",
}


@pytest.fixture
def closure_package(tmp_path, monkeypatch):
    import sys

    for rel, src in CLOSURE_PACKAGE.items():
        (tmp_path / "cpkg_pv" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "cpkg_pv" / rel).write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / "cpkg_pv"
    for name in [m for m in sys.modules if m.startswith("cpkg_pv")]:
        del sys.modules[name]


def test_the_closure_follows_every_import_form(closure_package):
    """Relative (one and two levels), aliased, inside a function, a lazy export (psybench._lazy)."""
    assert callable_modules("cpkg_pv.entry") == [
        "cpkg_pv.__init__", "cpkg_pv.alias", "cpkg_pv.eager", "cpkg_pv.entry", "cpkg_pv.helpers",
        "cpkg_pv.lazy.__init__", "cpkg_pv.lazy.impl", "cpkg_pv.sibling",
        "cpkg_pv.sub.__init__", "cpkg_pv.sub.deep", "cpkg_pv.sub.late",
    ]  # not heavy (a parent package's function), other (a lazy export not taken), unused; no os, numpy


def test_the_closure_sees_an_import_added_to_a_file_in_the_same_process(closure_package):
    assert "cpkg_pv.unused" not in callable_modules("cpkg_pv.sibling")
    (closure_package / "sibling.py").write_text("from cpkg_pv import unused\n# longer\n")
    assert "cpkg_pv.unused" in callable_modules("cpkg_pv.sibling")


def test_a_script_brings_the_psybench_modules_it_imports_only(tmp_path):
    script = tmp_path / "motion_generalisation_scores.py"
    script.write_text("import sys\n\nfrom psybench.motion.generalisation_runs import run_readouts_and_scores\n")
    found = script_modules(script)
    assert {"psybench.__init__", "psybench.motion.__init__", "psybench.motion.generalisation_runs",
            "psybench.motion.readouts", "psybench.motion.scores"} <= set(found)
    assert not [m for m in found if m.startswith(("psybench.attention", "psybench.intphys"))]
    before = rule_code_hash(script)
    script.write_text(script.read_text() + "# edited\n")
    assert rule_code_hash(script) != before


def test_rule_code_hash_covers_non_python_files(tmp_path):
    script, template = tmp_path / "job.py", tmp_path / "page.html"
    script.write_text("from psybench.io import atomic\n")
    template.write_text("<p>1</p>")
    before = rule_code_hash(script, files=[template])
    template.write_text("<p>2</p>")
    assert rule_code_hash(script, files=[template]) != before
    with pytest.raises(ValueError, match="no_such_script"):
        rule_code_hash(tmp_path / "no_such_script.py")


def test_rule_code_hash_imports_nothing_it_hashes():
    """Planning hashes every rule's code on every run: reading the imports must not run them."""
    import subprocess
    import sys

    from psybench.provenance import PACKAGE_ROOT

    script = PACKAGE_ROOT.parent / "scripts" / "motion_generalisation_scores.py"
    code = ("import sys; from psybench.provenance import rule_code_hash; before = set(sys.modules); "
            "rule_code_hash(%r); print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code % str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
