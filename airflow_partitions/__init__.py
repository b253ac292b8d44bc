"""Partition-aware orchestration of Spark pipelines for Apache Airflow 3.

This module must stay free of ``airflow`` imports: Airflow loads the provider entry point while
it is still configuring itself (see docs/airflow.md).
"""

__version__ = "0.1.0"
