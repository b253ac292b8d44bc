"""Filter -> store reads for one (storage, period): Hive-on-HBase's ScanPlan/MultiScanPlan, done
right.

The storage is seen only through its :class:`~airflow_partitions.keys.RowLayout` (key fields,
typed columns, cell names), so planning needs no catalog.

Each DNF conjunct becomes one read:

* every key column bound by equality -> a **get** (all such gets go out in one ``get_many``);
* otherwise a **scan** from the longest leading run of equality columns plus one range column,
  in key order, with a server-side filter for every other condition the store can evaluate
  (binary comparisons of the ``p:k.<col>`` cells, ``binaryprefix`` on ``p:v.<col>`` for
  ``LIKE 'prefix%'``), always ``filter_if_missing``;
* a contradiction (``m >= 5 AND m < 3``) -> nothing.

Then scans whose ranges overlap or touch are merged into one (each member keeps its own range
as a ``RowRange`` inside an ``OR``, so no row is read twice and none is let in wrongly), and a
get inside a merged scan joins it. A conjunct with no condition on the first key column makes
the whole period one full scan with the ``OR`` of every conjunct's complete filter, and so does
a filter whose DNF would exceed ``max_disjuncts`` (then the filter tree is sent as it is).

Bounds are computed on encoded bytes (:mod:`airflow_partitions.keys`: byte order = value order),
with exclusive bounds of discrete types (int, date, timestamp) made inclusive first, so
``k < 10 AND k <= 10`` is ``k <= 9`` and ``m = 1 AND m = 2`` is seen to be empty.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from airflow_partitions.filters.normalise import (
    ColCmp,
    ColPrefix,
    Conjunct,
    NAnd,
    Node,
    NOr,
    TooManyDisjuncts,
    to_dnf,
)
from airflow_partitions.filters.types import PyValue
from airflow_partitions.keys import (
    INT_RANGES,
    ColumnType,
    RowLayout,
    decode_value,
    encode_value,
    prefix_successor,
)
from airflow_partitions.kv import FilterList, RowRange, ScanFilter, SingleColumnValue
from airflow_partitions.periods import UpdatePeriod


@dataclass(frozen=True)
class ScanSpec:
    """Rows in ``[start, stop)`` that pass ``filter`` (``None``: every row of the range)."""

    start: bytes
    stop: bytes
    filter: ScanFilter | None = None


@dataclass(frozen=True)
class PeriodPlan:
    """The reads for one period; ``notes`` say why a plan is a full scan or a fallback."""

    period: UpdatePeriod
    scans: tuple[ScanSpec, ...]
    gets: tuple[bytes, ...]
    full_scan: bool
    disjuncts: int | None  # None when the DNF bound was exceeded
    notes: tuple[str, ...] = ()


# ------------------------------------------------------------------------------ column bounds
@dataclass
class _Bounds:
    """What one conjunct says about one column, as an interval of encoded field bytes."""

    ctype: ColumnType
    lo: bytes | None = None
    lo_inc: bool = True
    hi: bytes | None = None
    hi_inc: bool = True
    ne: list[bytes] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    not_prefixes: list[str] = field(default_factory=list)

    def lower(self, bound: bytes, inclusive: bool) -> None:
        if self.lo is None or bound > self.lo or (bound == self.lo and not inclusive):
            self.lo, self.lo_inc = bound, inclusive

    def upper(self, bound: bytes, inclusive: bool) -> None:
        if self.hi is None or bound < self.hi or (bound == self.hi and not inclusive):
            self.hi, self.hi_inc = bound, inclusive

    @property
    def empty(self) -> bool:
        if self.lo is None or self.hi is None:
            return False
        return self.lo > self.hi or (self.lo == self.hi and not (self.lo_inc and self.hi_inc))

    @property
    def point(self) -> bool:
        return self.lo is not None and self.lo == self.hi and self.lo_inc and self.hi_inc

    @property
    def ranged(self) -> bool:
        return self.lo is not None or self.hi is not None

    def exact_prefix(self) -> str | None:
        """The prefix whose interval this is exactly, if any (rendered as ``binaryprefix``)."""
        for prefix in self.prefixes:
            lo, hi = _prefix_interval(prefix)
            if (self.lo, self.lo_inc, self.hi, self.hi_inc) == (lo, True, hi, False):
                return prefix
        return None


def _prefix_interval(prefix: str) -> tuple[bytes, bytes | None]:
    """Field bytes of every string starting with ``prefix``: ``[01+esc(p), successor)``."""
    lo = encode_value(ColumnType.STRING, prefix)[:-2]  # drop the 00 01 terminator
    return lo, prefix_successor(lo)


def _step(ctype: ColumnType, value: Any, up: bool) -> Any | None:
    """The next (or previous) value of a discrete type; ``None`` past the end of the type."""
    sign = 1 if up else -1
    try:
        if ctype in INT_RANGES:
            low, high = INT_RANGES[ctype]
            nxt = value + sign
            return nxt if low <= nxt <= high else None
        if ctype is ColumnType.DATE:
            return value + dt.timedelta(days=sign)
        if ctype is ColumnType.TIMESTAMP:
            return value + dt.timedelta(microseconds=sign)
    except OverflowError:
        return None
    raise AssertionError(ctype)


def _constrain(bounds: dict[str, _Bounds], atom: ColCmp | ColPrefix) -> bool:
    """Add one atom; False when it alone is unsatisfiable (e.g. ``k > INT_MAX``)."""
    b = bounds[atom.column]
    if isinstance(atom, ColPrefix):
        if atom.negated:
            b.not_prefixes.append(atom.prefix)
        else:
            lo, hi = _prefix_interval(atom.prefix)
            b.lower(lo, True)
            if hi is not None:
                b.upper(hi, False)
            b.prefixes.append(atom.prefix)
        return True
    op = atom.op
    value: PyValue | None = atom.value
    discrete = b.ctype is not ColumnType.STRING
    if discrete and op in ("<", ">"):
        value = _step(b.ctype, value, up=op == ">")
        if value is None:
            return False
        op = "<=" if op == "<" else ">="
    encoded = encode_value(b.ctype, value, column=atom.column)
    if op == "!=":
        b.ne.append(encoded)
    if op in ("=", ">=", ">"):
        b.lower(encoded, op != ">")
    if op in ("=", "<=", "<"):
        b.upper(encoded, op != "<")
    return True


def _column_bounds(layout: RowLayout, conjunct: Conjunct) -> dict[str, _Bounds] | None:
    """Per-column bounds of a conjunct of store-evaluable atoms; ``None`` if contradictory."""
    bounds = {name: _Bounds(ctype) for name, ctype in layout.columns}
    for atom in conjunct:
        assert isinstance(atom, ColCmp | ColPrefix), atom
        if not _constrain(bounds, atom):
            return None
    for b in bounds.values():
        if b.empty:
            return None
        if b.point:
            assert b.lo is not None
            if b.lo in b.ne:
                return None
            if b.not_prefixes:
                text = decode_value(ColumnType.STRING, b.lo) if b.ctype is ColumnType.STRING \
                    else None
                if isinstance(text, str) and any(text.startswith(p) for p in b.not_prefixes):
                    return None
    return bounds


# --------------------------------------------------------------------------- server filters
def _scv(column: bytes, op: Any, value: bytes, comparator: Any = "binary") -> SingleColumnValue:
    return SingleColumnValue(column, op, value, comparator, filter_if_missing=True)


def _column_filters(
    layout: RowLayout, name: str, b: _Bounds, *, with_interval: bool
) -> list[ScanFilter]:
    """Server-side filters for one column's conditions (the interval only if asked)."""
    kcol, vcol = layout.encoded_cell(name), layout.value_cell(name)
    out: list[ScanFilter] = []
    if with_interval and b.ranged:
        prefix = b.exact_prefix()
        if b.point:
            assert b.lo is not None
            out.append(_scv(kcol, "=", b.lo))
        elif prefix is not None:
            out.append(_scv(vcol, "=", prefix.encode(), "binaryprefix"))
        else:
            if b.lo is not None:
                out.append(_scv(kcol, ">=" if b.lo_inc else ">", b.lo))
            if b.hi is not None:
                out.append(_scv(kcol, "<=" if b.hi_inc else "<", b.hi))
    if not b.point:
        out.extend(_scv(kcol, "!=", v) for v in dict.fromkeys(b.ne))
        out.extend(_scv(vcol, "!=", p.encode(), "binaryprefix")
                   for p in dict.fromkeys(b.not_prefixes))
    return out


def _and(filters: Sequence[ScanFilter | None]) -> ScanFilter | None:
    members = [f for f in filters if f is not None]
    if not members:
        return None
    return members[0] if len(members) == 1 else FilterList("AND", tuple(members))


def _or(filters: Sequence[ScanFilter]) -> ScanFilter:
    members = list(dict.fromkeys(filters))
    return members[0] if len(members) == 1 else FilterList("OR", tuple(members))


def render_node(layout: RowLayout, node: Node) -> ScanFilter | None:
    """A whole store-evaluable NNF tree as nested filter lists (``None`` = no condition)."""
    if isinstance(node, NAnd):
        return _and([render_node(layout, i) for i in node.items])
    if isinstance(node, NOr):
        parts = [render_node(layout, i) for i in node.items]
        if any(p is None for p in parts):
            return None
        return _or([p for p in parts if p is not None])
    if isinstance(node, ColPrefix):
        return _scv(layout.value_cell(node.column), "!=" if node.negated else "=",
                    node.prefix.encode(), "binaryprefix")
    if isinstance(node, ColCmp):
        return _scv(layout.encoded_cell(node.column), node.op,
                    encode_value(node.ctype, node.value, column=node.column))
    raise AssertionError(f"not store-evaluable: {node!r}")  # Bool is folded away before


# ------------------------------------------------------------------------------ one conjunct
@dataclass(frozen=True)
class _Read:
    """One conjunct's read: a get (``key``) or a scan; ``complete`` filters on values alone."""

    start: bytes
    stop: bytes
    filter: ScanFilter | None
    complete: ScanFilter | None
    key: bytes | None = None
    full: bool = False


def _conjunct_read(layout: RowLayout, period: UpdatePeriod, conjunct: Conjunct) -> _Read | None:
    bounds = _column_bounds(layout, conjunct)
    if bounds is None:
        return None
    names = layout.column_names
    complete = _and([f for n in names
                     for f in _column_filters(layout, n, bounds[n], with_interval=True)])
    base = layout.period_prefix(period.name)
    lead = b""
    k = 0
    while k < len(names) and bounds[names[k]].point:
        lo = bounds[names[k]].lo
        assert lo is not None
        lead += lo
        k += 1
    if k == len(names):
        values = [decode_value(ctype, bounds[n].lo or b"") for n, ctype in layout.columns]
        key = layout.row_key(period.name, values)
        return _Read(key, key + b"\x00", None, complete, key=key)
    prefix = base + lead
    b = bounds[names[k]]
    start = prefix
    stop = prefix_successor(prefix)
    assert stop is not None
    if b.lo is not None:
        start = prefix + b.lo if b.lo_inc else _successor(prefix + b.lo)
    if b.hi is not None:
        stop = _successor(prefix + b.hi) if b.hi_inc else prefix + b.hi
    rest = _column_filters(layout, names[k], b, with_interval=False)
    rest += [f for n in names[k + 1 :]
             for f in _column_filters(layout, n, bounds[n], with_interval=True)]
    return _Read(start, stop, _and(rest), complete, full=k == 0 and not b.ranged)


def _successor(prefix: bytes) -> bytes:
    nxt = prefix_successor(prefix)
    assert nxt is not None  # keys start with the 0x01 tag of the storage name
    return nxt


# ------------------------------------------------------------------------------- one period
def plan_period(
    layout: RowLayout, period: UpdatePeriod, pushed: Node, max_disjuncts: int
) -> PeriodPlan:
    """The reads that return a superset of ``pushed``'s rows (exactly them: no residual)."""
    base = layout.period_prefix(period.name)
    base_stop = _successor(base)
    try:
        dnf = to_dnf(pushed, max_disjuncts)
    except TooManyDisjuncts as exc:
        return _fallback(layout, period, pushed, max_disjuncts, int(str(exc.args[0])))
    reads = [r for r in (_conjunct_read(layout, period, c) for c in dnf) if r is not None]
    notes: list[str] = []
    dropped = len(dnf) - len(reads)
    if dropped:
        notes.append(f"{dropped} contradictory conjunct(s) need no read")
    full = [r for r in reads if r.full]
    if full:
        lead = layout.column_names[0]
        notes.append(
            f"full scan: {len(full)} of {len(reads)} conjunct(s) have no condition on the "
            f"leading key column {lead!r}"
        )
        completes = [r.complete for r in reads]
        flt = None if any(c is None for c in completes) else _or(
            [c for c in completes if c is not None])
        return PeriodPlan(period, (ScanSpec(base, base_stop, flt),), (), True, len(dnf),
                          tuple(notes))
    scans = _merge([r for r in reads if r.key is None])
    gets: list[bytes] = []
    for key in dict.fromkeys(r.key for r in reads if r.key is not None):
        for i, scan in enumerate(scans):
            if scan.start <= key < scan.stop:
                if scan.filter is not None:
                    point = RowRange(key, True, key, True)
                    scans[i] = ScanSpec(scan.start, scan.stop, _or([scan.filter, point]))
                break
        else:
            gets.append(key)
    return PeriodPlan(period, tuple(scans), tuple(sorted(gets)), False, len(dnf), tuple(notes))


def _merge(reads: list[_Read]) -> list[ScanSpec]:
    """Union of scans; overlapping or touching ranges become one scan (no row read twice)."""
    groups: list[list[_Read]] = []
    for read in sorted(reads, key=lambda r: (r.start, r.stop)):
        if groups and read.start <= max(r.stop for r in groups[-1]):
            groups[-1].append(read)
        else:
            groups.append([read])
    out: list[ScanSpec] = []
    for group in groups:
        start, stop = group[0].start, max(r.stop for r in group)
        if len(group) == 1:
            out.append(ScanSpec(start, stop, group[0].filter))
            continue
        if all(r.filter is None for r in group):  # a contiguous union of whole ranges
            out.append(ScanSpec(start, stop, None))
            continue
        members: list[ScanFilter] = []
        unfiltered = False
        for r in group:
            covers = r.start == start and r.stop == stop
            if covers and r.filter is None:
                unfiltered = True
                break
            rng = None if covers else RowRange(r.start, True, r.stop, False)
            member = _and([rng, r.filter])
            assert member is not None
            members.append(member)
        out.append(ScanSpec(start, stop, None if unfiltered else _or(members)))
    return out


def _fallback(
    layout: RowLayout, period: UpdatePeriod, pushed: Node, bound: int, size: int
) -> PeriodPlan:
    """Past the DNF bound: one scan, narrowed by top-level conditions, with the filter tree."""
    top = pushed.items if isinstance(pushed, NAnd) else (pushed,)
    atoms = tuple(i for i in top if isinstance(i, ColCmp | ColPrefix))
    others = [i for i in top if not isinstance(i, ColCmp | ColPrefix)]
    note = f"fallback: the DNF has more than {bound} disjuncts (at least {size}); one scan"
    read = _conjunct_read(layout, period, atoms)
    if read is None:
        return PeriodPlan(period, (), (), False, None, (note, "contradictory top-level terms"))
    flt = _and([read.filter, *(render_node(layout, o) for o in others)])
    return PeriodPlan(period, (ScanSpec(read.start, read.stop, flt),), (), read.full, None,
                      (note,))
