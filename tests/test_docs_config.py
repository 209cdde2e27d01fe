"""config/README.md: every config key described, generated from config/schema.yaml and kept up to date."""

from __future__ import annotations

from pathlib import Path

import yaml

from psybench import config_docs
from psybench.config import SCHEMA_PATH
from psybench.config_docs import render_config_docs, schema_keys, undocumented_keys

ROOT = Path(__file__).resolve().parent.parent


def _schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text())


def _config_keys(node, nodes, path=""):
    """Every key of a config mapping that the schema describes one by one.

    Free names (``attention.movies.A``) become ``<name>``, list entries ``[]``; the
    inside of a free-form mapping (a model's ``params``, a ``popout``'s keyword
    arguments) is not walked: the schema describes it as one key.
    """
    if isinstance(node, dict):
        for key, value in node.items():
            if path == "attention.movies":
                yield from _config_keys(value, nodes, f"{path}.<name>")
                continue
            sub = f"{path}.{key}" if path else str(key)
            yield sub
            if nodes.get(sub, {}).get("properties") or sub == "attention.movies" or (
                    isinstance(nodes.get(sub, {}).get("items"), dict)):
                yield from _config_keys(value, nodes, sub)
    elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
        for value in node:
            yield from _config_keys(value, nodes, f"{path}[]")


def test_config_readme_is_generated_from_the_schema():
    assert (ROOT / "config/README.md").read_text() == render_config_docs(_schema()), (
        "config/README.md is out of date: run python -m psybench.config_docs")


def test_every_schema_key_has_a_description():
    assert undocumented_keys(_schema()) == []


def test_every_key_of_the_default_config_is_described():
    nodes = dict(schema_keys(_schema()))
    used = set(_config_keys(yaml.safe_load((ROOT / "config/config.yaml").read_text()), nodes))
    documented = set(nodes)
    assert used and used <= documented, sorted(used - documented)
    text = (ROOT / "config/README.md").read_text()
    assert all(f"| `{key}` |" in text for key in used)


def test_check_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "README.md"
    stale.write_text("# Configuration keys\n")
    monkeypatch.setattr(config_docs, "README_PATH", stale)
    assert config_docs.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert config_docs.main([]) == 0 and config_docs.main(["--check"]) == 0


def test_undocumented_key_is_found():
    schema = {"properties": {"a": {"type": "object", "description": "A.",
                                   "properties": {"b": {"type": "number"}}}}}
    assert undocumented_keys(schema) == ["a.b"]
    assert "| `a.b` | number |" in render_config_docs(schema)
