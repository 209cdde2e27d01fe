import pytest

from psybench.provenance import code_hash, module_files, params_hash


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
