"""Public signatures that say ``Any``, read with ``ast``: what the no-``Any`` test checks.

A signature is public when its function or method name does not start with ``_`` (``__init__``
counts) and every class around it is public too; its argument and return annotations count, and
so do the annotated fields of a public class (a dataclass's, a ``TypedDict``'s, a
``NamedTuple``'s: they are its constructor's signature). An annotation says ``Any`` when it
names ``Any`` (or ``typing.Any``), in a string annotation too, or names a module-level alias
whose value does: one of its own module's, or one it imports from another module of the
package (``JsonDict = dict[str, Any]`` counts wherever it is used).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from tests.import_graph import import_base


def any_signatures(package: Path, folders: Iterable[Path]) -> list[str]:
    """``path: Qualified.name`` for each public signature under ``folders`` (a folder, or a
    single ``.py`` module) that says ``Any`` (paths relative to the package's parent, so
    ``airflow_partitions/kv/hbase.py``)."""
    trees = {_module(package, p): (p, ast.parse(p.read_text())) for p in package.rglob("*.py")}
    aliases = _any_aliases(trees)
    out = []
    for folder in folders:
        for path in [folder] if folder.suffix == ".py" else sorted(folder.rglob("*.py")):
            name = _module(package, path)
            tainted = aliases[name]
            for qualname, signature in _public_signatures(trees[name][1].body, ""):
                if any(_says_any(a, tainted) for a in signature):
                    out.append(f"{path.relative_to(package.parent)}: {qualname}")
    return out


def _module(package: Path, path: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _public_signatures(body: Iterable[ast.stmt], prefix: str
                       ) -> Iterator[tuple[str, list[ast.expr | None]]]:
    """(qualified name, its annotations) for the public functions and class fields in ``body``."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not node.name.startswith("_") or node.name == "__init__":
                args = node.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                         args.kwarg]
                yield (prefix + node.name,
                       [a.annotation for a in every if a is not None] + [node.returns])
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for field in node.body:
                if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
                    yield f"{prefix}{node.name}.{field.target.id}", [field.annotation]
            yield from _public_signatures(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.If, ast.Try)):
            yield from _public_signatures([*node.body, *node.orelse], prefix)


def _says_any(annotation: ast.expr | None, tainted: set[str]) -> bool:
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and (node.id == "Any" or node.id in tainted):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                continue
            if _says_any(parsed, tainted):
                return True
    return False


def _any_aliases(trees: dict[str, tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """Module -> the names in it (its own aliases, or imported ones) that stand for ``Any``."""
    aliases: dict[str, set[str]] = {name: set() for name in trees}
    changed = True
    while changed:  # to a fixed point: an alias may be built on one imported from elsewhere
        changed = False
        for name, (path, tree) in trees.items():
            found = aliases[name]
            for node in tree.body:
                for target, value in _definitions(node, name, path.name == "__init__.py"):
                    if target in found:
                        continue
                    if isinstance(value, str):  # imported: (module, name) as "module:name"
                        module, _, imported = value.partition(":")
                        if imported in aliases.get(module, ()):
                            found.add(target)
                            changed = True
                    elif _says_any(value, found):
                        found.add(target)
                        changed = True
    return aliases


def _definitions(node: ast.stmt, module: str, is_package: bool
                 ) -> Iterator[tuple[str, ast.expr | str]]:
    """(name, the type expression it is bound to, or "module:name" it is imported from)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name):
        yield node.targets[0].id, node.value
    elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
          and node.value is not None and "TypeAlias" in ast.unparse(node.annotation)):
        yield node.target.id, node.value
    elif isinstance(node, ast.ImportFrom):
        base = import_base(node, module, is_package)
        for alias in node.names:
            yield alias.asname or alias.name, f"{base}:{alias.name}"
    elif isinstance(node, ast.If):  # TYPE_CHECKING blocks
        for inner in [*node.body, *node.orelse]:
            yield from _definitions(inner, module, is_package)
