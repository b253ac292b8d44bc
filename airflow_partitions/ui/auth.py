"""Access to the Partitions view goes through Airflow's own authentication.

Why not an open route: a plugin's FastAPI app is mounted on the api-server, so anyone who can
reach the port could read the catalog. The dependency reuses Airflow's ``get_user`` (a bearer
JWT, else the UI's ``_token`` cookie, which is what an iframe of the UI sends) and asks the
configured auth manager whether the user may see the website. Airflow's security module is
imported on the first request, not at import: the plugin module is imported by every Airflow
process that loads plugins, and only the api-server serves the app.
"""

from __future__ import annotations

from typing import Protocol

from fastapi import HTTPException, Request, status


class AirflowUser(Protocol):
    """The signed-in user as Airflow's auth manager gives it (its ``BaseUser``): what the view
    reads of it. A Protocol, so that the routes' annotations import no Airflow."""

    def get_name(self) -> str: ...


async def require_viewer(request: Request) -> AirflowUser:
    """The authenticated Airflow user; 401 without a valid token, 403 when not allowed."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

    credentials = await bearer_scheme(request)
    user = await get_user(request, None, credentials)
    if not get_auth_manager().is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Forbidden")
    return user
