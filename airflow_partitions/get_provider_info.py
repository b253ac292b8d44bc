"""Provider metadata for Airflow's ``apache_airflow_provider`` entry point.

No ``airflow`` import here: Airflow calls this while its configuration is still loading.
"""

from __future__ import annotations

from typing import Any

from airflow_partitions import __version__


def get_provider_info() -> dict[str, Any]:
    """Return the provider info dict that ``airflow providers list`` reads."""
    return {
        "package-name": "airflow-partitions",
        "name": "Airflow Partitions",
        "description": (
            "Partition catalog, partition timelines and exact time-range covers for "
            "partition-aware Spark pipelines."
        ),
        "versions": [__version__],
    }
