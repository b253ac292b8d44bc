"""The contract with the Spark provider's private parts (operators/spark_provider.py)."""

from __future__ import annotations

import inspect

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from airflow_partitions.operators.spark_provider import (
    HOOK_ATTRIBUTE,
    HOOK_BUILDER,
    build_hook,
    rebuild_hook_on_execute,
)


def test_execute_builds_its_hook_from_the_attribute_we_reset() -> None:
    operator = SparkSubmitOperator(task_id="t", application="app.py", application_args=["a"])
    assert getattr(operator, HOOK_ATTRIBUTE) is None, (
        f"SparkSubmitOperator no longer starts with {HOOK_ATTRIBUTE} = None")
    source = inspect.getsource(SparkSubmitOperator.execute)
    assert f"self.{HOOK_ATTRIBUTE} is None" in source and f"self.{HOOK_BUILDER}()" in source, (
        f"SparkSubmitOperator.execute no longer builds self.{HOOK_ATTRIBUTE} with "
        f"self.{HOOK_BUILDER}() when it is None")


def test_a_rebuilt_hook_sees_the_current_arguments() -> None:
    operator = SparkSubmitOperator(task_id="t", application="app.py", application_args=["a"])
    setattr(operator, HOOK_ATTRIBUTE, build_hook(operator))
    operator.application_args = ["b"]
    rebuild_hook_on_execute(operator)
    assert getattr(operator, HOOK_ATTRIBUTE) is None
    hook = build_hook(operator)
    assert isinstance(hook, SparkSubmitHook)
    assert hook._application_args == ["b"]  # the provider's own field: the contract's subject
