"""YAML parsing with libyaml's C parser when PyYAML was built with it.

``yaml.load(text, Loader=CSafeLoader)`` builds the same Python values as
``yaml.safe_load`` (the constructor and resolver are the same; only the scanner and
parser are C) at about a tenth of the CPU time: the workflow parses the config, the
schema and the literature file at every start, no-op reruns included.

:func:`strict_load` reads a config file: YAML itself lets a key be given twice in one
mapping (the later value wins, silently) and lets aliases (``*name``) repeat a node
so often that a file of a few hundred bytes stands for hundreds of millions of
values (the "billion laughs" document). PyYAML builds such a document cheaply (the
repeats are shared objects), but whatever walks it (a schema check, Snakemake's
config merge and its config digest) runs for minutes. :func:`strict_load` composes
the node graph (linear in the text), refuses both before any value is built, and
names the key.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["safe_load", "strict_load", "YAMLContentError", "MAX_ALIASES", "MAX_NODES"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"

#: Most alias uses (``*name``, ``<<: *name``) a config file may hold: the shipped
#: config uses one (the motion criteria shared by two leaderboards).
MAX_ALIASES = 64
#: Most values (scalars, lists and mappings, each alias expanded) a config file may
#: stand for: the shipped config holds a few hundred.
MAX_NODES = 100_000


class YAMLContentError(ValueError):
    """A well-formed YAML document that a config must not be; ``key`` is the dotted path."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key
        self.detail = message


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, with the C parser when available."""
    return yaml.load(text, Loader=_LOADER)


def _child(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _check(root: yaml.Node, max_aliases: int, max_nodes: int) -> None:
    """Duplicate keys, alias uses and the expanded size of the node graph ``root``.

    In document order the first visit of a node is its anchored definition and each
    later visit an alias use. Each node is looked into once, so a bomb costs its
    text's length, and its expanded size is summed from its children's (memoised).
    """
    seen: set[int] = set()
    size: dict[int, int] = {}
    aliases = 0

    def visit(node: yaml.Node, path: str) -> int:
        nonlocal aliases
        if id(node) in seen:
            aliases += 1
            if aliases > max_aliases:
                raise YAMLContentError(path or "<top level>", f"the file uses more than {max_aliases} YAML aliases "
                                       f"(*name, line {_line(node)} onwards); a config needs few, if any")
            return size[id(node)]
        seen.add(id(node))
        total = 1
        if isinstance(node, yaml.MappingNode):
            keys: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    total += visit(value_node, path)
                    continue
                if isinstance(key_node, yaml.ScalarNode):
                    ident = (key_node.tag, key_node.value)
                    if ident in keys:
                        raise YAMLContentError(
                            _child(path, key_node.value),
                            f"given twice (lines {keys[ident]} and {_line(key_node)}); YAML would keep the later "
                            "one silently: remove one",
                        )
                    keys[ident] = _line(key_node)
                    total += visit(value_node, _child(path, key_node.value))
                else:
                    total += visit(key_node, path) + visit(value_node, path)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                total += visit(item, f"{path}[{i}]")
        size[id(node)] = total
        if total > max_nodes:
            raise YAMLContentError(path or "<top level>", f"expands to more than {max_nodes} values through its "
                                   "YAML aliases (*name); a config is a few hundred")
        return total

    visit(root, "")


def strict_load(text: str, *, max_aliases: int = MAX_ALIASES, max_nodes: int = MAX_NODES) -> Any:
    """Parse one YAML document like :func:`safe_load`, refusing what a config file must not hold.

    Raises
    ------
    YAMLContentError
        A key given twice in one mapping (at any depth), more than ``max_aliases``
        alias uses, or more than ``max_nodes`` values once aliases are expanded;
        ``key`` names the dotted path (``motion.readout.lambda_ms``).
    yaml.YAMLError
        The text is not YAML.
    """
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check(node, max_aliases, max_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()
