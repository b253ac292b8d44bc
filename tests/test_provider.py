"""Provider registration: Airflow must discover us without our package importing airflow."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from airflow_partitions.get_provider_info import get_provider_info


def test_provider_info_names_the_canonical_distribution() -> None:
    info = get_provider_info()
    assert info["package-name"] == "airflow-partitions"
    assert info["versions"] and info["name"]


def test_entry_point_is_declared() -> None:
    eps = entry_points(group="apache_airflow_provider")
    targets = {ep.value for ep in eps}
    assert "airflow_partitions.get_provider_info:get_provider_info" in targets


def test_provider_module_does_not_import_airflow() -> None:
    code = (
        "import sys, airflow_partitions.get_provider_info as m; m.get_provider_info(); "
        "print(any(n == 'airflow' or n.startswith('airflow.') for n in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
