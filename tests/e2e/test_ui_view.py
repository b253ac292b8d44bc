"""The Partitions view under a real ``airflow api-server`` (issue 17).

Only the api-server runs (the harness's ``spawn``, in its own process group, stopped by pid),
in a migrated ``AIRFLOW_HOME`` whose catalog holds a small fact. The plugin is found the way a
user's installation finds it (the package's entry point), its app is mounted at
``/partitions``, and its routes answer only to an authenticated Airflow user: no token is
401, a forged one 403, the simple auth manager's admin token 200. The JSON the page is drawn
from is checked against what the catalog holds.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.demo.services.api import ApiClient, ApiError
from airflow_partitions.demo.services.environment import VENV_BIN, service_settings
from airflow_partitions.demo.services.ports import choose_ports
from airflow_partitions.demo.services.processes import spawn, stop_groups
from airflow_partitions.demo.services.runner import log_tail
from tests.helpers import make_airflow_home

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiClient]:
    home = make_airflow_home(tmp_path_factory.mktemp("ui_view"))
    with Catalog(home.store_url, data_root=str(home.home / "data"),
                 cache=TimelineCache()) as catalog:
        catalog.create_fact("web")
        catalog.create_storage("web", "web_raw", ["HOURLY"])
        catalog.create_storage("web", "web_daily", ["DAILY"], priority=5)
        catalog.register("web_raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}"} for h in range(24)
                                               if h not in (5, 6, 7)])
    ports = choose_ports()
    env = {**home.env, **service_settings(ports)}
    log = home.home / "api-server.log"
    proc, record = spawn("api-server", [str(VENV_BIN / "airflow"), "api-server"], env, log,
                         cwd=home.home)
    client = ApiClient(ports.api_url, home.home)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, log_tail(log)
            try:
                client.health()
                client.token()
                break
            except ApiError:
                if time.monotonic() > deadline:
                    raise AssertionError(log_tail(log)) from None
                time.sleep(1)
        yield client
    finally:
        stop_groups([record], grace=20)
        proc.wait(timeout=30)


def get(api: ApiClient, path: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(f"{api.base_url}{path}", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


PATHS = ["/partitions/", "/partitions/api/facts", "/partitions/api/facts/web",
         "/partitions/facts/web"]


@pytest.mark.parametrize("path", PATHS)
def test_every_route_needs_an_airflow_user(api: ApiClient, path: str) -> None:
    assert get(api, path)[0] == 401
    assert get(api, path, token="not-a-jwt")[0] == 403
    assert get(api, path, token=api.token())[0] == 200


def test_the_plugin_is_registered_with_its_navigation_entry(api: ApiClient) -> None:
    plugins = api.get("plugins")["plugins"]
    [ours] = [p for p in plugins if p["name"] == "airflow_partitions"]
    assert ours["fastapi_apps"][0]["url_prefix"] == "/partitions"
    [view] = ours["external_views"]
    assert view["href"] == "/partitions/" and view["url_route"] == "partitions"
    assert view["destination"] == "nav"


def test_the_json_the_page_is_drawn_from(api: ApiClient) -> None:
    status, body = get(api, "/partitions/api/facts", token=api.token())
    facts: list[dict[str, Any]] = json.loads(body)
    assert [f["name"] for f in facts] == ["web"]
    status, body = get(api, "/partitions/api/facts/web?start=2024-01-01T00:00:00Z"
                            "&end=2024-01-02T00:00:00Z", token=api.token())
    assert status == 200, body
    view = json.loads(body)
    assert view["status"] == ("web [2024-01-01T00:00, 2024-01-02T00:00): 87.5% covered by 21 "
                              "partition(s); missing 2024-01-01T05:00/08:00: no HOURLY "
                              "2024-01-01-05..07 (3), no DAILY 2024-01-01")
    lanes = {(lane["storage"], lane["period"]): lane for lane in view["lanes"]}
    hourly = lanes[("web_raw", "HOURLY")]
    assert [(s["state"], s["first"], s["last"]) for s in hourly["stretches"]] == [
        ("registered", "2024-01-01-00", "2024-01-01-04"),
        ("missing", "2024-01-01-05", "2024-01-01-07"),
        ("registered", "2024-01-01-08", "2024-01-01-23"),
    ]
    assert lanes[("web_daily", "DAILY")]["missing"] == 1
    status, page = get(api, "/partitions/facts/web", token=api.token())
    assert "no HOURLY 2024-01-01-05..07 (3)" in page and "<svg" in page
    # links inside the page keep the mount point
    assert "href='/partitions/facts/web?" in page


def test_an_unknown_fact_is_404(api: ApiClient) -> None:
    assert get(api, "/partitions/api/facts/nope", token=api.token())[0] == 404


def test_the_cookie_of_the_ui_is_enough(api: ApiClient) -> None:
    """Inside the UI the page is an iframe: the browser sends the ``_token`` cookie only."""
    req = urllib.request.Request(f"{api.base_url}/partitions/api/facts",
                                 headers={"Cookie": f"_token={api.token()}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert resp.status == 200


def test_log_is_clean(api: ApiClient) -> None:
    log = Path(api.home) / "api-server.log"
    text = log.read_text(errors="replace")
    assert "Failed to import plugin" not in text, text[-3000:]
