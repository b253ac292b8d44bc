"""The REST adapter and a producer scheduled on a coverage asset (``backfill/rest_api.py``).

A small HTTP server on loopback answers as Airflow 3.3's api-server does (field names from its
OpenAPI spec): ``GET /api/v2/dags/{dag_id}/details`` describes the schedule, ``GET
/api/v2/assets?uri_pattern=`` and ``GET .../dagRuns?partition_key_pattern=`` match substrings
(so the exact asset and keys are picked here), ``POST /api/v2/assets/events`` takes the key.
The real api-server runs the same calls in tests/e2e.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from airflow_partitions.backfill.rest_api import RestBackfills
from airflow_partitions.coverage_events import CoverageAssetSpec

SPEC = CoverageAssetSpec.of("events", "DAILY")
PER_SLICE = CoverageAssetSpec.of("events", "DAILY", per_slice=True)
KEY = "2015-01-02T00:00:00"


class Api:
    def __init__(self) -> None:
        self.posted: list[Any] = []
        self.queries: list[tuple[str, dict[str, str]]] = []

    def answer(self, method: str, path: str, query: dict[str, str], body: Any
               ) -> tuple[int, Any]:
        self.queries.append((path, query))
        if path == "/auth/token":
            return 201, {"access_token": "t"}
        if path == "/api/v2/dags/rollup/details":
            return 200, {"dag_id": "rollup", "timetable_partitioned": True,
                         "timetable_periodic": False, "timetable_summary": "Partitioned Asset",
                         "asset_expression": {"any": [
                             {"asset": {"uri": SPEC.uri, "name": SPEC.name, "id": 3}},
                             {"asset": {"uri": "s3://other", "name": "other", "id": 4}}]}}
        if path == "/api/v2/dags/ingest/details":
            return 200, {"dag_id": "ingest", "timetable_partitioned": False,
                         "timetable_periodic": True, "asset_expression": None}
        if path == "/api/v2/assets":
            return 200, {"assets": [{"id": 5, "uri": PER_SLICE.uri},
                                    {"id": 3, "uri": SPEC.uri}], "total_entries": 2}
        if method == "POST" and path == "/api/v2/assets/events":
            self.posted.append(body)
            return 200, {"id": 1, "asset_id": body["asset_id"]}
        if method == "POST" and path == "/api/v2/dags/rollup/dagRuns":
            self.posted.append(body)
            return 200, {"dag_run_id": "manual", "partition_key": body["partition_key"]}
        if path == "/api/v2/dags/rollup/dagRuns":
            return 200, {"dag_runs": [
                {"dag_run_id": "a", "partition_key": KEY, "state": "running",
                 "queued_at": "2026-01-01T10:00:00Z", "run_after": "2026-01-01T09:59:00Z"},
                {"dag_run_id": "b", "partition_key": f"eu|{KEY}", "state": "success",
                 "queued_at": None, "run_after": "2026-01-01T09:00:00Z"}], "total_entries": 2}
        return 404, {"detail": "not here"}


@pytest.fixture
def api() -> Iterator[tuple[Api, RestBackfills]]:
    state = Api()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            parts = urllib.parse.urlsplit(self.path)
            code, body = state.answer(self.command, parts.path,
                                      dict(urllib.parse.parse_qsl(parts.query)),
                                      json.loads(raw) if raw else None)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _reply

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield state, RestBackfills(f"http://127.0.0.1:{server.server_port}", "u", "p")
    finally:
        server.shutdown()
        server.server_close()


def test_the_dags_details_say_which_coverage_asset_schedules_it(
        api: tuple[Api, RestBackfills]) -> None:
    _, client = api
    assert client.coverage_assets("rollup") == [SPEC.uri]
    assert client.coverage_assets("ingest") == []


def test_an_event_goes_to_the_asset_with_exactly_that_uri(api: tuple[Api, RestBackfills]) -> None:
    state, client = api
    client.post_event(SPEC.uri, KEY, {"restated": False})  # type: ignore[typeddict-item]
    assert state.posted == [{"asset_id": 3, "partition_key": KEY, "extra": {"restated": False}}]
    assert ("/api/v2/assets", {"uri_pattern": SPEC.uri, "limit": "100"}) in state.queries


def test_runs_are_those_with_exactly_the_key(api: tuple[Api, RestBackfills]) -> None:
    _, client = api
    [run] = client.partition_runs("rollup", [KEY])
    assert (run.run_id, run.state, run.queued.isoformat()) == (
        "a", "running", "2026-01-01T10:00:00+00:00")


def test_a_run_by_hand_names_its_key_and_no_logical_date(
        api: tuple[Api, RestBackfills]) -> None:
    state, client = api
    client.trigger_partition_run("rollup", KEY)
    assert state.posted == [{"logical_date": None, "partition_key": KEY}]
