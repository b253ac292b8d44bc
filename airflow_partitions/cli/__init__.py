"""The ``airflow-partitions`` command: :mod:`.entry_point` starts it; one module per group.

What other packages use of the command's parts is exported here too: the console the demo
prints with, the coverage picture, and the pieces the tests drive directly. Inside the room,
modules import each other by module path, never through this ``__init__``.
"""

from airflow_partitions.cli.base import Context
from airflow_partitions.cli.console import console_for
from airflow_partitions.cli.coverage_picture import coverage_lanes, plot_coverage
from airflow_partitions.cli.entry_point import airflow_connection_url, main, resolve_store_url
from airflow_partitions.cli.filters import (
    add_filter_arguments,
    add_filter_commands,
    filtered_partitions,
)
from airflow_partitions.cli.planning import describe

__all__ = [
    "Context",
    "add_filter_arguments",
    "add_filter_commands",
    "airflow_connection_url",
    "console_for",
    "coverage_lanes",
    "describe",
    "filtered_partitions",
    "main",
    "plot_coverage",
    "resolve_store_url",
]
