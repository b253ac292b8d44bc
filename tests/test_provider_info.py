"""The provider info validates against Airflow's schema and declares the connection type."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import airflow
import jsonschema
import pytest

from airflow_partitions.get_provider_info import get_provider_info
from airflow_partitions.interop import InvalidConnection, store_url_from_fields

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


def test_the_form_offers_the_valid_choices_as_dropdowns() -> None:
    """Backend, transport and protocol are dropdowns, not free text; Airflow 3.3's connection form
    draws a dropdown for a ``conn-fields`` schema with ``enum`` (its provider.yaml schema says
    "creates dropdown"), so the form offers exactly the values the store URL accepts."""
    [conn] = get_provider_info()["connection-types"]
    fields = conn["conn-fields"]
    yaml_schema = json.loads((SCHEMA.parent / "provider.yaml.schema.json").read_text())
    conn_fields_schema = (yaml_schema["properties"]["connection-types"]["items"]
                          ["properties"]["conn-fields"])
    jsonschema.validate(fields, conn_fields_schema)  # the stricter schema accepts them too
    assert fields["backend"]["schema"]["enum"] == ["sqlite", "hbase"]
    assert fields["transport"]["schema"]["enum"] == ["buffered", "framed"]
    assert fields["protocol"]["schema"]["enum"] == ["binary", "compact"]
    for name in ("backend", "transport", "protocol"):
        schema = fields[name]["schema"]
        assert schema["default"] in schema["enum"]
    # every choice offered opens; a value typed elsewhere (CLI, environment) is named
    for transport in fields["transport"]["schema"]["enum"]:
        for protocol in fields["protocol"]["schema"]["enum"]:
            url = store_url_from_fields("hb", 9090, {"backend": "hbase", "transport": transport,
                                                     "protocol": protocol})
            assert f"transport={transport}" in url and f"protocol={protocol}" in url
    with pytest.raises(InvalidConnection, match=r"transport='fremed'.*buffered, framed"):
        store_url_from_fields("hb", 9090, {"backend": "hbase", "transport": "fremed"})
    with pytest.raises(InvalidConnection, match="backend 'hbse' is not sqlite or hbase"):
        store_url_from_fields("hb", 9090, {"backend": "hbse"})


def test_airflow_serves_the_choices_to_the_form() -> None:
    """What the UI's form is drawn from (``/ui/connections/hook_meta``): the widget's schema,
    with the enum, as Airflow's ProvidersManager hands it over."""
    from airflow.providers_manager import ProvidersManager

    widgets = ProvidersManager().connection_form_widgets
    for name, choices in (("backend", ["sqlite", "hbase"]), ("transport", ["buffered", "framed"]),
                          ("protocol", ["binary", "compact"])):
        field = widgets[f"extra__partition_catalog__{name}"].field
        assert field["schema"]["enum"] == choices and field["value"] == choices[0]
