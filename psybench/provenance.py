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


def module_files(modules: Iterable[str]) -> list[Path]:
    """Source files of dotted module or package names (packages: every ``*.py`` below)."""
    files: set[Path] = set()
    for name in modules:
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
