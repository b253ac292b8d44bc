"""Airflow's side of a backfill through the api-server's REST API (``/api/v2``).

Why a second way in: an Airflow 3 task may not open the metadata DB, so the backfill
operator goes through the public API, as a user would, with the credentials of an Airflow
connection. The command line uses :mod:`.airflow_db`. Both answer the same questions.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Self, TypedDict

from airflow_partitions.backfill.airflow_db import (
    LOCK_RETRIES,
    BackfillRefused,
    Progress,
    UnknownBackfill,
    UnknownDag,
)
from airflow_partitions.backfill.announce import PartitionRun, coverage_uris
from airflow_partitions.coverage_events import EmissionExtraJson
from airflow_partitions.errors import PartitionsError


class ApiUnavailable(PartitionsError):
    """The api-server could not be reached or answered with a server error."""


class DagRunJson(TypedDict):
    """A DAG run as ``GET /api/v2/dags/{dag_id}/dagRuns`` lists it: the keys read here (the
    answer has more, kept as Airflow gives them)."""

    dag_run_id: str
    state: str
    logical_date: NotRequired[str | None]


class AirflowRest:
    """Calls to the api-server at ``base_url`` (``http://host:port``) as ``user``, with a JWT
    fetched once from ``/auth/token``."""

    def __init__(self, base_url: str, user: str, password: str, timeout: float = 30) -> None:
        if urllib.parse.urlsplit(base_url).scheme not in {"http", "https"}:
            raise BackfillRefused(f"the api-server address {base_url!r} is not an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.user, self.password, self.timeout = user, password, timeout
        self._token: str | None = None

    @classmethod
    def with_token(cls, base_url: str, token: str, timeout: float = 30) -> Self:
        """As the holder of ``token`` (an Airflow JWT): the Partitions view forwards its
        signed-in user's, so Airflow's own authorization decides every call."""
        client = cls(base_url, "", "", timeout)
        client._token = token
        return client

    def _token_value(self) -> str:
        if self._token is None:
            got = self.request("POST", "/auth/token",
                                {"username": self.user, "password": self.password}, token=None)
            self._token = str(got["access_token"])
        return self._token

    def call(self, method: str, path: str, body: Any = None,
             query: dict[str, Any] | None = None) -> Any:
        """One authenticated call; the JSON answer (None when empty). ``ApiUnavailable`` for
        an unreachable server or a 5xx, ``BackfillRefused`` for a 4xx (its text says which)."""
        return self.request(method, path, body, token=self._token_value(), query=query)

    def request(self, method: str, path: str, body: Any, *, token: str | None,
                query: dict[str, Any] | None = None) -> Any:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(url, data=data, method=method,  # noqa: S310 - http(s) only
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500]
            if exc.code >= 500:
                raise ApiUnavailable(f"{method} {path}: HTTP {exc.code}: {detail}") from exc
            raise BackfillRefused(f"{method} {path}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise ApiUnavailable(f"{method} {url}: {exc}") from exc
        return json.loads(raw) if raw.strip() else None


class RestBackfills(AirflowRest):
    """Create and watch backfills through the api-server's REST API."""

    #: Seconds before the first retry of a create the metadata DB refused as locked.
    lock_backoff: float = 2.0

    def check_dag(self, dag_id: str) -> bool:
        try:
            dag = self.call("GET", f"/api/v2/dags/{_quote(dag_id)}")
        except BackfillRefused as exc:
            if "HTTP 404" in str(exc):
                raise UnknownDag(f"Airflow knows no DAG {dag_id!r}: is it in the DAG folder, "
                                 "and has the dag-processor parsed it?") from exc
            raise
        return bool(dag["is_paused"])

    def unpause(self, dag_id: str) -> None:
        self.call("PATCH", f"/api/v2/dags/{_quote(dag_id)}", {"is_paused": False})

    def running_backfill(self, dag_id: str) -> int | None:
        found = self.call("GET", "/api/v2/backfills", query={"dag_id": dag_id, "limit": 100,
                                                              "order_by": "-id"})
        open_ids = [int(b["id"]) for b in found["backfills"] if b.get("completed_at") is None]
        return min(open_ids) if open_ids else None

    def schedule(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                 conf: Mapping[str, object] | None = None) -> list[dt.datetime]:
        body = {"dag_id": dag_id, "from_date": first.isoformat(), "to_date": last.isoformat(),
                "reprocess_behavior": "completed",
                **({"dag_run_conf": dict(conf)} if conf is not None else {})}
        found = self.call("POST", "/api/v2/backfills/dry_run", body)
        return [_instant(b["logical_date"]) for b in found["backfills"] if b.get("logical_date")]

    def create(self, dag_id: str, first: dt.datetime, last: dt.datetime,
               max_active_runs: int, conf: Mapping[str, object] | None = None) -> int:
        """``POST /api/v2/backfills``; ``conf`` is the body's ``dag_run_conf`` (the body has
        no partition key: docs/backfill.md, "Slices")."""
        body = {"dag_id": dag_id, "from_date": first.isoformat(), "to_date": last.isoformat(),
                "reprocess_behavior": "completed", "max_active_runs": max_active_runs,
                **({"dag_run_conf": dict(conf)} if conf is not None else {})}
        for attempt in range(LOCK_RETRIES + 1):
            started = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
            try:
                made = self.call("POST", "/api/v2/backfills", body)
            except BackfillRefused as exc:
                if "HTTP 409" in str(exc):
                    raise BackfillRefused(
                        f"another backfill of {dag_id} is running, and Airflow runs one per "
                        "DAG: wait for it, or cancel it in the UI (Browse > Backfills)") from exc
                raise
            except ApiUnavailable as exc:
                # A SQLite metadata DB under load answers 503 "Database is locked", maybe
                # after committing the backfill row: adopt what it left, else try again.
                if "database is locked" not in str(exc).lower() or attempt == LOCK_RETRIES:
                    raise
                left = self.created_since(dag_id, started)
                if left is not None:
                    return left
                time.sleep(self.lock_backoff * (attempt + 1))
                continue
            return int(made["id"])
        raise AssertionError("unreachable")  # the loop returns or raises

    def created_since(self, dag_id: str, since: dt.datetime) -> int | None:
        """The id of an unfinished backfill of the DAG created after ``since``, if any."""
        found = self.call("GET", "/api/v2/backfills", query={"dag_id": dag_id, "limit": 100,
                                                              "order_by": "-id"})
        ids = [int(b["id"]) for b in found["backfills"] if b.get("completed_at") is None
               and b.get("created_at") and _instant(b["created_at"]) >= since]
        return max(ids) if ids else None

    def progress(self, backfill_id: int) -> Progress:
        return self.progress_and_runs(backfill_id)[0]

    def progress_and_runs(self, backfill_id: int) -> tuple[Progress, list[DagRunJson]]:
        """The backfill's progress and its runs (``dag_run_id``, ``logical_date``, ``state``
        as ``/api/v2`` gives them): what the Partitions view links to. Two GETs.
        Raises :class:`UnknownBackfill` when Airflow has no such backfill (any more)."""
        try:
            backfill = self.call("GET", f"/api/v2/backfills/{backfill_id}")
        except BackfillRefused as exc:
            if "HTTP 404" in str(exc):
                raise UnknownBackfill(f"Airflow has no backfill {backfill_id} (any more): "
                                      f"{exc}") from exc
            raise
        runs: list[DagRunJson] = self.call(
            "GET", f"/api/v2/dags/{_quote(backfill['dag_id'])}/dagRuns", query={
                "logical_date_gte": backfill["from_date"],
                "logical_date_lte": backfill["to_date"], "run_type": "backfill",
                "limit": 1000})["dag_runs"]
        states = Counter(str(r["state"]) for r in runs)
        failed = tuple(sorted(_instant(str(r["logical_date"])) for r in runs
                              if r["state"] == "failed" and r.get("logical_date")))
        return Progress(backfill_id, dict(states), backfill.get("completed_at") is not None,
                        failed), runs

    # -- producers scheduled on a coverage asset (:mod:`.announce`) ---------------------------

    def coverage_assets(self, dag_id: str) -> list[str]:
        """From ``GET /api/v2/dags/{dag_id}/details``: ``timetable_partitioned``,
        ``timetable_periodic`` and ``asset_expression``."""
        details = self.call("GET", f"/api/v2/dags/{_quote(dag_id)}/details")
        return coverage_uris(bool(details.get("timetable_partitioned")),
                             bool(details.get("timetable_periodic")),
                             details.get("asset_expression"))

    def asset_id(self, uri: str) -> int:
        """Airflow's id of the asset ``uri`` (``GET /api/v2/assets?uri_pattern=``, a
        substring match: the exact URI is picked from the answer)."""
        found = self.call("GET", "/api/v2/assets", query={"uri_pattern": uri, "limit": 100})
        ids = [int(a["id"]) for a in found.get("assets", []) if a.get("uri") == uri]
        if not ids:
            raise BackfillRefused(f"Airflow knows no asset {uri}: has the dag-processor "
                                  "parsed its consumer DAG?")
        return max(ids)

    def post_event(self, uri: str, key: str, extra: EmissionExtraJson) -> None:
        """``POST /api/v2/assets/events`` with the window's ``partition_key``."""
        self.call("POST", "/api/v2/assets/events", {
            "asset_id": self.asset_id(uri), "partition_key": key, "extra": extra})

    def partition_runs(self, dag_id: str, keys: Sequence[str]) -> list[PartitionRun]:
        """One ``GET /api/v2/dags/{dag_id}/dagRuns?partition_key_pattern=`` per key (a
        substring match: exact keys are kept)."""
        out: list[PartitionRun] = []
        for key in keys:
            found = self.call("GET", f"/api/v2/dags/{_quote(dag_id)}/dagRuns", query={
                "partition_key_pattern": key, "limit": 100})
            for run in found["dag_runs"]:
                if run.get("partition_key") != key:
                    continue
                when = run.get("queued_at") or run.get("run_after")
                out.append(PartitionRun(str(run["dag_run_id"]), key, str(run["state"]),
                                        _instant(str(when)) if when else _LONG_AGO))
        return out

    def trigger_partition_run(self, dag_id: str, key: str) -> None:
        """One run of the DAG for ``key``, started by hand (``POST .../dagRuns`` with a
        ``partition_key`` and no logical date)."""
        self.call("POST", f"/api/v2/dags/{_quote(dag_id)}/dagRuns",
                  {"logical_date": None, "partition_key": key})

    def run_failed_tasks(self, dag_id: str, run_ids: Sequence[str]) -> list[str]:
        tasks: set[str] = set()
        for run_id in run_ids[:5]:
            tis = self.call("GET", f"/api/v2/dags/{_quote(dag_id)}/dagRuns/"
                             f"{_quote(run_id)}/taskInstances")
            tasks |= {t["task_id"] for t in tis["task_instances"]
                      if t["state"] in {"failed", "upstream_failed"}}
        return sorted(tasks)

    def failed_tasks(self, dag_id: str, logical_dates: Sequence[dt.datetime]) -> list[str]:
        tasks: set[str] = set()
        for date in logical_dates[:5]:
            runs = self.call("GET", f"/api/v2/dags/{_quote(dag_id)}/dagRuns", query={
                "logical_date_gte": date.isoformat(), "logical_date_lte": date.isoformat()})
            for run in runs["dag_runs"]:
                tis = self.call("GET", f"/api/v2/dags/{_quote(dag_id)}/dagRuns/"
                                 f"{_quote(run['dag_run_id'])}/taskInstances")
                tasks |= {t["task_id"] for t in tis["task_instances"]
                          if t["state"] in {"failed", "upstream_failed"}}
        return sorted(tasks)


_LONG_AGO = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
