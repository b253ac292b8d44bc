"""The verification memos never change an answer.

A verified cover reads again only the rows written since its last check (the SQLite change
feed; every row of its runs on a store without one), and keeps its checked runs
(``catalog/rows/runs.py``, ``catalog/slices/sliced_runs.py``). Property: after any sequence
of registers, drops and damage behind the catalog's back (no generation bump; on SQLite also
a row deleted by a second connection, which only the store's change stamp sees), on a fact
with a declared dimension and one without, the answer with the memos is the answer with
every memo and kept decode forgotten first: the same runs, the same missing ranges, the same
manifest rows. Every backend.
"""

from __future__ import annotations

import datetime as dt
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, forget_kept
from airflow_partitions.catalog.covers.verified import VerifiedCover
from airflow_partitions.catalog.rows.layout import STATE
from airflow_partitions.cover import CoverRequest
from tests.hypothesis_budget import examples
from tests.kv.raw_sqlite import delete_elsewhere

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
HOURS = 12
REGIONS = ("eu", "us")
_names = itertools.count()


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def answer(verified: VerifiedCover) -> tuple[object, ...]:
    cover = verified.cover
    return (cover.coverable, tuple(cover.runs), tuple(m.describe() for m in cover.missing),
            tuple((p.storage, p.period, tuple(sorted(p.values.items())), p.location)
                  for p in verified.partitions))


operations = st.lists(st.tuples(st.sampled_from(["add", "drop", "damage", "behind", "cover"]),
                                st.integers(0, HOURS - 1), st.sampled_from(REGIONS)),
                      max_size=14)


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations, dimension=st.booleans())
def test_the_memos_never_change_an_answer(catalog: Catalog, ops: list[tuple[str, int, str]],
                                          dimension: bool) -> None:
    fact = f"m{next(_names)}"
    raw = f"{fact}_raw"
    catalog.create_fact(fact)
    catalog.create_storage(fact, raw, ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"] if dimension else [])
    catalog.register(raw, "HOURLY", [{"dt": hour(h), "region": r}
                                     for h in range(HOURS) for r in REGIONS])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(hours=HOURS), periods="HOURLY")
    sdef = catalog.get_storage(raw)
    for op, h, region in [*ops, ("cover", 0, "eu")]:
        values = {"dt": hour(h), "region": region}
        if op == "add":
            catalog.register(raw, "HOURLY", [values])
        elif op == "drop":
            catalog.drop(raw, "HOURLY", [values])
        elif op == "damage":  # a state nobody wrote: the row is never used from now on
            [(_, key)] = catalog.keyed_specs(sdef, "HOURLY", values)
            if catalog.rows.partitions.get(key):
                catalog.rows.partitions.put(key, {STATE: b"weird"})
        elif op == "behind":  # the row deleted by someone else: another connection
            [(_, key)] = catalog.keyed_specs(sdef, "HOURLY", values)
            if not delete_elsewhere(catalog.kv, catalog.rows.partitions.name, key):
                catalog.rows.partitions.delete(key)  # HBase: through the table
        remembered = answer(catalog.cover_with_partitions(request))
        forget_kept()  # every memo and kept decode of the process
        assert answer(catalog.cover_with_partitions(request)) == remembered
        assert answer(catalog.cover_with_partitions(request)) == remembered  # memos again
