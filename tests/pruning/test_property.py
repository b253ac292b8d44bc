"""Pruning never changes a join's result: a pure-Python join over random data, pruned vs not.

The big table has partitions keyed (dt, region, shop:int) and a non-partition column ``x``.
Random chains of 1-3 joins (every join type, the big table on either side, keys bare or
wrapped in ``upper``, on partition and non-partition columns) with small tables holding NULL
keys are evaluated row by row with SQL semantics (NULL never equals anything), once over all
partitions and once over the pruned ones. The results must be equal as multisets; when the
decision bails out, the pruned list must be the full list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, Partition, StorageDef
from airflow_partitions.keys import ColumnType
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.pruning import JoinSpec, analyse, prune, prune_partitions
from tests.helpers import unique
from tests.hypothesis_budget import examples

SDEF = StorageDef(
    name="big", fact="ev",
    columns=(("dt", ColumnType.STRING), ("region", ColumnType.STRING), ("shop", ColumnType.INT)),
    time_columns=("dt",), periods=(UpdatePeriod.HOURLY,), location="/d/{dt}/{region}/{shop}",
)
HOURS = ("2024-01-01-00", "2024-01-01-01", "2024-01-01-02")
REGIONS = ("a", "b", "c")
BIG_KEYS = {"region": "k", "shop": "s", "x": "s", "upper(region)": "k", "dt": "d"}
SMALL_KEYS = {"k": st.sampled_from(["a", "b", "A", "B", "z"]), "s": st.integers(0, 3),
              "d": st.sampled_from(HOURS[:2])}

Row = dict[str, Any]


@dataclass(frozen=True)
class Case:
    partitions: list[Partition]
    rows: dict[int, list[Row]]  # partition index -> rows
    smalls: dict[str, list[Row]]
    specs: list[JoinSpec]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    combos = [(h, r, s) for h in HOURS for r in REGIONS for s in range(3)]
    chosen = draw(st.lists(st.sampled_from(combos), min_size=1, max_size=12, unique=True))
    parts = [Partition("big", UpdatePeriod.HOURLY, {"dt": h, "region": r, "shop": str(s)},
                       f"/d/{h}/{r}/{s}") for h, r, s in chosen]
    rows = {i: [{"x": draw(st.integers(0, 3))} for _ in range(draw(st.integers(0, 2)))]
            for i in range(len(parts))}
    smalls: dict[str, list[Row]] = {}
    specs = []
    for j in range(draw(st.integers(1, 3))):
        name = f"s{j}"
        smalls[name] = [
            {k: draw(st.none() | strategy) for k, strategy in SMALL_KEYS.items()}
            for _ in range(draw(st.integers(0, 4)))
        ]
        big_keys = draw(st.lists(st.sampled_from(sorted(BIG_KEYS)), min_size=1, max_size=2,
                                 unique=True))
        on = []
        for b in big_keys:
            small = BIG_KEYS[b]
            if small == "k" and draw(st.booleans()):
                small = "lower(k)"
            on.append((b, small))
        how = draw(st.sampled_from(["inner", "left", "right", "full", "left_semi"]))
        side = draw(st.sampled_from(["left", "right"]))
        specs.append(JoinSpec.of(name, on, how, side))
    return Case(parts, rows, smalls, specs)


def _value(row: Row | None, key: str) -> Any:
    if row is None:
        return None
    if key.startswith(("upper(", "lower(")):
        inner = row.get(key[6:-1])
        if inner is None:
            return None
        return inner.upper() if key.startswith("upper(") else inner.lower()
    return row.get(key)


def _matches(spec: JoinSpec) -> Callable[[Row | None, Row], bool]:
    def test(big: Row | None, small: Row) -> bool:
        for b, s in spec.on:
            left, right = _value(big, str(b)), _value(small, str(s))
            if left is None or right is None or left != right:
                return False
        return True
    return test


def join_chain(case: Case, parts: list[Partition]) -> Counter[tuple[Any, ...]]:
    """Evaluate the joins in order; an output row is (big row id, small row ids...)."""
    big: list[tuple[Row | None, tuple[Any, ...]]] = []
    for i, part in enumerate(case.partitions):
        if part not in parts:
            continue
        for n, extra in enumerate(case.rows[i]):
            row = {**part.values, "shop": int(part.values["shop"]), **extra}
            big.append((row, (("big", i, n),)))
    current = big
    for j, spec in enumerate(case.specs):
        small = [(r, (f"s{j}", n)) for n, r in enumerate(case.smalls[spec.small])]
        test = _matches(spec)
        out: list[tuple[Row | None, tuple[Any, ...]]] = []
        if spec.how == "left_semi":
            if spec.big_side == "left":
                out = [(b, ids) for b, ids in current if any(test(b, s) for s, _ in small)]
            else:
                out = [(None, (sid,)) for s, sid in small if any(test(b, s) for b, _ in current)]
            current = out
            continue
        keep_big = spec.how == "full" or spec.how == spec.big_side
        keep_small = spec.how == "full" or (spec.how in ("left", "right")
                                            and spec.how != spec.big_side)
        matched_small: set[int] = set()
        for b, ids in current:
            hit = False
            for n, (s, sid) in enumerate(small):
                if test(b, s):
                    hit = True
                    matched_small.add(n)
                    out.append((b, (*ids, sid)))
            if not hit and keep_big:
                out.append((b, (*ids, None)))
        if keep_small:
            out.extend((None, (None, sid)) for n, (s, sid) in enumerate(small)
                       if n not in matched_small)
        current = out
    return Counter(ids for _, ids in current)


def value_sets(case: Case) -> dict[str, dict[str, list[Any]]]:
    return {name: {k: [r[k] for r in rows] for k in SMALL_KEYS}
            for name, rows in case.smalls.items()}


@settings(max_examples=examples(400), deadline=None)
@given(cases())
def test_pruned_join_equals_unpruned_join(case: Case) -> None:
    analysis = analyse(case.specs, SDEF, value_sets(case))
    pruned = prune_partitions(case.partitions, analysis)
    assert join_chain(case, pruned) == join_chain(case, case.partitions)
    if analysis.bail_out is not None:
        assert pruned == case.partitions
    else:
        assert set(analysis.columns) <= {"region", "shop", "dt"}


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_catalog_query_equals_in_memory_pruning(catalog: Catalog, case: Case) -> None:
    name = unique("prop")
    catalog.create_storage("ev", name, ["HOURLY"], columns=["dt", "region", "shop:int"])
    catalog.register(name, "HOURLY", [p.values for p in case.partitions])
    sdef = catalog.get_storage(name)
    listed = list(catalog.list_partitions(name))
    analysis = analyse(case.specs, sdef, value_sets(case))
    expected = prune_partitions(listed, analysis)
    for max_scans in (64, 1):
        got = prune(catalog, case.specs, value_sets(case), storage=name, max_scans=max_scans)
        assert sorted(map(repr, got.partitions)) == sorted(map(repr, expected))
    cover = [p for p in listed if p.values["dt"] != HOURS[1]]  # a cover with a hole
    with_cover = prune(catalog, case.specs, value_sets(case), cover=cover)
    assert with_cover.partitions == prune_partitions(cover, analysis)
