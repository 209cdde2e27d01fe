"""Deterministic hashes of code and parameters, for store attributes and reruns.

Snakemake only notices edits to a rule's own script, not to the library modules
it imports (Snakemake documentation, "rerun triggers"). Each rule therefore carries a ``params``
value from :func:`code_hash` over the psybench modules of its stage, so editing
one stage's code reruns that stage and what depends on it, and nothing else.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["code_hash", "params_hash", "module_files"]

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
