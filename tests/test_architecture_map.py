"""The map in ``docs/architecture.md`` stays true: it names every shipped module, and every
path it names exists. A new module that the map does not name fails here, with its path."""

from __future__ import annotations

import re

from tests.helpers import ROOT

PACKAGE = ROOT / "airflow_partitions"
MAP = ROOT / "docs" / "architecture.md"
#: A path in backticks: ``catalog/rows/layout.py``, ``tests/catalog/``, ``benchmarks/x.py``.
NAMED_PATH = re.compile(r"`([A-Za-z0-9_.]+(?:/[A-Za-z0-9_.]+)*/?)`")


def shipped_modules() -> list[str]:
    """Every module of the package but its ``__init__`` files, as a path under the package."""
    return sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                  if p.name != "__init__.py" and "__pycache__" not in p.parts)


def named_paths(text: str) -> set[str]:
    return {m for m in NAMED_PATH.findall(text) if "/" in m or m.endswith(".py")}


def test_the_map_names_every_shipped_module() -> None:
    named = named_paths(MAP.read_text())
    missing = [m for m in shipped_modules() if m not in named]
    assert not missing, (
        "docs/architecture.md does not name these modules (add each to its room's table in "
        "the module index, full path in backticks): " + ", ".join(missing))


def test_every_path_the_map_names_exists() -> None:
    stale = []
    for path in sorted(named_paths(MAP.read_text())):
        if "/" not in path or path.startswith(("http", "../", ".")) or "*" in path:
            continue  # a URL, a path outside the repository, a runtime directory, a pattern
        if not any((base / path).exists() for base in (PACKAGE, ROOT)):
            stale.append(path)
    assert not stale, "docs/architecture.md names paths that do not exist: " + ", ".join(stale)


def test_the_checks_bite() -> None:
    assert "catalog/writer.py" in shipped_modules()
    assert "x/y.py" in named_paths("a `x/y.py` b `z` c")
    assert "z" not in named_paths("a `x/y.py` b `z` c")


#: A path into the repository in any doc: ``airflow_partitions/catalog/writer.py``,
#: ``tests/hooks/test_stats.py::test_x``, ``benchmarks/poke.py``.
REPO_PATH = re.compile(
    r"\b((?:airflow_partitions|tests|benchmarks|dags_examples|docs)/[A-Za-z0-9_/.]+\.(?:py|md))")


def test_every_repository_path_the_docs_name_exists() -> None:
    stale = []
    for doc in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            stale += [f"{doc.name}:{number}: {path}" for path in REPO_PATH.findall(line)
                      if not (ROOT / path).exists()]
    assert not stale, "docs name files that do not exist: " + ", ".join(stale)
