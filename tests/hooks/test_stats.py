"""Coverage metrics on the wire: a StatsD listener on a loopback UDP port receives what the
``metrics`` command, the sensor and the trigger publish through Airflow's ``Stats``; with
Airflow's metrics off nothing arrives and nothing fails."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pendulum
import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import MAX_SLICE_TAGS, CoverRequest
from airflow_partitions.hooks import stats as publisher
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from tests.helpers import (
    LOGICAL_DATE,
    T0,
    VENV_BIN,
    AirflowHome,
    region_hours,
    regions_fact,
    register_hours,
    unique,
)

#: ``prefix.name[,tag=value...]:value|g`` (the influxdb tag format Airflow's StatsD logger writes)
DATAGRAM = re.compile(r"^(?P<name>[^,:]+)(?P<tags>(?:,[^,=:]+=[^,:]+)*):(?P<value>[^|]+)\|g$")


class Listener:
    """A StatsD server stand-in: a UDP socket on 127.0.0.1 and a port chosen by the system."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]

    def env(self, *, tags: bool = True) -> dict[str, str]:
        """Airflow's ``[metrics]`` pointed at this listener."""
        return {"AIRFLOW__METRICS__STATSD_ON": "True",
                "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
                "AIRFLOW__METRICS__STATSD_PORT": str(self.port),
                "AIRFLOW__METRICS__STATSD_PREFIX": "airflow",
                "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": str(tags)}

    def gauges(self, quiet: float = 1.0) -> list[tuple[str, dict[str, str], float]]:
        """Every gauge received until nothing came for ``quiet`` seconds: (name, tags, value).
        Airflow's own metrics (timers, counters) are left out."""
        self.sock.settimeout(quiet)
        out = []
        while True:
            try:
                data = self.sock.recv(65536).decode()
            except TimeoutError:
                return out
            for line in data.splitlines():
                match = DATAGRAM.match(line)
                if match and ".partitions." in match["name"]:
                    tags = dict(t.split("=", 1) for t in match["tags"].split(",") if t)
                    out.append((match["name"], tags, float(match["value"])))


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.sock.close()


def tagged(gauges: list[tuple[str, dict[str, str], float]]) -> dict[tuple[str, str], float]:
    """``{(name, "fact=..,storage=.."): value}`` of the tagged gauges (last one wins)."""
    return {(n, ",".join(f"{k}={v}" for k, v in t.items())): v for n, t, v in gauges if t}


# -- the command, in a subprocess (Airflow configures Stats once per process) --------------------

def run_metrics(tmp_path: Path, store: str, env: dict[str, str], *args: str) -> Any:
    base = {"PATH": str(VENV_BIN), "AIRFLOW_HOME": str(tmp_path / "home"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(VENV_BIN / "airflow-partitions"), "--store", store, "metrics", "events",
         "--start", T0.isoformat(), "--end", T0.add(hours=4).isoformat(), *args],
        capture_output=True, text=True, env={**base, **env}, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_command_publishes_tagged_gauges(events: Catalog, store_url: str, tmp_path: Path,
                                             listener: Listener) -> None:
    register_hours(events, 0, 1)  # raw: 2 of 4 hours; rollup: nothing
    done = run_metrics(tmp_path, store_url, listener.env(), "--json")
    printed = json.loads(done.stdout)
    assert printed["published"] is True
    assert printed["covered_fraction"] == 0.5 and printed["missing_partitions"] == 2
    [raw, rollup] = printed["lateness"]
    assert (raw["storage"], raw["latest_end"]) == ("raw", T0.add(hours=2).isoformat())
    assert rollup == {"storage": "rollup", "latest_end": None, "seconds": None}

    got = listener.gauges()
    assert tagged(got) == {
        ("airflow.partitions.coverage.fraction", "fact=events"): 0.5,
        ("airflow.partitions.coverage.missing", "fact=events"): 2.0,
        ("airflow.partitions.lateness_seconds", "fact=events,storage=raw"):
            pytest.approx(raw["seconds"], abs=0.01),
    }
    # legacy_names_on (Airflow's default): the same values under names that carry the tags
    flat = {n: v for n, t, v in got if not t}
    assert flat == {"airflow.partitions.coverage.fraction.events": 0.5,
                    "airflow.partitions.coverage.missing.events": 2.0,
                    "airflow.partitions.lateness_seconds.events.raw":
                        pytest.approx(raw["seconds"], abs=0.01)}
    lateness = (pendulum.parse(printed["now"]) - T0.add(hours=2)).total_seconds()
    assert raw["seconds"] == pytest.approx(lateness)


def test_without_tag_support_only_the_names_tell_facts_apart(
        events: Catalog, store_url: str, tmp_path: Path, listener: Listener) -> None:
    register_hours(events, 0, 3)
    run_metrics(tmp_path, store_url, listener.env(tags=False))
    got = listener.gauges()
    assert ("airflow.partitions.coverage.fraction.events", {}, 1.0) in got
    assert ("airflow.partitions.coverage.missing.events", {}, 0.0) in got
    assert all(not tags for _, tags, _ in got)


def test_with_metrics_off_nothing_is_sent(events: Catalog, store_url: str, tmp_path: Path,
                                          listener: Listener) -> None:
    register_hours(events, 0, 1)
    # the port is there, but [metrics] statsd_on is off (the default)
    off = {**listener.env(), "AIRFLOW__METRICS__STATSD_ON": "False"}
    done = run_metrics(tmp_path, store_url, off)
    assert "covered fraction    0.5" in done.stdout
    assert "not published: Airflow metrics are off" in done.stdout
    assert listener.gauges(quiet=1.5) == []


# -- the sensor and the trigger, in this process ------------------------------------------------

@pytest.fixture
def metrics_on(listener: Listener, monkeypatch: pytest.MonkeyPatch) -> Iterator[Listener]:
    """Airflow's metrics pointed at the listener in this process; Stats re-initialized from
    the restored (off) configuration afterwards."""
    for key, value in listener.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(publisher, "_initialized", False)
    monkeypatch.setattr(publisher, "_settings", None)  # read once per process: read them again
    yield listener
    monkeypatch.undo()
    from airflow.sdk.observability.metrics.stats_utils import get_stats_factory
    from airflow.sdk.observability.stats import Stats

    Stats.initialize(factory=get_stats_factory(), export_legacy_names=True)


def sensor(**kwargs: Any) -> PartitionCoverageSensor:
    args: dict[str, Any] = {"task_id": "wait", "fact": "events", "start": T0,
                            "end": T0.add(hours=4), "poke_interval": 0, "timeout": 0}
    return PartitionCoverageSensor(**{**args, **kwargs})


def test_the_sensor_publishes_at_each_poke(events: Catalog, metrics_on: Listener) -> None:
    task = sensor()
    register_hours(events, 0, 0)
    assert task.poke({}) is False
    register_hours(events, 1, 3)
    assert task.poke({})
    got = tagged(metrics_on.gauges())
    assert got[("airflow.partitions.coverage.fraction", "fact=events")] == 1.0
    assert got[("airflow.partitions.coverage.missing", "fact=events")] == 0.0
    assert metrics_on.gauges(quiet=0.2) == []  # nothing more without a poke


def test_the_sensor_sends_each_poke_in_order(events: Catalog, metrics_on: Listener) -> None:
    task = sensor()
    register_hours(events, 0, 0)
    task.poke({})
    register_hours(events, 1, 2)
    task.poke({})
    fractions = [v for n, t, v in metrics_on.gauges()
                 if n == "airflow.partitions.coverage.fraction" and t]
    assert fractions == [0.25, 0.75]


def test_the_sensor_sends_nothing_with_metrics_off(events: Catalog, listener: Listener,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_PORT", str(listener.port))
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_ON", "False")
    monkeypatch.setattr(publisher, "_settings", None)
    register_hours(events, 0, 3)
    assert sensor().poke({})
    assert listener.gauges(quiet=0.5) == []


@pytest.fixture
def settings_forgotten() -> Iterator[None]:
    """The process's ``[metrics]`` read afresh before the test and after it, so what the test
    turned on does not stay read for the next tests of this worker."""
    publisher.forget_settings()
    yield
    publisher.forget_settings()


def test_the_metrics_settings_are_read_once_per_process(
        events: Catalog, listener: Listener, monkeypatch: pytest.MonkeyPatch,
        settings_forgotten: None) -> None:
    """An idle poke with metrics off does not read the four ``[metrics]`` settings; they
    are read once, and a change needs a restart (as for Airflow's own ``Stats``)."""
    reads: list[int] = []
    conf = publisher.airflow_conf

    def counting() -> Any:
        reads.append(1)
        return conf()

    monkeypatch.setattr(publisher, "airflow_conf", counting)
    register_hours(events, 0, 1)
    task = sensor()
    for _ in range(5):
        assert task.poke({}) is False
    assert len(reads) == 1
    for key, value in listener.env().items():  # turned on in the middle: not seen
        monkeypatch.setenv(key, value)
    assert task.poke({}) is False
    assert len(reads) == 1 and listener.gauges(quiet=0.3) == []
    publisher.forget_settings()  # what a restart does
    assert publisher.metrics_enabled() and len(reads) == 2


def test_the_target_is_named_when_metrics_were_turned_off_since_they_were_read(
        listener: Listener, monkeypatch: pytest.MonkeyPatch, settings_forgotten: None) -> None:
    """The settings are read once per process: a [metrics] turned off since then must not make
    the CLI's 'published to ...' line fail (it raised StopIteration)."""
    for key, value in listener.env().items():
        monkeypatch.setenv(key, value)
    assert publisher.metrics_enabled()
    assert publisher.metrics_target().startswith("statsd 127.0.0.1:")
    for key in listener.env():
        monkeypatch.delenv(key)
    assert publisher.metrics_enabled()  # as first read
    assert publisher.metrics_target().startswith("nowhere now: [metrics] was turned off")


def test_with_metrics_on_an_idle_poke_is_still_one_round_trip(
        events: Catalog, metrics_on: Listener) -> None:
    """The gauges are measured from the fact state the poke just read, not read again; they
    are sent at every poke (the lateness grows while nothing changes)."""
    register_hours(events, 0, 1)
    task = sensor()
    assert task.poke({}) is False
    events.stats.reset()
    assert task.poke({}) is False
    assert task.poke({}) is False
    assert events.stats.round_trips == 2
    lateness = [v for n, t, v in metrics_on.gauges()
                if n == "airflow.partitions.lateness_seconds" and t]
    assert len(lateness) == 3 and lateness == sorted(lateness)


def test_the_trigger_publishes_when_the_picture_changes(events: Catalog,
                                                        metrics_on: Listener) -> None:
    register_hours(events, 0, 1)
    request = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()

    async def scenario() -> Any:
        run = PartitionCoverageTrigger(request=request, poke_interval=0.05).run()
        waiting = asyncio.ensure_future(run.__anext__())
        await asyncio.sleep(0.5)  # many polls, one picture: one send
        await asyncio.to_thread(register_hours, events, 2, 3)
        return await asyncio.wait_for(waiting, 30)

    assert asyncio.run(scenario()).payload["status"] == "success"
    fractions = [v for n, t, v in metrics_on.gauges()
                 if n == "airflow.partitions.coverage.fraction" and t]
    assert fractions == [0.5, 1.0]


def test_the_sensor_sends_the_slice_gauges(catalog: Catalog, metrics_on: Listener) -> None:
    """Over a (dt, region) storage with domain eu, us where eu lacks two hours: the incomplete
    slices, the worst slice's missing partitions, and one gauge per region (us at 0) reach the
    wire with the region as a tag; once eu's hours are there every slice gauge drops to 0."""
    regions_fact(catalog)
    task = sensor(fact="ev")
    assert task.poke({}) is False
    got = tagged(metrics_on.gauges())
    assert got[("airflow.partitions.coverage.missing", "fact=ev")] == 2.0
    assert got[("airflow.partitions.coverage.incomplete_slices", "fact=ev")] == 1.0
    assert got[("airflow.partitions.coverage.worst_slice_missing", "fact=ev")] == 2.0
    assert got[("airflow.partitions.coverage.slice_missing", "fact=ev,region=eu")] == 2.0
    assert got[("airflow.partitions.coverage.slice_missing", "fact=ev,region=us")] == 0.0
    region_hours(catalog, "eu", 2, 3)
    assert task.poke({})
    got = tagged(metrics_on.gauges())
    assert got[("airflow.partitions.coverage.incomplete_slices", "fact=ev")] == 0.0
    assert got[("airflow.partitions.coverage.slice_missing", "fact=ev,region=eu")] == 0.0


def test_many_slices_send_no_per_slice_gauge(catalog: Catalog, metrics_on: Listener) -> None:
    """Above MAX_SLICE_TAGS required slices only the fact-level gauges go out."""
    regions = [f"r{i:02d}" for i in range(MAX_SLICE_TAGS + 1)]
    catalog.create_fact("wide")
    catalog.create_storage("wide", "wide_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=" + ",".join(regions)])
    catalog.register("wide_raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": r}
                                            for r in regions[1:] for h in range(4)])
    assert sensor(fact="wide").poke({}) is False
    got = metrics_on.gauges()
    assert not [n for n, _, _ in got if "slice_missing" in n and "worst" not in n]
    values = tagged(got)
    assert values[("airflow.partitions.coverage.incomplete_slices", "fact=wide")] == 1.0
    assert values[("airflow.partitions.coverage.worst_slice_missing", "fact=wide")] == 4.0


# -- the sensor under `airflow dags test` (a task process configured by Airflow) ----------------

SENSOR_DAG = '''
import pendulum
from airflow.sdk import DAG
from airflow_partitions.sensors.coverage import PartitionCoverageSensor

with DAG("{dag_id}", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    PartitionCoverageSensor(task_id="wait", fact="{fact}", poke_interval=1, timeout=60,
                            start="2024-01-01T00:00:00+00:00", end="2024-01-01T03:00:00+00:00")
'''


def test_a_dag_run_publishes_the_sensor_metrics(airflow_home: AirflowHome,
                                                listener: Listener) -> None:
    fact, dag_id = unique("metered"), unique("partitions_metrics_")
    with Catalog(airflow_home.store_url) as catalog:
        catalog.create_fact(fact)
        catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"])
        catalog.register(f"{fact}_raw", "HOURLY", [{"dt": f"2024-01-01-0{h}"} for h in range(3)])
    (airflow_home.dags / f"{dag_id}.py").write_text(SENSOR_DAG.format(dag_id=dag_id, fact=fact))
    done = airflow_home.airflow("dags", "test", dag_id, LOGICAL_DATE, env=listener.env())
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    got = tagged(listener.gauges())
    assert got[("airflow.partitions.coverage.fraction", f"fact={fact}")] == 1.0
    assert got[("airflow.partitions.coverage.missing", f"fact={fact}")] == 0.0
    late = got[("airflow.partitions.lateness_seconds", f"fact={fact},storage={fact}_raw")]
    assert late == pytest.approx(
        (pendulum.now("UTC") - pendulum.datetime(2024, 1, 1, 3)).total_seconds(), abs=300)
