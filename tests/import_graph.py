"""The package's module import graph, read with ``ast``: what the no-cycles test checks.

An edge ``a -> b`` is an import of module ``b`` (or of a name from it) anywhere at module or
class level of ``a``, ``TYPE_CHECKING`` blocks included: a type-only import still ties the two
modules together. Imports inside functions are left out (the project's lazy imports of
optional dependencies).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from pathlib import Path


def module_graph(package: Path) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports."""
    files = {_name(package, p): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        found: set[str] = set()
        for base, names in _imports(ast.parse(path.read_text()).body, name,
                                    path.name == "__init__.py"):
            for imported in names:  # a submodule, else a name the module ``base`` defines
                target = f"{base}.{imported}" if f"{base}.{imported}" in files else base
                if target in files:
                    found.add(target)
        found.discard(name)
        graph[name] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _name(package: Path, path: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` in ``module`` names (relative ones resolved;
    ``is_package``: ``module`` is a package's ``__init__``)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _imports(body: Iterable[ast.stmt], module: str, is_package: bool
             ) -> Iterable[tuple[str, list[str]]]:
    """(module, names imported from it) for each import; ``import a.b`` is ("a.b", [])."""
    for node in body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.rpartition(".")[0] or alias.name, [alias.name.rpartition(".")[2]]
        elif isinstance(node, ast.ImportFrom):
            yield import_base(node, module, is_package), [alias.name for alias in node.names]
        elif isinstance(node, ast.ClassDef):
            yield from _imports(node.body, module, is_package)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            yield from _imports(node.body, module, is_package)
            yield from _imports(getattr(node, "orelse", []), module, is_package)
            for handler in getattr(node, "handlers", []):
                yield from _imports(handler.body, module, is_package)


def private_reaches(package: Path, trees: Iterable[Path]) -> list[str]:
    """Places that use another module's private name: ``from m import _x`` or ``m._x`` where
    ``m`` is one of the package's modules (or the tests' own helpers)."""
    modules = {_name(package, p) for p in package.rglob("*.py")}
    out = []
    for _root, path, tree in _sources(trees):
        aliases: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module.split(".")[0] in (package.name, "tests"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        out.append(f"{path.name}: from {node.module} import {alias.name}")
                    if f"{node.module}.{alias.name}" in modules:
                        aliases.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                aliases.update(a.asname for a in node.names
                               if a.asname and a.name in modules)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                out.append(f"{path.name}: {node.value.id}.{node.attr}")
    return sorted(out)


def internal_reaches(package: Path, trees: Iterable[Path], rooms: Iterable[str]) -> list[str]:
    """Imports of a room's modules from outside it: ``from
    airflow_partitions.catalog.definitions.tables import StorageDef``, ``from
    airflow_partitions.catalog import writer`` (a module), ``import
    airflow_partitions.catalog.rows.layout``, at any depth (function-level imports too). Inside the
    room's own folder, and its tests' folder (``tests/catalog/`` for ``catalog``), a module may
    import its siblings; everyone else imports what the room's ``__init__`` exports."""
    modules = {_name(package, p) for p in package.rglob("*.py")}
    homes = {f"{package.name}.{room}": {package / room, package.parent / "tests" / room}
             for room in rooms}
    exported = {home: _all(package / home.split(".")[-1] / "__init__.py") for home in homes}
    out = []
    for root, path, tree in _sources(trees):
        outside = [home for home, folders in homes.items() if not folders & set(path.parents)]
        for node in ast.walk(tree):
            reached: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                reached += [f"{node.module}.{a.name}" for a in node.names  # a module by name,
                            if f"{node.module}.{a.name}" in modules  # unless the package
                            and a.name not in exported.get(node.module, ())]  # exports it
                reached.append(node.module)
            elif isinstance(node, ast.Import):
                reached += [a.name for a in node.names]
            out += [f"{path.relative_to(root.parent)}:{node.lineno}: {name}"
                    for name in reached for home in outside if name.startswith(f"{home}.")]
    return sorted(out)


def _all(init: Path) -> set[str]:
    """The names a package's ``__init__`` lists in ``__all__`` (a function there may share a
    submodule's name: ``planning.plan``)."""
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {e.value for e in ast.walk(node.value)
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def python_files(root: Path) -> list[Path]:
    """Every Python file below ``root``, sorted, not descending into hidden folders (the
    peers' virtual environments under ``benchmarks/.peers``: walking them alone took a minute)
    or ``__pycache__``."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        found += [Path(folder, f) for f in files if f.endswith(".py")]
    return sorted(found)


def _sources(trees: Iterable[Path]) -> Iterable[tuple[Path, Path, ast.Module]]:
    """(tree, file, its syntax) for every Python file below ``trees``."""
    for root in trees:
        for path in python_files(root):
            yield root, path, ast.parse(path.read_text())
