"""Lens-compatible property keys and the chunked list codec, exactly as Apache Lens does it.

Timelines are stored as string key/value properties (Hive table parameters in Lens, cells of
the table's row here). A list is written as Lens's ``MetastoreUtil.addNameStrings`` writes it:
``<name>.size`` plus chunks ``<name>0``, ``<name>1``, ... of at most 3999 characters (Hive's old
parameter limit), each item followed by ``,`` except the last item of the list, so a chunk the
list continues after ends with ``,``. Reading follows ``getNamedStringValue``: the chunks are
concatenated and split on ``\\s*,\\s*``; without a ``.size``, older Lens versions' unchunked
value stored directly under ``<name>`` is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from airflow_partitions.errors import CorruptTimeline

KEY_ROOT: Final = "cube.storagetable.partition.timeline.cache"
PRESENT_KEY: Final = f"{KEY_ROOT}.present"
MAX_CHUNK_LENGTH: Final = 3999
LIST_NAMES: Final = ("partitions", "holes", "ranges")
SEPARATOR: Final = re.compile(r"\s*,\s*")
_SIZE: Final = re.compile(r"0|[1-9][0-9]*")
_CHUNK: Final = re.compile(r"(partitions|holes|ranges)([0-9]+)")

#: A list item and the key of the chunk that holds it (for errors that name the key).
Item = tuple[str, str]


class CorruptProperty(CorruptTimeline):
    """One property is wrong; ``key`` names it (relative to the timeline prefix until the
    loader, which knows the prefix, names it in full)."""

    def __init__(self, key: str, message: str):
        self.key, self.message = key, message
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.key, self.message)


def timeline_prefix(period_name: str, column: str) -> str:
    """The key prefix of one (period, column) timeline, ending with a dot."""
    return f"{KEY_ROOT}.{period_name}.{column}."


def storage_class_key(period_name: str, column: str) -> str:
    """The key that names the implementation of one timeline."""
    return timeline_prefix(period_name, column) + "storage.class"


def encode_chunks(name: str, items: Iterable[str], limit: int = MAX_CHUNK_LENGTH) -> dict[str, str]:
    """``name.size`` plus ``name0..`` chunks, cut where Lens's ``addNameStrings`` cuts them.

    Why exactly Lens's rule: Lens reads by concatenating the chunks, so the ``,`` between two
    items must stay at the end of the chunk the list continues after. An item starts a new
    chunk when the chunk so far plus the item would reach ``limit``; an item is never split.

    >>> encode_chunks("test.key", ["first", "second", "biggggger"], 10)
    {'test.key.size': '3', 'test.key0': 'first,', 'test.key1': 'second,', 'test.key2': 'biggggger'}
    >>> encode_chunks("holes", [])
    {'holes.size': '0'}
    """
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    pending: str | None = None
    for item in items:
        if len(item) >= limit:  # Lens would write an empty chunk before it
            raise ValueError(f"list item {item[:40]!r}... is longer than a chunk ({limit - 1})")
        if pending is not None:
            if length + len(pending) >= limit:
                chunks.append("".join(current))
                current, length = [], 0
            current.append(pending + ",")
            length += len(pending) + 1
        pending = item
    if pending is not None:
        if length + len(pending) >= limit:
            chunks.append("".join(current))
            current = []
        current.append(pending)
        chunks.append("".join(current))
    out = {f"{name}.size": str(len(chunks))}
    out.update({f"{name}{i}": chunk for i, chunk in enumerate(chunks)})
    return out


def decode_chunks(props: Mapping[str, str], name: str) -> list[str]:
    """The items of a list; see :func:`decode_items`.

    >>> decode_chunks({"x.size": "2", "x0": "a, b,", "x1": "c"}, "x")
    ['a', 'b', 'c']
    >>> decode_chunks({"x": "a,b"}, "x")  # older Lens: unchunked, under the name itself
    ['a', 'b']
    """
    return [item for item, _ in decode_items(props, name)]


def decode_items(props: Mapping[str, str], name: str) -> list[Item]:
    """Read a list back as Lens does, each item with the key of its chunk.

    The chunks counted by ``.size`` are read in order as one list: a chunk ending with ``,``
    continues in the next (Lens's form); a chunk boundary without ``,`` also separates items
    (the form this project wrote before it matched Lens). Without ``.size``, the unchunked
    value under ``<name>`` is read (older Lens); an absent list is empty.

    Refused as corrupt: a ``.size`` that is not a canonical count (``0``, ``12``; not ``" 1"``,
    ``"+1"``, ``"01"``), a chunk without a ``.size``, a missing or empty chunk, an empty item,
    and a last chunk ending with ``,`` (its list continues in a chunk ``.size`` does not
    count). Chunks past ``.size`` are left alone, as Lens leaves them: an in-place migration
    (``props.update(...)``) can leave some behind. The catalog, whose cells are written whole,
    rejects those too (:func:`check_chunk_counts`).
    """
    size_text = props.get(f"{name}.size")
    if size_text is None:
        if f"{name}0" in props:
            raise CorruptProperty(f"{name}0",
                                  f"{name}.size is missing but chunk {name}0 is present")
        text = props.get(name)
        if text is None or not text.strip():  # older Lens wrote "" for an empty list
            return []
        return _split(name, text, last=True)
    size = parse_size(name, size_text)
    items: list[Item] = []
    for i in range(size):
        key = f"{name}{i}"
        chunk = props.get(key)
        if chunk is None:
            raise CorruptProperty(key, f"{name}.size says {size} chunks but {key} is missing")
        if chunk == "":
            raise CorruptProperty(key, f"chunk {key} is empty")
        items.extend(_split(key, chunk, last=i == size - 1))
    return items


def decode_items_under(props: Mapping[str, str], prefix: str, name: str) -> list[Item]:
    """:func:`decode_items` of the list ``name`` among full-key properties under ``prefix``."""
    return decode_items({k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)},
                        name)


def _split(key: str, text: str, *, last: bool) -> list[Item]:
    """Items of one chunk (``\\s*,\\s*``, as Lens splits), dropping its continuation comma."""
    body = text.strip()
    if body.endswith(","):
        if last:
            raise CorruptProperty(key, f"{key} ends with ',' but no chunk follows it: the list "
                                       "continues in a chunk that .size does not count")
        body = body[:-1].rstrip()
    parts = SEPARATOR.split(body)
    if any(not part for part in parts):
        raise CorruptProperty(key, f"{key} holds an empty list item")
    return [(part, key) for part in parts]


def parse_size(name: str, text: str) -> int:
    """The chunk count of ``<name>.size``: ASCII digits, no sign, no padding, no spaces."""
    if not _SIZE.fullmatch(text):
        if text.startswith("-") and text[1:].isdigit():
            raise CorruptProperty(f"{name}.size", f"{name}.size is negative ({text})")
        raise CorruptProperty(f"{name}.size", f"{name}.size is {text!r}, not a count of chunks")
    return int(text)


def check_chunk_counts(props: Mapping[str, str]) -> None:
    """Raise ``CorruptTimeline`` unless every list chunk (``holes3``) is counted by its list's
    ``.size``, and every ``.size`` of a present chunk is a canonical count.

    For stores that always write a timeline's properties whole (the catalog's cells): there a
    chunk that ``.size`` does not count is corruption, not a migration's leftover. Keys are
    relative to the timeline prefix.
    """
    for key in sorted(props):
        match = _CHUNK.fullmatch(key)
        if match is None:
            continue
        name, digits = match.group(1), match.group(2)
        size_text = props.get(f"{name}.size")
        if size_text is None:
            raise CorruptProperty(key, f"{name}.size is missing but chunk {key} is present")
        size = parse_size(name, size_text)
        if digits != str(int(digits)) or int(digits) >= size:
            raise CorruptProperty(
                key, f"chunk {key} is not one of the {size} chunks that {name}.size counts"
            )
