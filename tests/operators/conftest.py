"""Fixtures of the operator tests."""

from __future__ import annotations

import pytest
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from airflow_partitions.operators.spark import CoveredSparkSubmitOperator


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[CoveredSparkSubmitOperator]:
    """Operators that reached SparkSubmitOperator.execute (nothing is really submitted)."""
    calls: list[CoveredSparkSubmitOperator] = []
    monkeypatch.setattr(SparkSubmitOperator, "execute", lambda self, context: calls.append(self))
    return calls
