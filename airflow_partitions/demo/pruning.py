"""Settings of the dynamic partition pruning example (dags_examples/events_by_region_pruned.py).

A separate fact, ``events_regional``, keeps the main events pipeline undisturbed. Its storage
``events_by_region`` (HOURLY) is partitioned by (dt, region): one directory per hour and
region, eight regions (:data:`airflow_partitions.spark.synthetic.REGIONS`). The small
dimension ``regions_of_interest`` (Parquet) selects two of them, so the pruned join reads a
quarter of the partitions.
"""

from __future__ import annotations

from typing import Any, Final

from airflow_partitions.catalog import Catalog
from airflow_partitions.defaults import default_data_root
from airflow_partitions.demo.events import SPARK_CONF
from airflow_partitions.spark import REGIONS

FACT: Final = "events_regional"
STORAGE: Final = "events_by_region"
DATA_ROOT = default_data_root()
LOCATION = f"{DATA_ROOT}/{FACT}/{STORAGE}/HOURLY/dt={{dt}}/region={{region}}"
DIMENSION = f"{DATA_ROOT}/dims/regions_of_interest"
REPORTS = f"{DATA_ROOT}/reports"
REGIONS_OF_INTEREST: Final = ("us-east", "eu-west")
ALL_REGIONS: Final = REGIONS

#: The join of the job: events INNER JOIN regions_of_interest ON region, events on the left.
JOINS: Final[list[dict[str, Any]]] = [
    {"small": "regions_of_interest", "on": {"region": "region"}, "how": "inner",
     "big_side": "left"},
]
SMALL_TABLES: Final[dict[str, Any]] = {
    "regions_of_interest": {"source": DIMENSION, "format": "parquet"},
}
PRUNING_SPARK_CONF = dict(SPARK_CONF)


def ensure_catalog(catalog: Catalog, location: str = LOCATION) -> None:
    """Create the fact and its (dt, region) storage if absent (safe to call every run)."""
    catalog.create_fact(FACT, time_columns=["dt"], tz="UTC", exist_ok=True)
    catalog.create_storage(FACT, STORAGE, ["HOURLY"], columns=["dt", "region"],
                           location=location, exist_ok=True)
