"""``PartitionsPlugin``: the Partitions view, shipped through the provider info's ``plugins``.

The api-server mounts :data:`fastapi_apps` under ``/partitions``; the external view puts a
"Partitions" button in the UI's navigation bar, and its ``url_route`` makes the UI draw the page
inside its own frame (``/plugin/partitions``) rather than leave Airflow.

How Airflow 3.3's UI treats it (read from its bundled UI):

* The button is top level (``nav_top_level``), not in the Browse menu: the UI highlights the
  Browse button only on its own built-in pages (Audit Log, XComs, ...), never on a plugin's,
  while a top-level plugin button is highlighted whenever its ``/plugin/<url_route>`` page is
  open. So a user can see where they are.
* Once the frame has loaded, the UI writes the frame's own path after ``/plugin/<url_route>``
  in the address bar (``/plugin/partitions/partitions/facts/events?start=...``), so that the
  address can be bookmarked and reloaded to the same view. The doubled ``partitions`` is the
  route followed by the app's mount point; neither can be dropped from a plugin.
"""

from __future__ import annotations

from typing import TypedDict

from airflow.plugins_manager import AirflowPlugin
from fastapi import FastAPI

from airflow_partitions.get_provider_info import PLUGIN_NAME as NAME
from airflow_partitions.ui.app import URL_PREFIX, create_app


class FastApiAppEntry(TypedDict):
    """One of a plugin's ``fastapi_apps``, as Airflow's plugin manager reads it."""

    app: FastAPI
    url_prefix: str
    name: str


class ExternalViewEntry(TypedDict):
    """One of a plugin's ``external_views``, as Airflow's plugin manager reads it."""

    name: str
    href: str
    url_route: str
    destination: str
    nav_top_level: bool


class PartitionsPlugin(AirflowPlugin):
    """The Partitions view (docs/observability.md, "The Partitions view")."""

    name = NAME
    fastapi_apps: list[FastApiAppEntry] = [
        {"app": create_app(), "url_prefix": URL_PREFIX, "name": "Partitions"},
    ]
    external_views: list[ExternalViewEntry] = [
        {
            "name": "Partitions",
            "href": f"{URL_PREFIX}/",
            "url_route": "partitions",
            "destination": "nav",
            "nav_top_level": True,
        },
    ]
