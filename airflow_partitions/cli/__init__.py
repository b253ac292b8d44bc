"""The ``airflow-partitions`` command: :mod:`.main` is the entry point, one module per group."""

from airflow_partitions.cli.entry_point import airflow_connection_url, main, resolve_store_url

__all__ = ["airflow_connection_url", "main", "resolve_store_url"]
