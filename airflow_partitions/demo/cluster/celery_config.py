"""Airflow's Celery settings plus extended results (``[celery] celery_config_options``).

``result_extended`` makes Celery's result backend (the ``celery_taskmeta`` table in the
metadata DB) record the worker that ran each task: Celery's own record of who did what,
which survives a worker killed with ``kill -9`` (``celery inspect`` forgets it). It costs a few
columns more per task row.
"""

from __future__ import annotations

from typing import Any

from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

CELERY_CONFIG: dict[str, Any] = {**DEFAULT_CELERY_CONFIG, "result_extended": True}
