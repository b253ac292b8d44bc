"""A small client of the api-server's REST API (stdlib only, so starting services stays light).

Tokens come from the simple auth manager: ``POST /auth/token`` with the user and the password it
generated into ``$AIRFLOW_HOME/simple_auth_manager_passwords.json.generated``.
"""

from __future__ import annotations

import json
import os
import secrets
import string
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import cast

from airflow_partitions.json_value import JsonObject, JsonValue

#: ``GET /api/v2/monitor/health``: each component (``metadatabase``, ``scheduler``, ``triggerer``,
#: ``dag_processor``) -> its ``status`` and ``latest_<component>_heartbeat`` (ISO-8601 or null).
HealthJson = dict[str, dict[str, str | None]]

PASSWORD_FILE = "simple_auth_manager_passwords.json.generated"  # noqa: S105 - a file name
ADMIN = "admin"


class ApiError(RuntimeError):
    """The api-server answered with an error status, or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


#: What the admin password is made of (16 of them: about 95 bits).
PASSWORD_ALPHABET = string.ascii_letters + string.digits

def password_file(home: Path) -> Path:
    """Where the simple auth manager keeps generated passwords (written by the api-server)."""
    return home / PASSWORD_FILE


def admin_password(home: Path, user: str = ADMIN) -> str | None:
    """The generated password of ``user``, or None before the api-server wrote it."""
    try:
        passwords = json.loads(password_file(home).read_text() or "{}")
    except (OSError, ValueError):
        return None
    value = passwords.get(user)
    return str(value) if value else None


def ensure_admin_password(home: Path, user: str = ADMIN) -> str:
    """``user``'s password, written into the password file first when it has none yet.

    Why before the api-server starts: the simple auth manager keeps a password it finds in
    that file and generates only the missing ones, so the services (the follower, the tasks'
    ``airflow_api_default`` connection) can be given the password in their environment.
    """
    known = admin_password(home, user)
    if known is not None:
        return known
    path = password_file(home)
    try:
        passwords = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        passwords = {}
    # letters and digits only: a password starting with "-" reads as an option to a CLI
    passwords[user] = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(16))
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(json.dumps(passwords) + "\n")
    path.chmod(0o600)  # a file left by an older run keeps its mode through O_TRUNC
    return str(passwords[user])


def request(url: str, method: str = "GET", body: object = None, token: str | None = None,
            timeout: float = 30) -> JsonValue:
    """One JSON request; raises ApiError with the status and the server's message on failure."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)  # noqa: S310
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - our own server
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:2000]
        raise ApiError(f"{method} {url}: HTTP {exc.code}: {detail}", exc.code) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise ApiError(f"{method} {url}: {exc}") from exc
    return json.loads(raw) if raw.strip() else None


class ApiClient:
    """The REST API of one api-server, as the admin user."""

    def __init__(self, base_url: str, home: Path, user: str = ADMIN) -> None:
        self.base_url = base_url.rstrip("/")
        self.home = home
        self.user = user
        self._token: str | None = None

    def health(self) -> HealthJson:
        return cast(HealthJson, request(f"{self.base_url}/api/v2/monitor/health", timeout=10))

    def token(self) -> str:
        if self._token is None:
            password = admin_password(self.home, self.user)
            if password is None:
                raise ApiError(f"no generated password yet in {password_file(self.home)}")
            doc = cast(JsonObject, request(f"{self.base_url}/auth/token", "POST",
                                           {"username": self.user, "password": password}))
            self._token = str(doc["access_token"])
        return self._token

    def call(self, method: str, path: str, body: object = None, **query: object) -> JsonValue:
        """``method /api/v2/<path>`` with the admin token (path without the prefix)."""
        url = f"{self.base_url}/api/v2/{path.lstrip('/')}"
        if query:
            url += "?" + urllib.parse.urlencode(query, doseq=True)
        return request(url, method, body, token=self.token())

    def get(self, path: str, **query: object) -> JsonValue:
        return self.call("GET", path, **query)
