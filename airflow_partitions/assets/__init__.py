"""Coverage assets in Airflow: :func:`CoverageAsset`, the follower, the in-task announcer.

Imported by module like the rest of the Airflow layer; this ``__init__`` exports only
``CoverageAsset``, which DAG files import as ``from airflow_partitions.assets import
CoverageAsset``.
"""

from airflow_partitions.assets.coverage_asset import CoverageAsset

__all__ = ["CoverageAsset"]
