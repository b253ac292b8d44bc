"""Provider metadata for Airflow's ``apache_airflow_provider`` entry point.

No ``airflow`` import here: Airflow calls this while its configuration is still loading.
The dict must validate against ``airflow/provider_info.schema.json``: an invalid provider info
breaks discovery for every provider (``tests/airflow/test_provider_info.py`` checks it).
"""

from __future__ import annotations

from airflow_partitions import __version__
from airflow_partitions.defaults import BACKENDS, HBASE_PROTOCOLS, HBASE_TRANSPORTS
from airflow_partitions.json_value import JsonValue

INTEGRATION = "Airflow Partitions"
#: Also ``[project.urls] Documentation`` in pyproject.toml, which Airflow's provider page links.
DOCUMENTATION_URL = (
    "https://github.com/airflow-partitions/airflow-partitions/blob/main/README.md#documentation")
CONN_TYPE = "partition_catalog"
#: Also ``PartitionsPlugin.name`` (airflow_partitions/ui/plugin.py).
PLUGIN_NAME = "airflow_partitions"

_STRING_OR_NULL = {"type": ["string", "null"]}


def _field(label: str, description: str, default: str | None = None,
           choices: tuple[str, ...] = ()) -> dict[str, JsonValue]:
    """One form field. With ``choices``, the schema's ``enum`` makes Airflow 3.3's connection
    form draw a dropdown of exactly those values instead of a free-text box."""
    schema: dict[str, JsonValue] = dict(_STRING_OR_NULL)
    if default is not None:
        schema["default"] = default
    if choices:
        schema["enum"] = list(choices)
    return {"label": label, "description": description, "schema": schema}


#: Extra fields of a ``partition_catalog`` connection (stored in the connection's extra).
CONN_FIELDS: dict[str, dict[str, JsonValue]] = {
    "backend": _field(
        "Backend",
        "sqlite (embedded, the default) or hbase (an HBase Thrift1 server: Host and Port).",
        "sqlite",
        BACKENDS,
    ),
    "sqlite_path": _field(
        "SQLite path",
        "Absolute path of the catalog database for the sqlite backend "
        "(default: $AIRFLOW_HOME/partitions.db).",
    ),
    "table_prefix": _field(
        "HBase table prefix", "Prefix of the catalog's HBase tables (namespacing).",
    ),
    "transport": _field("HBase Thrift transport", "buffered or framed: as the Thrift server "
                        "runs.", "buffered", HBASE_TRANSPORTS),
    "protocol": _field("HBase Thrift protocol", "binary or compact: as the Thrift server runs.",
                       "binary", HBASE_PROTOCOLS),
    "store_url": _field(
        "Store URL",
        "A full store URL (sqlite:///path.db or hbase://host:9090?...); overrides the fields "
        "above.",
    ),
    "data_root": _field(
        "Data root",
        "Where partitions live when a storage table has no location template "
        "(default: $AIRFLOW_HOME/partitions-data).",
    ),
}


def get_provider_info() -> dict[str, JsonValue]:
    """Return the provider info dict that ``airflow providers list`` reads."""
    return {
        "package-name": "airflow-partitions",
        "name": INTEGRATION,
        "description": (
            "Partition catalog, partition timelines and exact time-range covers for "
            "partition-aware Spark pipelines."
        ),
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": INTEGRATION,
                "external-doc-url": DOCUMENTATION_URL,
                "tags": ["software"],
            }
        ],
        "hooks": [
            {
                "integration-name": INTEGRATION,
                "python-modules": ["airflow_partitions.hooks.catalog"],
            }
        ],
        "sensors": [
            {
                "integration-name": INTEGRATION,
                "python-modules": ["airflow_partitions.sensors.coverage"],
            }
        ],
        "triggers": [
            {
                "integration-name": INTEGRATION,
                "python-modules": ["airflow_partitions.triggers.coverage"],
            }
        ],
        "operators": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "airflow_partitions.operators.partitions",
                    "airflow_partitions.operators.spark",
                    "airflow_partitions.operators.pruned_spark",
                    "airflow_partitions.operators.backfill",
                ],
            }
        ],
        "connection-types": [
            {
                "hook-class-name": "airflow_partitions.hooks.catalog.PartitionCatalogHook",
                "hook-name": "Partition Catalog",
                "connection-type": CONN_TYPE,
                "ui-field-behaviour": {
                    "hidden-fields": ["schema", "login", "password", "extra"],
                    "relabeling": {"host": "HBase Thrift host", "port": "HBase Thrift port"},
                    "placeholders": {
                        "host": "hbase-thrift.example.com (hbase backend only)",
                        "port": "9090",
                        "sqlite_path": "/opt/airflow/partitions.db",
                    },
                },
                "conn-fields": CONN_FIELDS,
            }
        ],
        # The Partitions view (airflow_partitions/ui): a FastAPI app and a UI navigation entry.
        "plugins": [
            {"name": PLUGIN_NAME, "plugin-class": "airflow_partitions.ui.plugin.PartitionsPlugin"}
        ],
    }
