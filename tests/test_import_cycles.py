"""No import cycles among psybench's own modules.

The graph is read from the source (``ast``), not from an import: every ``import`` and
``from ... import`` statement counts, at module level and inside functions alike (an
import inside a function closes a cycle as surely as one at the top, it only defers
the failure). Strings that name a module (the lazy exports of :mod:`psybench._lazy`,
the registry's entries) are not statements and are not read. A package's
``__init__`` is a node of its own (``psybench.motion``); ``from pkg import sub``
where ``pkg.sub`` is a module is an edge to ``pkg.sub``, not to ``pkg`` (importing
a submodule runs its parents first, for every module alike).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import psybench

PACKAGE_DIR = Path(psybench.__file__).resolve().parent

# Edges allowed to close a cycle, each with the reason it is still there. Keep this
# empty: move the code to the lower-level module instead of listing an edge.
# config_checks raises config's ConfigError through an import inside _error, and
# config imports config_checks; the track config checks are leaving config_checks
# (each track will own its checks), and with them this edge. The test fails once the
# edge is gone, so that its entry is removed too.
KNOWN_EDGES = {("psybench.config_checks", "psybench.config")}


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` below ``package_dir`` (``__init__`` is its package)."""
    root = package_dir.parent
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(package_dir: Path) -> dict[str, dict[str, int]]:
    """Each module's imports of the package's own modules, with the line of the first."""
    modules = module_names(package_dir)

    def own(name: str | None) -> str | None:
        while name and name not in modules:  # ``pkg.mod.attr`` -> ``pkg.mod``
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [own(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.append(sub if sub in modules else own(source))
            for target in targets:
                if target and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]], ignore=frozenset()) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), ``ignore``'s edges left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # the package has a few hundred modules: recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if (v, w) in ignore:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    edges = [f"  {a} -> {b} (line {graph[a][b]})" for a in component for b in sorted(graph[a]) if b in component]
    return "\n".join(["cycle: " + ", ".join(component), *edges])


def test_psybench_has_no_import_cycle():
    graph = import_graph(PACKAGE_DIR)
    found = cycles(graph, ignore=KNOWN_EDGES)
    assert not found, "import cycles in psybench/ (move the shared code down a level):\n" + "\n\n".join(
        describe(graph, c) for c in found
    )


def test_known_edges_still_exist():
    graph = import_graph(PACKAGE_DIR)
    stale = [edge for edge in KNOWN_EDGES if edge[1] not in graph.get(edge[0], {})]
    assert not stale, f"remove {stale} from KNOWN_EDGES: the import is gone"


def write_package(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path / "pkg"


def test_an_import_inside_a_function_closes_a_cycle(tmp_path):
    pkg = write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import g\n",
        "b.py": "def g():\n    from pkg import a  # deferred, still a cycle\n    return a\n",
        "c.py": "from . import a\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.b": 1}
    assert graph["pkg.b"] == {"pkg.a": 2}
    assert graph["pkg.c"] == {"pkg.a": 1}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert cycles(graph, ignore={("pkg.b", "pkg.a")}) == []


def test_packages_and_relative_imports_are_nodes_and_edges(tmp_path):
    pkg = write_package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "from .impl import f\n",
        "sub/impl.py": "from .. import top\n\ndef f():\n    return top.x\n",
        "top.py": "import pkg.sub\nx = 1\n",
        "free.py": "from pkg.sub import impl\nfrom pkg.top import x\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.sub"] == {"pkg.sub.impl": 1}  # a package's __init__ is its own node
    assert graph["pkg.sub.impl"] == {"pkg.top": 1}  # relative, two levels
    assert graph["pkg.free"] == {"pkg.sub.impl": 1, "pkg.top": 2}  # a submodule, and a module's attribute
    assert cycles(graph) == [["pkg.sub", "pkg.sub.impl", "pkg.top"]]
