"""The ``airflow-partitions`` command (grows with the catalog issue)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    from airflow_partitions.demo import main as demo_main

    return demo_main(argv if argv is not None else sys.argv[1:])
