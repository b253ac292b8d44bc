"""Test seam: hold every task that reads a manifest's partitions until a release file appears.

``spark.airflow_partitions.test.hold_tasks=<folder>`` (a spark conf only the cluster test
sets) makes ``events_aggregate`` pass its rows through :func:`held`: each task attempt writes
``<folder>/held-<stage>-<partition>-<attempt>.json`` (its executor's working directory, log URL
and pid) and waits until ``<folder>/release`` exists, at most :data:`MAX_HOLD` s. The test then
kills one Spark worker while its executor is certainly inside a task (a task takes
milliseconds, so without a hold no outside kill lands inside one), releases the rest, and Spark
re-runs the lost task elsewhere.

What it costs when unset: one conf lookup on the driver. When set: the rows go through Python
once (``DataFrame.rdd``, then back), fine for a test's few thousand rows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

HOLD_CONF: Final = "spark.airflow_partitions.test.hold_tasks"
#: The file whose existence releases every held task (and lets later attempts through).
RELEASE: Final = "release"
#: The longest a task waits to be released before it carries on.
MAX_HOLD: Final = 600.0


def held(spark: SparkSession, frame: DataFrame, folder: str) -> DataFrame:
    """``frame`` with each of its tasks held until ``<folder>/release`` exists; same rows, in
    at least two tasks (so each of two executors can be inside one)."""
    rows = frame.rdd
    if rows.getNumPartitions() < 2:
        rows = rows.repartition(2)
    return spark.createDataFrame(rows.mapPartitions(partial(hold_task, folder)), frame.schema)


def hold_task(folder: str, rows: Iterable[Row]) -> Iterator[Row]:
    """Announce this task attempt in ``folder``, wait for the release, then pass ``rows``."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    where = Path(folder)
    name = f"held-{ctx.stageId()}-{ctx.partitionId()}-{ctx.attemptNumber()}" if ctx else \
        f"held-{os.getpid()}"
    doc = {"cwd": os.getcwd(), "log_url": os.environ.get("SPARK_LOG_URL_STDERR", ""),
           "pid": os.getpid()}
    tmp = where / f".{name}.tmp"
    tmp.write_text(json.dumps(doc))
    tmp.replace(where / f"{name}.json")  # whole, never half written
    deadline = time.monotonic() + MAX_HOLD
    while not (where / RELEASE).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    yield from rows
