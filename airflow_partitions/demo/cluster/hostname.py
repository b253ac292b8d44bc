"""``[core] hostname_callable`` for workers that share a machine: the name the cluster gave.

Airflow records the host a task instance ran on (``hostname``), from ``socket.getfqdn()`` by
default, which is the same for both Celery workers of one machine. The cluster names each
worker (``AIRFLOW_PARTITIONS_HOSTNAME=worker-1``), so the UI, the REST API and the tests can
tell which worker ran a try, as they would on two hosts. Costs an environment lookup.
"""

from __future__ import annotations

import os
import socket

from airflow_partitions.catalog import HOST_ENV


def worker_hostname() -> str:
    """The cluster's name for this process's host, else the fully qualified domain name."""
    return os.environ.get(HOST_ENV) or socket.getfqdn()
