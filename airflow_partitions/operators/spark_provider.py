"""The Spark provider's private parts we rely on, behind one adapter.

Why: ``SparkSubmitOperator`` builds its ``SparkSubmitHook`` once, from the arguments it has
when ``execute`` starts, and keeps it in the private attribute ``_hook``; ``_get_hook`` builds
one. Our operators change the arguments during ``execute`` (the manifest argument, the
collect job's arguments), so they must make the operator build the hook again, and build one
for another set of arguments. This module is the only place that names those private parts;
``tests/operators/test_spark_provider.py`` checks them against the installed provider, so an
upgrade that changes them fails one test that says which. pyproject.toml pins the provider
below its next major version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

#: The private attribute ``SparkSubmitOperator.execute`` keeps its hook in, built when None.
HOOK_ATTRIBUTE = "_hook"
#: The private method that builds a hook from the operator's current arguments.
HOOK_BUILDER = "_get_hook"


def rebuild_hook_on_execute(operator: SparkSubmitOperator) -> None:
    """Forget the operator's hook, so ``execute`` builds it from the current arguments."""
    setattr(operator, HOOK_ATTRIBUTE, None)


def build_hook(operator: SparkSubmitOperator) -> SparkSubmitHook:
    """A hook built from the operator's current arguments (connection, conf, binary...)."""
    hook: SparkSubmitHook = getattr(operator, HOOK_BUILDER)()
    return hook


__all__ = ["HOOK_ATTRIBUTE", "HOOK_BUILDER", "build_hook", "rebuild_hook_on_execute"]
