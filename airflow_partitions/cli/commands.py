"""Command groups of ``airflow-partitions``, one module each.

Each module has ``register(subparsers)``, which adds its commands and sets ``handler`` on each
leaf parser; a handler takes ``(args, Context)`` and returns the exit code. To add a command
(``cover``, ``coverage``, ``explain``, ...), write a module like these and list it in
``COMMAND_MODULES``; errors, output helpers and the store come from
:mod:`airflow_partitions.cli.base`.
"""

from __future__ import annotations

from types import ModuleType

from airflow_partitions.cli import (
    assets,
    backfill,
    cover,
    definitions,
    filters,
    metrics,
    partitions,
    planning,
    staleness,
    timelines,
)

#: In the order their commands appear in ``airflow-partitions --help``.
COMMAND_MODULES: tuple[ModuleType, ...] = (
    definitions, partitions, timelines, cover, metrics, staleness, planning, backfill,
    filters, assets,
)

__all__ = ["COMMAND_MODULES"]
