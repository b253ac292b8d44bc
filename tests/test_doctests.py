"""The doctests in the package's docstrings are examples a reader trusts: run them."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import airflow_partitions

# Modules that run something on import (``python -m`` entry points) are not scanned.
SKIP = ("__main__", ".demo.")
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(airflow_partitions.__path__, "airflow_partitions.")
    if not any(part in m.name for part in SKIP)
)


def _with_examples(name: str) -> bool:
    finder = doctest.DocTestFinder()
    return any(t.examples for t in finder.find(importlib.import_module(name)))


@pytest.mark.parametrize("name", [m for m in MODULES if _with_examples(m)])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
