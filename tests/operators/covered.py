"""A CoveredSparkSubmitOperator for tests (``launched`` in conftest.py stands in for its
spark-submit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from tests.helpers import T0


def covered_operator(tmp_path: Path, **kwargs: Any) -> CoveredSparkSubmitOperator:
    """Three hours of ``events`` from T0 by default, manifests under ``tmp_path``."""
    args: dict[str, Any] = {"task_id": "spark", "application": "job.py", "fact": "events",
                            "start": T0, "end": T0.add(hours=3),
                            "manifest_dir": str(tmp_path / "manifests")}
    return CoveredSparkSubmitOperator(**{**args, **kwargs})

