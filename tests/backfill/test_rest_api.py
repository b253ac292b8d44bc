"""The REST client's answer to a locked SQLite metadata DB (``backfill/rest_api.py``).

Under load Airflow's api-server answers ``POST /api/v2/backfills`` with 503 "Database is
locked" (seen under the real services in tests/e2e/test_scheduler.py), sometimes after it
committed the backfill. The real api-server cannot be made to lock on cue, so a small HTTP
server on loopback plays the two answers Airflow gives (the bodies are Airflow 3.3's).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from airflow_partitions.backfill.rest_api import ApiUnavailable, RestBackfills

LOCKED = {"detail": "Database is locked. Backfill creation is not supported on SQLite under "
                    "concurrent access. Please use PostgreSQL or MySQL."}
FIRST = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)


class FakeApi:
    """``locked_posts`` 503 answers, the first of them after 'committing' backfill 7 when
    ``commit_first``; then a normal 200."""

    def __init__(self, locked_posts: int, commit_first: bool) -> None:
        self.locked_posts, self.commit_first = locked_posts, commit_first
        self.posts = 0
        self.backfills: list[dict[str, Any]] = []

    def answer(self, method: str, path: str) -> tuple[int, Any]:
        if path == "/auth/token":
            return 201, {"access_token": "t"}
        if method == "POST" and path == "/api/v2/backfills":
            self.posts += 1
            if self.posts <= self.locked_posts:
                if self.commit_first and self.posts == 1:
                    self.backfills.append(self._row(7))
                return 503, LOCKED
            self.backfills.append(self._row(8))
            return 200, self._row(8)
        if method == "GET" and path.startswith("/api/v2/backfills"):
            return 200, {"backfills": self.backfills, "total_entries": len(self.backfills)}
        return 404, {"detail": "not here"}

    @staticmethod
    def _row(backfill_id: int) -> dict[str, Any]:
        return {"id": backfill_id, "dag_id": "d", "completed_at": None,
                "created_at": dt.datetime.now(dt.UTC).isoformat()}


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def start(api: FakeApi) -> str:
        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                code, body = api.answer(self.command, self.path.split("?")[0])
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
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def client(url: str) -> RestBackfills:
    rest = RestBackfills(url, "admin", "pw")
    rest.lock_backoff = 0.01
    return rest


def test_a_locked_create_is_retried(serve: Any) -> None:
    api = FakeApi(locked_posts=2, commit_first=False)
    assert client(serve(api)).create("d", FIRST, FIRST, 1) == 8
    assert api.posts == 3 and [b["id"] for b in api.backfills] == [8]


def test_a_backfill_committed_before_the_lock_is_adopted_not_created_twice(serve: Any) -> None:
    api = FakeApi(locked_posts=1, commit_first=True)
    assert client(serve(api)).create("d", FIRST, FIRST, 1) == 7
    assert api.posts == 1 and [b["id"] for b in api.backfills] == [7]


def test_a_lock_that_lasts_is_a_typed_error(serve: Any) -> None:
    api = FakeApi(locked_posts=99, commit_first=False)
    with pytest.raises(ApiUnavailable, match="Database is locked"):
        client(serve(api)).create("d", FIRST, FIRST, 1)
    assert api.posts == 4 and api.backfills == []
