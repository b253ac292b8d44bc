"""A pure-Python model of the KV interface, written independently of the backends.

It is deliberately naive (a dict, sorted on every scan) so that its answers are obviously right.
"""

from __future__ import annotations

import re

from airflow_partitions.kv import KVStore
from airflow_partitions.kv.scan_filters import (
    ColumnRange,
    FilterList,
    PrefixFilter,
    RowRange,
    ScanFilter,
    SingleColumnValue,
)

Rows = dict[bytes, dict[bytes, bytes]]


def backend_kind(store: KVStore) -> str:
    """``sqlite`` or ``hbase``."""
    return "sqlite" if store.url.startswith("sqlite") else "hbase"


def _cmp(a: bytes, b: bytes) -> int:
    return -1 if a < b else (1 if a > b else 0)


def _holds(op: str, c: int) -> bool:
    return {"<": c < 0, "<=": c <= 0, "=": c == 0, "!=": c != 0, ">": c > 0, ">=": c >= 0}[op]


def _scv_passes(f: SingleColumnValue, cells: dict[bytes, bytes]) -> bool:
    if f.column not in cells:
        return not f.filter_if_missing
    v = cells[f.column]
    if f.comparator == "binary":
        return _holds(f.op, _cmp(v, f.value))
    if f.comparator == "binaryprefix":
        return _holds(f.op, _cmp(v[: len(f.value)], f.value))
    if f.comparator == "regexstring":
        found = re.search(f.value, v, re.DOTALL) is not None
    else:
        found = f.value.decode("utf-8", "replace").lower() in v.decode("utf-8", "replace").lower()
    return found if f.op == "=" else not found


def keep(f: ScanFilter, row: bytes, cells: dict[bytes, bytes]) -> set[bytes] | None:
    """The set of columns ``f`` keeps, or None when it drops the row."""
    if isinstance(f, PrefixFilter):
        return set(cells) if row[: len(f.prefix)] == f.prefix else None
    if isinstance(f, RowRange):
        ok = True
        if f.start is not None:
            ok = ok and (row >= f.start if f.start_inclusive else row > f.start)
        if f.stop is not None:
            ok = ok and (row <= f.stop if f.stop_inclusive else row < f.stop)
        return set(cells) if ok else None
    if isinstance(f, ColumnRange):
        kept = set()
        for col in cells:
            q = col.split(b":", 1)[1]
            lo_ok = not f.min or (q >= f.min if f.min_inclusive else q > f.min)
            hi_ok = not f.max or (q <= f.max if f.max_inclusive else q < f.max)
            if lo_ok and hi_ok:
                kept.add(col)
        return kept or None
    if isinstance(f, SingleColumnValue):
        return set(cells) if _scv_passes(f, cells) else None
    assert isinstance(f, FilterList)
    results = [keep(m, row, cells) for m in f.filters]
    if f.op == "AND":
        if any(r is None for r in results):
            return None
        out = set(cells)
        for r in results:
            assert r is not None
            out &= r
        return out or None
    union: set[bytes] = set()
    for r in results:
        if r is not None:
            union |= r
    return union or None


def model_scan(
    rows: Rows,
    start: bytes | None = None,
    stop: bytes | None = None,
    columns: list[bytes] | None = None,
    f: ScanFilter | None = None,
    limit: int | None = None,
    reverse: bool = False,
) -> list[tuple[bytes, dict[bytes, bytes]]]:
    out = []
    for row in sorted(rows, reverse=reverse):
        if start is not None and row < start:
            continue
        if stop is not None and row >= stop:
            continue
        cells = {
            c: v
            for c, v in rows[row].items()
            if columns is None or c in columns or c.split(b":")[0] in columns
        }
        if not cells:
            continue
        if f is not None:
            kept = keep(f, row, cells)
            if kept is None:
                continue
            cells = {c: v for c, v in cells.items() if c in kept}
        out.append((row, cells))
    return out[:limit] if limit is not None else out
