"""The ``airflow-partitions`` command: :mod:`.entry_point` starts it; one module per group."""

from airflow_partitions.cli.entry_point import airflow_connection_url, main, resolve_store_url

__all__ = ["airflow_connection_url", "main", "resolve_store_url"]
