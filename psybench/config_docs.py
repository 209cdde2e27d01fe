"""``config/README.md``, generated from ``config/schema.yaml``: every key, its type, default and description.

The schema is the one source: its ``description`` of every key, its types,
constraints and defaults. ``python -m psybench.config_docs`` rewrites
``config/README.md``; ``python -m psybench.config_docs --check`` fails when the file
is out of date (the test suite runs the same comparison), so the page cannot drift
from the schema.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from psybench.config import SCHEMA_PATH

__all__ = ["schema_keys", "render_config_docs", "undocumented_keys", "main"]

README_PATH = SCHEMA_PATH.parent / "README.md"
_CONSTRAINTS = (("minimum", ">= {}"), ("exclusiveMinimum", "> {}"), ("maximum", "<= {}"),
                ("exclusiveMaximum", "< {}"), ("minItems", "at least {} items"), ("maxItems", "at most {} items"),
                ("pattern", "matches `{}`"))


def _resolve(node: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(node, Mapping) and "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return schema["$defs"][name]
    return node


def schema_keys(schema: Mapping[str, Any], node: Any = None, path: str = "") -> Iterator[tuple[str, dict]]:
    """Every key of the schema, depth first in schema order: ``(dotted path, its schema node)``.

    Items of an array of mappings are ``key[].sub``; entries of a free-named mapping
    (``attention.movies``) are ``key.<name>.sub``.
    """
    node = _resolve(schema if node is None else node, schema)
    if not isinstance(node, Mapping):
        return
    for name, sub in (node.get("properties") or {}).items():
        sub = _resolve(sub, schema)
        key = f"{path}.{name}" if path else name
        yield key, sub
        yield from schema_keys(schema, sub, key)
    items = _resolve(node.get("items"), schema)
    if isinstance(items, Mapping) and items.get("properties"):
        yield from schema_keys(schema, items, f"{path}[]")
    extra = _resolve(node.get("additionalProperties"), schema)
    if isinstance(extra, Mapping) and extra.get("properties"):
        yield from schema_keys(schema, extra, f"{path}.<name>")


def _type(node: Mapping[str, Any]) -> str:
    if "enum" in node:
        return " | ".join(f"`{v}`" for v in node["enum"])
    t = node.get("type")
    if t is None and "oneOf" in node:
        return " or ".join(_type(o) for o in node["oneOf"] if isinstance(o, Mapping) and "required" not in o) or ""
    types = t if isinstance(t, list) else [t] if t else []
    out = []
    for x in types:
        if x == "array" and isinstance(node.get("items"), Mapping) and node["items"].get("type"):
            out.append(f"array of {_type(node['items'])}")
        elif x == "array" and isinstance(node.get("items"), Mapping) and "enum" in node["items"]:
            out.append(f"array of {_type(node['items'])}")
        else:
            out.append(str(x))
    return " or ".join(out)


def _constraints(node: Mapping[str, Any]) -> str:
    parts = [fmt.format(node[k]) for k, fmt in _CONSTRAINTS if k in node]
    items = node.get("items")
    if isinstance(items, Mapping):
        parts += [f"items {fmt.format(items[k])}" for k, fmt in _CONSTRAINTS if k in items]
    if node.get("uniqueItems"):
        parts.append("unique items")
    if node.get("required") and node.get("type") == "object":
        parts.append("requires " + ", ".join(f"`{r}`" for r in node["required"]))
    return "; ".join(parts)


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def undocumented_keys(schema: Mapping[str, Any]) -> list[str]:
    """Keys without a ``description`` in the schema."""
    return [key for key, node in schema_keys(schema) if not str(node.get("description", "")).strip()]


def render_config_docs(schema: Mapping[str, Any]) -> str:
    """The Markdown page describing every key of ``schema``."""
    lines = [
        "# Configuration keys",
        "",
        "<!-- Generated from config/schema.yaml by `python -m psybench.config_docs`; do not edit by hand. -->",
        "",
        _cell(schema.get("description", "")),
        "",
        "`config/config.yaml` is the default run; a file of your own given with "
        "`snakemake all --configfile my_config.yaml` is laid over it key by key (lists and values replace, "
        "mappings merge). Keys not given take the defaults below. `psybench.score(..., config=..., "
        "overrides=...)` reads the same keys.",
        "",
    ]
    current = None
    for key, node in schema_keys(schema):
        section = key.split(".")[0].split("[")[0]
        if section != current:
            current = section
            top = _resolve(schema["properties"][section], schema)
            lines += ["", f"## `{section}`", "", _cell(top.get("description", "")), "",
                      "| key | type | default | constraints | description |", "|---|---|---|---|---|"]
        default = f"`{json.dumps(node['default'])}`" if "default" in node else ""
        lines.append(f"| `{key}` | {_cell(_type(node))} | {_cell(default)} | {_cell(_constraints(node))} | "
                     f"{_cell(node.get('description', ''))} |")
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write ``config/README.md`` (or, with ``--check``, fail when it is out of date)."""
    parser = argparse.ArgumentParser(prog="python -m psybench.config_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when config/README.md is out of date")
    args = parser.parse_args(argv)
    text = render_config_docs(yaml.safe_load(Path(SCHEMA_PATH).read_text()))
    if args.check:
        if not README_PATH.is_file() or README_PATH.read_text() != text:
            print(f"{README_PATH} is out of date: run python -m psybench.config_docs", file=sys.stderr)
            return 1
        return 0
    README_PATH.write_text(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
