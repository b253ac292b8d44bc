"""Staleness: exactly the dependants of a restated or dropped input, transitively.

Example tests run on every backend; the property test compares ``Catalog.stale`` with a
brute-force reachability over a model of random lineage graphs and random restates and drops.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.lineage.staleness import StalePartition
from tests.helpers import module_catalog, unique
from tests.hypothesis_budget import examples

HOURS = [f"2015-01-02-{h:02d}" for h in range(24)]


def _in(storage: str, period: str, dt: str, version: int = 1) -> dict[str, Any]:
    return {"storage": storage, "period": period, "values": {"dt": dt}, "version": version}


@pytest.fixture
def chain(catalog: Catalog) -> Catalog:
    """events_raw HOURLY (2 days) -> events_daily DAILY (2 days) -> events_daily MONTHLY."""
    catalog.create_fact("events")
    catalog.create_storage("events", "events_raw", ["HOURLY"])
    catalog.create_storage("events", "events_daily", ["DAILY", "MONTHLY"], priority=5)
    for day in ("2015-01-02", "2015-01-03"):
        hours = [f"{day}-{h:02d}" for h in range(24)]
        catalog.register("events_raw", "HOURLY", [{"dt": h} for h in hours])
        catalog.register("events_daily", "DAILY", {"dt": day},
                         inputs=[_in("events_raw", "HOURLY", h) for h in hours])
    catalog.register("events_daily", "MONTHLY", {"dt": "2015-01"},
                     inputs=[_in("events_daily", "DAILY", d) for d in ("2015-01-02",
                                                                        "2015-01-03")])
    return catalog


def _names(stale: list[StalePartition]) -> list[str]:
    return [f"{s.partition.period.name} {s.partition.values['dt']}" for s in stale]


def test_nothing_is_stale_after_a_clean_build(chain: Catalog) -> None:
    assert chain.stale("events") == []


def test_a_restated_hour_marks_its_day_and_the_month_built_from_it(chain: Catalog) -> None:
    chain.register("events_raw", "HOURLY", {"dt": "2015-01-02-05"}, restate=True)
    stale = chain.stale("events")
    assert _names(stale) == ["DAILY 2015-01-02", "MONTHLY 2015-01"]
    day, month = stale
    [change] = day.changed
    assert (change.reason, change.input.version, change.current_version) == ("restated", 1, 2)
    assert day.reason() == "input events_raw HOURLY 2015-01-02-05 restated"
    [via] = month.changed
    assert via.reason == "stale" and via.input.describe() == "events_daily DAILY 2015-01-02"
    assert [v.input.describe() for v in via.via] == ["events_raw HOURLY 2015-01-02-05"]
    assert month.to_json()["changed"][0]["via"][0]["current_version"] == 2


def test_rebuilding_the_day_leaves_only_the_month_stale(chain: Catalog) -> None:
    chain.register("events_raw", "HOURLY", {"dt": "2015-01-02-05"}, restate=True)
    hours = [_in("events_raw", "HOURLY", h) for h in HOURS]
    hours[5]["version"] = 2
    chain.register("events_daily", "DAILY", {"dt": "2015-01-02"}, inputs=hours)
    [month] = chain.stale("events")
    assert _names([month]) == ["MONTHLY 2015-01"]
    assert month.reason() == "input events_daily DAILY 2015-01-02 restated"
    chain.register("events_daily", "MONTHLY", {"dt": "2015-01"}, inputs=[
        _in("events_daily", "DAILY", "2015-01-02", 2), _in("events_daily", "DAILY", "2015-01-03")])
    assert chain.stale("events") == []


def test_a_dropped_input_marks_its_dependants(chain: Catalog) -> None:
    chain.drop("events_raw", "HOURLY", {"dt": "2015-01-03-23"})
    stale = chain.stale("events")
    assert _names(stale) == ["DAILY 2015-01-03", "MONTHLY 2015-01"]
    assert stale[0].changed[0].reason == "dropped" and stale[0].changed[0].current_version is None
    assert "via events_raw HOURLY 2015-01-03-23 dropped" in stale[1].reason()


def test_the_range_keeps_partitions_that_overlap_it(chain: Catalog) -> None:
    chain.register("events_raw", "HOURLY", [{"dt": "2015-01-02-05"}, {"dt": "2015-01-03-05"}],
                   restate=True)
    assert _names(chain.stale("events", "2015-01-03T00:00Z", "2015-01-04T00:00Z")) == [
        "DAILY 2015-01-03", "MONTHLY 2015-01"]
    assert _names(chain.stale("events", "2015-01-02T06:00Z", "2015-01-02T07:00Z")) == [
        "DAILY 2015-01-02", "MONTHLY 2015-01"]
    assert chain.stale("events", "2015-02-01T00:00Z", "2015-03-01T00:00Z") == []
    assert _names(chain.stale("events", end="2015-01-03T00:00Z")) == [
        "DAILY 2015-01-02", "MONTHLY 2015-01"]


def test_reads_are_batched_not_one_per_partition(chain: Catalog) -> None:
    """31 days of 24 hours cost about as many round trips as 2 days: batches, not rows."""
    def trips() -> int:
        chain.stats.reset()
        chain.stale("events")
        return int(chain.stats.round_trips)

    chain.register("events_raw", "HOURLY", {"dt": "2015-01-02-05"}, restate=True)
    small = trips()
    days = [f"2015-01-{d:02d}" for d in range(4, 32)]
    for day in days:
        hours = [f"{day}-{h:02d}" for h in range(24)]
        chain.register("events_raw", "HOURLY", [{"dt": h} for h in hours])
        chain.register("events_daily", "DAILY", {"dt": day},
                       inputs=[_in("events_raw", "HOURLY", h) for h in hours])
    assert trips() <= small + 4  # 28 more days and 672 more hours: one more batch at most


def test_fresh_only_cover_falls_back_and_says_what_it_skipped(chain: Catalog) -> None:
    day = ("2015-01-02T00:00Z", "2015-01-03T00:00Z")
    assert [p.period.name for p in chain.cover("events", *day).partitions] == ["DAILY"]
    assert chain.cover("events", *day, fresh_only=True).skipped == ()
    chain.register("events_raw", "HOURLY", {"dt": "2015-01-02-05"}, restate=True)
    plain = chain.cover("events", *day)
    assert [p.period.name for p in plain.partitions] == ["DAILY"]
    fresh = chain.cover("events", *day, fresh_only=True)
    assert fresh.coverable and [p.value for p in fresh.partitions] == HOURS
    [skipped] = fresh.skipped
    assert skipped.describe() == ("DAILY 2015-01-02 of events_daily skipped: stale (input "
                                  "events_raw HOURLY 2015-01-02-05 restated)")
    assert fresh.to_json()["skipped"][0]["value"] == "2015-01-02"
    assert "skipped: stale" in str(fresh)
    # the fresh day next to it is still used
    two = chain.cover("events", "2015-01-02T00:00Z", "2015-01-04T00:00Z", fresh_only=True)
    assert [p.period.name for p in two.partitions] == ["HOURLY"] * 24 + ["DAILY"]


def test_fresh_only_says_stale_when_nothing_fresh_is_left(chain: Catalog) -> None:
    from airflow_partitions.cover import status_line

    chain.register("events_raw", "HOURLY", {"dt": "2015-01-02-05"}, restate=True)
    cover = chain.cover("events", "2015-01-02T00:00Z", "2015-01-03T00:00Z", fresh_only=True,
                        periods=["DAILY"])
    assert not cover.coverable
    assert status_line(cover).endswith("DAILY 2015-01-02 of events_daily skipped: stale (input "
                                       "events_raw HOURLY 2015-01-02-05 restated)")


# -- the property: Catalog.stale equals brute-force reachability over a model ---------------------

@dataclass
class Model:
    """What the catalog should hold: live nodes, their versions and recorded lineage."""

    version: dict[int, int] = field(default_factory=dict)
    inputs: dict[int, dict[int, int]] = field(default_factory=dict)  # node -> {input: version}

    def broken(self, node: int) -> bool:
        return any(i not in self.version or self.version[i] != v
                   for i, v in self.inputs.get(node, {}).items())

    def stale(self) -> set[int]:
        """Nodes from which a broken edge is reachable through live nodes (breadth first)."""
        out = set()
        for start in self.version:
            seen, todo = {start}, [start]
            while todo:
                node = todo.pop()
                if self.broken(node):
                    out.add(start)
                    break
                for i in self.inputs.get(node, {}):
                    if i not in seen:
                        seen.add(i)
                        todo.append(i)
        return out


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[list[int]], list[tuple[str, int]]]:
    """A random DAG (each node's inputs are earlier nodes) and random operations."""
    count = draw(st.integers(3, 14))
    parents = [sorted(draw(st.sets(st.integers(0, i - 1), max_size=4))) if i else []
               for i in range(count)]
    ops = draw(st.lists(st.tuples(st.sampled_from(["restate", "drop", "readd", "rebuild"]),
                                  st.integers(0, count - 1)), max_size=8))
    return parents, ops


@pytest.fixture(scope="module")
def prop_catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[Catalog]:
    cat = module_catalog(request, tmp_path_factory, "stale")
    yield cat
    cat.close()


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_stale_equals_brute_force_reachability(
        prop_catalog: Catalog, scenario: tuple[list[list[int]], list[tuple[str, int]]]) -> None:
    parents, ops = scenario
    fact, storage = unique("f"), unique("s")
    cat = prop_catalog
    cat.create_fact(fact)
    cat.create_storage(fact, storage, ["HOURLY"])
    value = [f"2015-01-01-{i:02d}" for i in range(len(parents))]
    model = Model()

    def build(node: int, restate: bool = False) -> None:
        recorded = {i: model.version[i] for i in parents[node] if i in model.version}
        lineage = [_in(storage, "HOURLY", value[i], v) for i, v in recorded.items()]
        result = cat.register(storage, "HOURLY", {"dt": value[node]}, restate=restate,
                              inputs=lineage if parents[node] else None)
        if node in model.version and result.changed:
            model.version[node] += 1
        model.version.setdefault(node, 1)
        if parents[node]:
            model.inputs[node] = recorded

    for node in range(len(parents)):
        build(node)
    for op, node in ops:
        if op == "drop":
            cat.drop(storage, "HOURLY", {"dt": value[node]})
            model.version.pop(node, None)
            model.inputs.pop(node, None)
        elif op == "restate" and node in model.version:
            cat.register(storage, "HOURLY", {"dt": value[node]}, restate=True)
            model.version[node] += 1
        elif op in ("readd", "rebuild"):
            build(node, restate=op == "rebuild")
    got = {value.index(s.partition.values["dt"]) for s in cat.stale(fact)}
    assert got == model.stale() & set(model.inputs)
    for s in cat.stale(fact):  # each names exactly its broken or stale inputs
        node = value.index(s.partition.values["dt"])
        named = {value.index(c.input.values[0][1]) for c in s.changed}
        assert named == {i for i in model.inputs[node]
                         if i not in model.version or model.version[i] != model.inputs[node][i]
                         or i in got}
