"""Spark jobs shipped with airflow-partitions, runnable with ``spark-submit``.

``job_path("count_rows")`` is the file to pass as a ``SparkSubmitOperator`` ``application``.
"""

from __future__ import annotations

from pathlib import Path


def job_path(name: str) -> str:
    """The absolute path of a bundled job (``count_rows`` -> ``.../jobs/count_rows.py``)."""
    path = Path(__file__).with_name(f"{name}.py")
    if not path.is_file() or name.startswith("_"):
        raise ValueError(f"no bundled Spark job named {name!r}")
    return str(path)


__all__ = ["job_path"]
