"""The provider info validates against Airflow's schema and declares the connection type."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import airflow
import jsonschema

from airflow_partitions.get_provider_info import get_provider_info

SCHEMA = Path(airflow.__file__).parent / "provider_info.schema.json"


def test_provider_info_is_valid() -> None:
    jsonschema.validate(get_provider_info(), json.loads(SCHEMA.read_text()))


def test_declared_modules_and_classes_exist() -> None:
    info = get_provider_info()
    for section in ("hooks", "sensors", "triggers", "operators"):
        for entry in info[section]:
            for module in entry["python-modules"]:
                importlib.import_module(module)
    [conn] = info["connection-types"]
    module, _, name = conn["hook-class-name"].rpartition(".")
    hook = getattr(importlib.import_module(module), name)
    assert hook.conn_type == conn["connection-type"] == "partition_catalog"
    assert hook.hook_name == conn["hook-name"] == "Partition Catalog"


def test_connection_form() -> None:
    [conn] = get_provider_info()["connection-types"]
    assert {"backend", "sqlite_path", "table_prefix", "transport", "protocol"} <= set(
        conn["conn-fields"])
    assert conn["ui-field-behaviour"]["relabeling"]["host"] == "HBase Thrift host"


def test_the_provider_page_links_our_documentation() -> None:
    """Airflow's provider page links the package's Project-URL "Documentation"; without one
    it falls back to airflow.apache.org/docs/<package>, which does not exist for us."""
    from importlib.metadata import distribution

    from airflow.providers_manager import ProvidersManager

    from airflow_partitions.get_provider_info import DOCUMENTATION_URL

    urls = dict(entry.split(", ", 1) for entry in
                distribution("airflow-partitions").metadata.get_all("Project-URL") or [])
    assert urls["Documentation"] == DOCUMENTATION_URL
    [integration] = get_provider_info()["integrations"]
    assert integration["external-doc-url"] == DOCUMENTATION_URL
    provider = ProvidersManager().providers["airflow-partitions"]
    assert provider.data["documentation-url"] == DOCUMENTATION_URL
