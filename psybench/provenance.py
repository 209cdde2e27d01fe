"""Deterministic hashes of code and parameters, for store attributes and reruns.

Snakemake only notices edits to a rule's own script, not to the library modules
it imports (Snakemake documentation, "rerun triggers"). Each rule therefore carries a
``params`` value from :func:`rule_code_hash`: its script and every psybench module
that the script's imports reach, found statically (:func:`callable_modules` does the
same for a model's module). Editing a module reruns the rules whose jobs may run it,
and nothing else; no module list is kept by hand.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["code_hash", "rule_code_hash", "script_modules", "params_hash", "module_files", "callable_modules"]

PACKAGE_ROOT = Path(__file__).resolve().parent


def _psybench_source(name: str) -> Path | None:
    """psybench's own module or package ``__init__.py`` for a dotted name, found without importing.

    ``importlib.util.find_spec("a.b.c")`` imports ``a.b`` first: hashing
    ``psybench.motion.criteria.directions`` would import the criteria, the fits and
    SciPy while the Snakefile is parsed, on every run.
    """
    parts = name.split(".")
    if parts[0] != PACKAGE_ROOT.name:
        return None
    if parts[-1] == "__init__":  # a package's own file (as callable_modules names it)
        parts = parts[:-1]
    base = PACKAGE_ROOT.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def module_files(modules: Iterable[str | Path]) -> list[Path]:
    """Source files of dotted module or package names (packages: every ``*.py`` below) and of paths.

    A name ending in ``.__init__`` is the package's own file alone; a
    :class:`~pathlib.Path` is taken as it is (a script, a template).
    """
    files: set[Path] = set()
    for name in modules:
        if isinstance(name, Path):
            if not name.is_file():
                raise ValueError(f"cannot find {name} to hash its code")
            files.add(name.resolve())
            continue
        own = _psybench_source(name) if name != PACKAGE_ROOT.name else PACKAGE_ROOT / "__init__.py"
        if own is not None:
            whole = own.name == "__init__.py" and not name.endswith(".__init__")
            files.update(own.parent.rglob("*.py") if whole else [own])
            continue
        spec = _spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"cannot locate module {name!r} to hash its code")
        origin = Path(spec.origin)
        if origin.name == "__init__.py" and spec.submodule_search_locations:
            files.update(origin.parent.rglob("*.py"))
        else:
            files.add(origin)
    return sorted(files)


class _Imports(NamedTuple):
    """What one source file's ``import`` statements name, as absolute dotted names."""

    top: tuple[tuple[str, tuple[str, ...]], ...]  # run on import: (module, names taken from it)
    nested: tuple[tuple[str, tuple[str, ...]], ...]  # inside functions: run when called (all, but for a package)
    lazy: dict[str, str]  # a package's exports loaded on first use (psybench._lazy): name -> module


def _lazy_exports(tree: ast.Module) -> dict[str, str]:
    """``{name: module}`` of the dict literals of a module that calls ``lazy_exports``.

    Keys and values are string constants (``"module"`` or ``"module:attribute"``), or
    ``**dict.fromkeys([names], "module")``.
    """
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "lazy_exports"]
    if not calls:
        return {}
    exports: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if key is None and isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "fromkeys":
                names, module = (value.args + [None, None])[:2]
                if isinstance(names, (ast.List, ast.Tuple)) and isinstance(module, ast.Constant):
                    exports.update(dict.fromkeys([n.value for n in names.elts if isinstance(n, ast.Constant)],
                                                 module.value))
            elif isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                exports[key.value] = value.value.partition(":")[0]
    return exports


# An import statement (a parenthesised name list may span lines), its indentation first.
_IMPORT_STATEMENT = re.compile(
    rb"^([ \t]*)(from[ \t]+[.\w]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)", re.MULTILINE
)
def _record(node: ast.stmt, package: str, found: list[tuple[str, tuple[str, ...]]]) -> None:
    if isinstance(node, ast.Import):
        found += [(a.name, ()) for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{base}.{node.module}" if node.module else base
        else:
            base = node.module or ""
        found.append((base, tuple(a.name for a in node.names if a.name != "*")))


def _parse_imports_fully(source: bytes, path: Path, package: str) -> _Imports:
    """:func:`_parse_imports` by a walk of the module's whole syntax tree."""
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise ValueError(f"cannot parse {path} to hash its code: {exc}") from None
    top: list[tuple[str, tuple[str, ...]]] = []
    nested: list[tuple[str, tuple[str, ...]]] = []

    def visit(statements: list[ast.AST], inside: bool) -> None:
        for node in statements:
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                continue  # read by type checkers only: never run
            _record(node, package, nested if inside else top)
            inner = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                visit(getattr(node, field, None) or [], inner)

    visit(tree.body, False)
    return _Imports(tuple(top), tuple(nested), _lazy_exports(tree) if b"lazy_exports" in source else {})


def _parse_imports(path: Path, package: str) -> _Imports:
    """The ``import`` and ``from ... import`` statements of ``path`` (relative ones made absolute).

    A package's ``__init__`` is parsed whole: whether an import runs on import or only
    in a function matters for a parent package (:func:`_closure`). Any other module's
    imports are all followed, so each statement is found by a text scan and parsed
    alone (``ast``): the Snakefile is parsed on every run, the no-op rerun included, and
    parsing every module whole took most of the closure's time. A file
    whose imports a line scan may miss (a backslash continuation, a statement after
    ``:`` or ``;``, a parenthesis in a comment of a name list) is parsed whole too.
    """
    source = path.read_bytes()
    lazy = b"= lazy_exports(" in source
    if path.name == "__init__.py" or lazy or re.search(rb"\\\n|[:;][ \t]*(?:import|from)[ \t]", source):
        return _parse_imports_fully(source, path, package)
    found: list[tuple[str, tuple[str, ...]]] = []
    for match in _IMPORT_STATEMENT.finditer(source):
        try:
            statements = ast.parse(match.group(2)).body
        except SyntaxError:  # prose that starts like an import (in a docstring), or a ")" in a comment
            if b"(" in match.group(2):
                return _parse_imports_fully(source, path, package)
            continue
        for statement in statements:
            _record(statement, package, found)
    return _Imports((), tuple(found), {})


# Per process (the Snakefile calls for the same files many times), keyed by a file's
# version; a file modified in the last seconds is read again (its mtime may not yet
# tell two versions apart: the "racily clean" entries of Git's index).
_PARSED: dict[tuple[Path, int, int, str], _Imports] = {}
_DIGESTS: dict[tuple[Path, int, int], bytes] = {}
_SETTLED_NS = 2_000_000_000


def _version(path: Path) -> tuple[Path, int, int] | None:
    """(path, mtime, size) of a file modified long enough ago to be cached by them, else None."""
    st = path.stat()
    return (path, st.st_mtime_ns, st.st_size) if time.time_ns() - st.st_mtime_ns > _SETTLED_NS else None


def _imports_of(path: Path, package: str) -> _Imports:
    """:func:`_parse_imports`, once per process and file version."""
    version = _version(path)
    if version is None:
        return _parse_imports(path, package)
    key = (*version, package)
    if key not in _PARSED:
        _PARSED[key] = _parse_imports(path, package)
    return _PARSED[key]


def _digest(path: Path) -> bytes:
    """SHA-256 of a file's bytes, once per process and file version."""
    version = _version(path)
    if version is None:
        return hashlib.sha256(path.read_bytes()).digest()
    if version not in _DIGESTS:
        _DIGESTS[version] = hashlib.sha256(path.read_bytes()).digest()
    return _DIGESTS[version]


def _spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):  # a parent that is a module, not a package; a bad name
        return None


def _locate_module(name: str, top: str) -> tuple[Path, bool] | None:
    """(source file, is a package) of a module of the top-level package ``top``, or None."""
    if not (name == top or name.startswith(top + ".")):
        return None
    if top == PACKAGE_ROOT.name:
        path = _psybench_source(name)
        return None if path is None else (path, path.name == "__init__.py")
    spec = _spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin), spec.submodule_search_locations is not None


def _closure(entries: Iterable[str], top: str, scripts: Iterable[Path] = ()) -> dict[str, Path]:
    """Every module of package ``top`` that importing ``entries`` (and running ``scripts``) may load.

    A module named by an ``import`` is followed through all its own imports, those
    inside its functions included; a parent package that is only imported on the way
    to one of its modules, through the imports its ``__init__`` runs (not those of its
    functions: ``psybench.__getattr__`` imports the whole API only when asked).
    ``from package import name`` follows the submodule ``name``, or the module a lazy
    export ``name`` comes from (:mod:`psybench._lazy`), else the package itself; so
    does ``from module import name`` of a module with lazy exports (a track's
    ``pipeline``: its top-level imports, and only the named stage's module).
    """
    found: dict[str, Path] = {}
    done: set[tuple[str, bool]] = set()
    stack: list[tuple[str, bool]] = [(e, True) for e in entries]
    located: dict[str, tuple[Path, bool] | None] = {}

    def _locate(name: str, top: str) -> tuple[Path, bool] | None:  # once per name and closure
        if name not in located:
            located[name] = _locate_module(name, top)
        return located[name]

    def follow(imports: Iterable[tuple[str, tuple[str, ...]]]) -> None:
        for base, names in imports:
            where = _locate(base, top)
            if where is None:
                continue
            lazy = _imports_of(where[0], base if where[1] else base.rpartition(".")[0]).lazy
            if not names:  # import a.b.c: a.b.c as a whole (its lazy exports too), its parents on the way
                stack.append((base, True))
                stack.extend((m, True) for m in set(lazy.values()))
                continue
            whole = False
            for n in names:
                if where[1] and _locate(f"{base}.{n}", top) is not None:
                    stack.append((f"{base}.{n}", True))
                elif n in lazy:
                    stack.append((lazy[n], True))
                else:
                    whole = True
            stack.append((base, whole))

    for script in scripts:
        imports = _imports_of(script, "")
        follow(imports.top + imports.nested)
    while stack:
        name, whole = stack.pop()
        if (name, whole) in done or (name, True) in done:
            continue
        where = _locate(name, top)
        if where is None:
            continue
        done.add((name, whole))
        path, is_package = where
        found[f"{name}.__init__" if is_package else name] = path
        stack.extend((name.rsplit(".", k)[0], False) for k in range(1, name.count(".") + 1))
        imports = _imports_of(path, name if is_package else name.rpartition(".")[0])
        follow(imports.top + imports.nested if whole else imports.top)
        if whole and not is_package:  # a module's lazy exports (a track's pipeline) are all it may run
            stack.extend((m, True) for m in set(imports.lazy.values()))
    return found


def callable_modules(module: str) -> list[str]:
    """The modules whose source a callable's results depend on: its own and those it imports.

    The module, its parent packages' ``__init__`` and, transitively, every module of
    the same top-level package that it imports (found statically from ``import`` and
    ``from ... import`` statements, relative ones and those inside functions included,
    without executing anything). Editing a helper module the callable imports thus
    changes its code hash (and its cache key) like editing the callable's own module.
    Third-party imports are left out: they are the software environment (pinned
    versions), not the model. For a user's ``package.module:function`` that is the
    user's package; for a psybench model, psybench's own modules.

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
    return sorted(_closure([module], module.partition(".")[0]))


def rule_code_hash(script: str | Path, *, modules: Iterable[str] = (), files: Iterable[str | Path] = ()) -> str:
    """The code hash of a workflow rule: its script and every psybench module that it may run.

    The script's imports are followed through psybench as in
    :func:`callable_modules` (psybench modules only: third-party code is covered by
    pinned versions), so a rule's hash changes with any module its job imports and
    with no other: editing a motion-only module reruns no attention job.

    Parameters
    ----------
    script : str or Path
        The rule's script (``scripts/<rule>.py``).
    modules : iterable of str
        Further entry modules of the job that the script does not import by name: a
        model's module (``func.__module__``, a user's included), resolved at run time.
    files : iterable of str or Path
        Non-Python inputs of the code, e.g. page templates.

    Returns
    -------
    str
        :func:`code_hash` of the script, the modules it may load and ``files``.
    """
    script = Path(script)
    extra = [name for m in modules for name in callable_modules(m)]
    return code_hash([script, *script_modules(script), *extra, *map(Path, files)])


def script_modules(script: str | Path) -> list[str]:
    """The psybench modules that running ``script`` may load, found statically (see :func:`callable_modules`).

    Returns
    -------
    list of str
        Sorted dotted module names (a package as ``package.__init__``).
    """
    script = Path(script)
    if not script.is_file():
        raise ValueError(f"cannot find the rule script {script} to hash its code")
    return sorted(_closure([], PACKAGE_ROOT.name, scripts=[script]))


def code_hash(modules: Iterable[str | Path]) -> str:
    """SHA-256 (16 hex digits) of the source of ``modules`` (see :func:`module_files`), independent of mtimes.

    Each file enters with its path relative to psybench's parent folder (its name
    alone outside it), so moving code between files changes the hash.
    """
    h = hashlib.sha256()
    for f in module_files(modules):
        try:
            rel = f.relative_to(PACKAGE_ROOT.parent)
        except ValueError:
            rel = Path(f.name)
        h.update(str(rel).encode())
        h.update(b"\0")
        h.update(_digest(f))
    return h.hexdigest()[:16]


def params_hash(params: Any) -> str:
    """SHA-256 (16 hex digits) of JSON-serialisable parameters, key order independent."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
