"""Deterministic hashes of code and parameters, for store attributes and reruns.

Snakemake only notices edits to a rule's own script, not to the library modules
it imports (Snakemake documentation, "rerun triggers"). Each rule therefore carries a ``params``
value from :func:`code_hash` over the psybench modules of its stage, so editing
one stage's code reruns that stage and what depends on it, and nothing else.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["code_hash", "params_hash", "module_files", "callable_modules"]

PACKAGE_ROOT = Path(__file__).resolve().parent


def _psybench_source(name: str) -> Path | None:
    """psybench's own module or package ``__init__.py`` for a dotted name, found without importing.

    ``importlib.util.find_spec("a.b.c")`` imports ``a.b`` first: hashing
    ``psybench.motion.criteria.directions`` would import the criteria, the fits and
    SciPy while the Snakefile is parsed, on every run (issue 15).
    """
    parts = name.split(".")
    if parts[0] != PACKAGE_ROOT.name:
        return None
    base = PACKAGE_ROOT.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def module_files(modules: Iterable[str]) -> list[Path]:
    """Source files of dotted module or package names (packages: every ``*.py`` below)."""
    files: set[Path] = set()
    for name in modules:
        own = _psybench_source(name) if name != PACKAGE_ROOT.name else PACKAGE_ROOT / "__init__.py"
        if own is not None:
            files.update(own.parent.rglob("*.py") if own.name == "__init__.py" else [own])
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"cannot locate module {name!r} to hash its code")
        origin = Path(spec.origin)
        if origin.name == "__init__.py" and spec.submodule_search_locations:
            files.update(origin.parent.rglob("*.py"))
        else:
            files.add(origin)
    return sorted(files)


def _imports(tree: ast.Module, package: str) -> list[str]:
    """Absolute names a module's ``import`` statements may load (``from a import b``: ``a`` and ``a.b``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            names += [base] + [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    return names


def _spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a parent that is a module, not a package; a bad name
        return None


def callable_modules(module: str) -> list[str]:
    """The modules whose source a user callable's results depend on: its own and its package's.

    For a module outside psybench (a user's ``package.module:function``), the module,
    its parent packages' ``__init__`` and, transitively, every module of the same
    top-level package that it imports (found statically from ``import`` and
    ``from ... import`` statements, relative ones included, without executing
    anything). Editing a helper module the callable imports thus changes its code
    hash (and its cache key) like editing the callable's own module. Third-party
    imports are left out: they are the software environment, not the model. A
    psybench module is returned alone: psybench's stages are hashed by the rules.

    Parameters
    ----------
    module : str
        Dotted module name of the callable (``func.__module__``).

    Returns
    -------
    list of str
        Sorted dotted module names, ``module`` included (a package as
        ``package.__init__``: its own file, for :func:`code_hash`).
    """
    top = module.partition(".")[0]
    if top == PACKAGE_ROOT.name:
        return [module]
    seen: set[str] = set()
    found: list[str] = []
    stack = [module]
    while stack:
        name = stack.pop()
        spec = None if name in seen else _spec(name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        seen.add(name)
        is_package = spec.submodule_search_locations is not None
        found.append(f"{name}.__init__" if is_package else name)  # a package's own file, not all below it
        package = name if is_package else name.rpartition(".")[0]
        parents = [name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)]
        try:
            tree = ast.parse(Path(spec.origin).read_bytes(), filename=spec.origin)
        except SyntaxError as exc:
            raise ValueError(f"cannot parse {spec.origin} to hash the code of {module!r}: {exc}") from None
        stack += [n for n in parents + _imports(tree, package) if n == top or n.startswith(top + ".")]
    return sorted(found)


def code_hash(modules: Iterable[str]) -> str:
    """SHA-256 (16 hex digits) of the source of ``modules``, independent of paths and mtimes."""
    h = hashlib.sha256()
    for f in module_files(modules):
        try:
            rel = f.relative_to(PACKAGE_ROOT.parent)
        except ValueError:
            rel = Path(f.name)
        h.update(str(rel).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def params_hash(params: Any) -> str:
    """SHA-256 (16 hex digits) of JSON-serialisable parameters, key order independent."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
