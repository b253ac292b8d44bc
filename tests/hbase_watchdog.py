"""Stops the test run's HBase if the pytest process that started it dies without stopping it
(killed, or a crash): ``python -m tests.hbase_watchdog PID ROOT``.

pytest stops its HBase in ``pytest_unconfigure``; a SIGKILLed run never gets there, and two
JVMs would go on holding 1.3 GB. Checking once a second costs nothing measurable.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from airflow_partitions.demo.hbase import runner
from airflow_partitions.demo.hbase.site import HBaseLayout


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str]) -> int:
    pid, root = int(argv[0]), Path(argv[1])
    while alive(pid) and root.exists():
        time.sleep(1.0)
    if root.exists():
        runner.stop(HBaseLayout(root), grace=5)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
