"""Validate many partition values of one storage and period fast, with make_spec's answers.

Why: a bulk register of a million hours spent about 17 µs a partition in :func:`make_spec` and
:func:`encode_key`, which re-derive per call what is fixed for the whole batch (the column
set, the zone, the end of the calendar, the encoded db and table fields). :class:`SpecBuilder`
derives those once and handles the common case, text values of ``STRING`` columns that are
clearly valid, with a few C-level checks. Anything else (another column type, a value the fast
checks are unsure of, a bad value) goes through :func:`make_spec` and :func:`encode_key`, which
decide and word the error. Tests hold the two paths equal on random input, valid and not.
"""

from __future__ import annotations

import contextlib
import gc
import posixpath
import re
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import accumulate
from typing import Final

from airflow_partitions.catalog.definitions.tables import (
    PartitionSpec,
    StorageDef,
    check_under_root,
    make_spec,
    render_safe_location,
    template_root,
)
from airflow_partitions.keys import MAX_KEY_LENGTH, ColumnType, encode_key, encode_value
from airflow_partitions.periods import UpdatePeriod, fast_ordinal, fast_ordinals, zone

#: A partition row key and its validated spec, as the writer takes them.
KeyedSpec = tuple[PartitionSpec, bytes]
#: Value maps validated together, a column at a time (bounds the temporaries).
_SLICE: Final = 50_000
#: The location of a validated partition.
Locate = Callable[[PartitionSpec], str]

#: What :func:`~.definitions.tables.check_safe_value` refuses, in one pass: empty, ``.``,
#: ``..``, a leading ``~``, a slash or backslash, or a control character (Unicode category Cc).
UNSAFE_VALUE: Final = re.compile(r"\A(?:\.\.?)?\Z|\A~|[/\\\x00-\x1f\x7f-\x9f]")


class SpecBuilder:
    """Builds ``(spec, row key)`` pairs for one storage and period.

    >>> from airflow_partitions.catalog.definitions.tables import StorageDef
    >>> from airflow_partitions.keys import ColumnType
    >>> sdef = StorageDef("raw", "events", (("dt", ColumnType.STRING),), ("dt",),
    ...                   (UpdatePeriod.HOURLY,), "/d/{dt}")
    >>> spec, key = SpecBuilder(sdef, UpdatePeriod.HOURLY).build({"dt": "2015-01-01-05"})
    >>> spec.values, spec.ordinals
    ((('dt', '2015-01-01-05'),), (394469,))
    """

    def __init__(self, sdef: StorageDef, period: UpdatePeriod) -> None:
        self._sdef = sdef
        self._period = period
        self._names = sdef.column_names
        self._name_set = frozenset(self._names)
        self._fast = all(ctype is ColumnType.STRING for _, ctype in sdef.columns)
        self._zone = zone(sdef.tz)
        # The time columns' positions among the columns, in ``time_columns`` order.
        self._time_at = tuple(self._names.index(c) for c in sdef.time_columns)
        self._end = period.end_ordinal(self._zone) if period in sdef.periods else None
        self._head = (encode_value(ColumnType.STRING, sdef.name)
                      + encode_value(ColumnType.STRING, period.name))
        # Offsets of the db and table fields: the first two entries of every key's trailer.
        self._first_offsets = struct.pack(
            ">HH", 0, len(encode_value(ColumnType.STRING, sdef.name)))
        self._offsets = struct.Struct(f">{len(self._names)}H")
        self._count = bytes([len(self._names) + 2])
        self._head_length = len(self._head)
        # The longest body (fields) whose key, with its trailer, stays within the limit.
        self._max_body = MAX_KEY_LENGTH - 2 * (len(self._names) + 2) - 1
        self._period_name = period.value
        self._storage = sdef.name

    def build(self, values: Mapping[str, str]) -> KeyedSpec:
        """One partition's spec (with its time ordinals) and row key; make_spec's errors.

        Complexity: O(columns).
        """
        fast = self._fast_build(values) if self._fast and self._end is not None else None
        if fast is not None:
            return fast
        spec, typed = make_spec(self._sdef, self._period, values)
        key = encode_key(self._sdef.key_schema, self._sdef.name, self._period.name, typed)
        return spec, key

    def _fast_build(self, values: Mapping[str, str]) -> KeyedSpec | None:
        """The fast path, or None when :func:`make_spec` must decide.

        Example: for columns ``(dt,)`` and ``{"dt": "2015-01-01-05"}`` the key is the encoded
        db and table fields, the value field ``01 "2015-01-01-05" 00 01``, then the trailer:
        the three fields' start offsets (u16 each) and the field count 3.
        """
        if values.keys() != self._name_set:
            return None
        texts = [values[name] for name in self._names]
        fields = [self._head]
        starts = []
        offset = self._head_length
        for text in texts:
            if type(text) is not str or UNSAFE_VALUE.search(text) is not None:
                return None
            try:
                field = b"\x01%b\x00\x01" % text.encode()
            except UnicodeEncodeError:
                return None  # a lone surrogate: encode_key words the error
            fields.append(field)
            starts.append(offset)
            offset += len(field)
        ordinals = tuple(fast_ordinal(self._period_name, texts[i], self._zone)
                         for i in self._time_at)
        if None in ordinals or self._end in ordinals or offset > self._max_body:
            return None
        fields += (self._first_offsets, self._offsets.pack(*starts), self._count)
        pairs = tuple(zip(self._names, texts, strict=True))
        spec = PartitionSpec(self._storage, self._period, pairs,
                             ordinals)  # type: ignore[arg-type]  # None was ruled out
        return spec, b"".join(fields)

    def build_all(self, items: Sequence[Mapping[str, str]]) -> dict[bytes, PartitionSpec] | None:
        """The specs by row key of a whole batch, column by column; None when any item needs
        :meth:`build` (which then decides, and words any error).

        Why: :meth:`build` costs about 7 µs a partition in Python calls; a column at a time, the
        checks are a few C-level passes (one type check, one batch parse, one pattern search).
        """
        if not self._fast or self._end is None:
            return None
        names = self._name_set
        if not all(item.keys() == names for item in items):
            return None
        columns = [[item[name] for item in items] for name in self._names]
        fields: list[list[bytes]] = []
        for index, texts in enumerate(columns):
            if not all(type(text) is str for text in texts):
                return None
            if index not in self._time_at and any(map(UNSAFE_VALUE.search, texts)):
                return None
            try:
                fields.append([b"\x01%b\x00\x01" % text.encode() for text in texts])
            except UnicodeEncodeError:
                return None
        # A time value that parses is digits and dashes (the fast patterns are ASCII), so safe.
        times = [fast_ordinals(self._period_name, columns[i], self._zone) for i in self._time_at]
        if any(found is None or self._end in found for found in times):
            return None
        keys = self._keys(fields)
        if keys is None:
            return None
        names_of = self._names
        pairs = [tuple(zip(names_of, row, strict=True)) for row in zip(*columns, strict=True)]
        spec, storage, period = PartitionSpec, self._storage, self._period
        ordinals = list(zip(*times, strict=True)) if times else [()] * len(items)
        return dict(zip(keys, [spec(storage, period, p, o)
                               for p, o in zip(pairs, ordinals, strict=True)], strict=True))

    def _keys(self, fields: list[list[bytes]]) -> list[bytes] | None:
        """Row keys from each column's encoded fields, as :func:`encode_key` builds them."""
        head, trailer_head, count = self._head, self._first_offsets, self._count
        if len(fields) == 1:  # the common case: one start offset, so one trailer for all
            trailer = trailer_head + self._offsets.pack(self._head_length) + count
            keys = [head + field + trailer for field in fields[0]]
        else:
            keys = []
            for row in zip(*fields, strict=True):
                starts = list(accumulate((len(f) for f in row[:-1]), initial=self._head_length))
                keys.append(b"".join((head, *row, trailer_head, self._offsets.pack(*starts),
                                      count)))
        longest = max(map(len, keys), default=0)
        return None if longest > MAX_KEY_LENGTH else keys


def keyed_specs(sdef: StorageDef, period: UpdatePeriod,
                items: Sequence[Mapping[str, str]]) -> list[KeyedSpec]:
    """Each distinct partition once, in first-seen order; a bad value fails the whole batch.

    Complexity: O(n * columns).
    """
    builder = SpecBuilder(sdef, period)
    seen: dict[bytes, PartitionSpec] = {}
    for lo in range(0, len(items), _SLICE):  # slices bound the column path's temporaries
        part = items[lo : lo + _SLICE]
        found = builder.build_all(part) if len(part) > 1 else None
        if found is not None:
            seen.update((key, spec) for key, spec in found.items() if key not in seen)
            continue
        for item in part:
            spec, key = builder.build(item)
            seen.setdefault(key, spec)
    return [(spec, key) for key, spec in seen.items()]


def locator(sdef: StorageDef) -> Locate:
    """The location of each partition of ``sdef``, for specs validated by :func:`keyed_specs`.

    Why a function: a bulk register renders each chunk's locations as it writes the chunk, not
    a million strings at once. Values are already safe (checked while validating); the root
    check stays, and cannot fail for safe values. Per period, the fact, storage and period are
    filled in once (``/d/{fact}/{dt}`` becomes ``/d/events/{dt}``), and a template of one
    column is then filled by ``str.replace``, a third of ``str.format``'s cost; a template
    with escaped braces takes the general path.
    """
    template, fact, name = sdef.location, sdef.fact, sdef.name
    columns = sdef.column_names

    def general(spec: PartitionSpec) -> str:
        return render_safe_location(template, fact, name, spec.period, dict(spec.values))

    if "{{" in template or "}}" in template:
        return general
    placeholder = "{%s}" % columns[0]  # noqa: UP031 - a literal brace pair around a name
    root = template_root(template)
    under = posixpath.normpath(root).rstrip("/") + "/" if root else ""
    normpath = posixpath.normpath
    # The last period's template with fact, storage and period filled in (one period per call).
    last: list[tuple[UpdatePeriod, str]] = []

    def locate(spec: PartitionSpec) -> str:
        if not last or last[0][0] is not spec.period:
            last[:] = [(spec.period, template.format(
                fact=fact, storage=name, period=spec.period.name,
                **{c: "{%s}" % c for c in columns}))]  # noqa: UP031
        partial = last[0][1]
        if len(spec.values) == 1:
            rendered = partial.replace(placeholder, spec.values[0][1])
        else:
            rendered = partial.format_map(dict(spec.values))
        if under and not (normpath(rendered) + "/").startswith(under):
            check_under_root(rendered, template)  # raises, with the message
        return rendered

    return locate


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk write (back as it was afterwards).

    Why: a bulk register allocates a few container objects per partition, and the collector
    walks the young ones every 700 allocations and, now and then, every object in the process
    (the caller's million input dicts included): a fifth of a million-partition register,
    measured. The write makes no reference cycles, so reference counting frees all of it.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
