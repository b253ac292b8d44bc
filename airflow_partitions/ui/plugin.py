"""``PartitionsPlugin``: the Partitions view, shipped through the provider info's ``plugins``.

The api-server mounts :data:`fastapi_apps` under ``/partitions``; the external view puts a
"Partitions" entry in the UI's Browse menu, and its ``url_route`` makes the UI draw the page
inside its own frame (``/plugin/partitions``) rather than leave Airflow.
"""

from __future__ import annotations

from typing import Any

from airflow.plugins_manager import AirflowPlugin

from airflow_partitions.get_provider_info import PLUGIN_NAME as NAME
from airflow_partitions.ui.app import URL_PREFIX, create_app


class PartitionsPlugin(AirflowPlugin):
    """The Partitions view (docs/observability.md, "The Partitions view")."""

    name = NAME
    fastapi_apps: list[Any] = [
        {"app": create_app(), "url_prefix": URL_PREFIX, "name": "Partitions"},
    ]
    external_views: list[Any] = [
        {
            "name": "Partitions",
            "href": f"{URL_PREFIX}/",
            "url_route": "partitions",
            "destination": "nav",
            "category": "browse",
        },
    ]
