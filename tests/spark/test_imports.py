"""What importing ``airflow_partitions.spark`` costs: the standard library and the package only.

A Spark executor imports the package when it unpickles a job's function (``task_hold``), in a
Python that may hold no pyspark import yet and none of the core's dependencies (pendulum); the
Airflow layer imports it without a JVM. So its ``__init__``, and every job whose names it
exports, imports nothing else at import time.
"""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT


def test_importing_spark_loads_only_the_standard_library() -> None:
    probe = ("import sys; before = set(sys.modules); import airflow_partitions.spark\n"
             "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
             "print(sorted(m for m in new if m not in sys.stdlib_module_names"
             " and m != 'airflow_partitions' and not m.startswith('_sysconfigdata')))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
