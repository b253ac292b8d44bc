"""The contract with Airflow's private backfill functions (backfill/airflow_private.py).

An Airflow upgrade that renames them, drops a keyword we pass, or adds a required one fails
here, naming it, instead of a backfill at run time.
"""

from __future__ import annotations

import inspect

import pytest

from airflow_partitions.backfill.airflow_private import (
    CREATE_KEYWORDS,
    DRY_RUN_KEYWORDS,
    private_functions,
)


@pytest.mark.parametrize(("name", "passed"), [("_create_backfill", CREATE_KEYWORDS),
                                              ("_do_dry_run", DRY_RUN_KEYWORDS)])
def test_the_private_functions_take_exactly_what_we_pass(name: str,
                                                         passed: tuple[str, ...]) -> None:
    function = private_functions()[name]
    parameters = inspect.signature(function).parameters
    unknown = [k for k in passed if k not in parameters]
    assert not unknown, f"airflow.models.backfill.{name} no longer takes {unknown}"
    required = [p.name for p in parameters.values()
                if p.default is inspect.Parameter.empty
                and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    missing = [k for k in required if k not in passed]
    assert not missing, f"airflow.models.backfill.{name} now requires {missing}"


def test_the_dry_run_yields_run_infos_with_a_logical_date() -> None:
    """dry_run_dates reads ``logical_date`` off the ``DagRunInfo`` values ``_do_dry_run``
    yields (a property of Airflow's named tuple, computed from the data interval)."""
    from airflow.timetables.base import DagRunInfo

    returns = str(inspect.signature(private_functions()["_do_dry_run"]).return_annotation)
    assert "DagRunInfo" in returns, f"_do_dry_run now yields {returns}"
    assert isinstance(inspect.getattr_static(DagRunInfo, "logical_date"), property)
