"""Lens-compatible property keys and the chunked list codec.

Timelines are stored as string key/value properties (Hive table parameters in Lens, cells of
the table's row here). Long lists are split into chunks of at most 3999 characters, written as
``<name>.size`` plus ``<name>0``, ``<name>1``, ... because Hive parameters had that limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from airflow_partitions.errors import CorruptTimeline

KEY_ROOT: Final = "cube.storagetable.partition.timeline.cache"
PRESENT_KEY: Final = f"{KEY_ROOT}.present"
MAX_CHUNK_LENGTH: Final = 3999
LIST_NAMES: Final = ("partitions", "holes", "ranges")
_SIZE: Final = re.compile(r"0|[1-9][0-9]*")
_CHUNK: Final = re.compile(r"(partitions|holes|ranges)([0-9]+)")


def timeline_prefix(period_name: str, column: str) -> str:
    """The key prefix of one (period, column) timeline, ending with a dot."""
    return f"{KEY_ROOT}.{period_name}.{column}."


def storage_class_key(period_name: str, column: str) -> str:
    """The key that names the implementation of one timeline."""
    return timeline_prefix(period_name, column) + "storage.class"


def encode_chunks(name: str, items: Iterable[str], limit: int = MAX_CHUNK_LENGTH) -> dict[str, str]:
    """``name.size`` plus ``name0..`` chunks of comma-joined items, each at most ``limit`` long.

    An item (which may itself hold commas, like a ``begin,end`` range) is never split across
    chunks, so each chunk decodes on its own.
    """
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for item in items:
        if len(item) > limit:
            raise ValueError(f"list item {item[:40]!r}... is longer than a chunk ({limit})")
        extra = len(item) + (1 if current else 0)
        if current and length + extra > limit:
            chunks.append(",".join(current))
            current, length, extra = [], 0, len(item)
        current.append(item)
        length += extra
    if current:
        chunks.append(",".join(current))
    out = {f"{name}.size": str(len(chunks))}
    out.update({f"{name}{i}": chunk for i, chunk in enumerate(chunks)})
    return out


def decode_chunks(props: Mapping[str, str], name: str) -> list[str]:
    """Read a chunked list back; an absent list (no ``.size``, no chunk) is empty.

    ``.size`` must be a canonical non-negative count (``0``, ``12``; not ``" 1"``, ``"+1"``,
    ``"01"``), and a chunk without a ``.size`` is corrupt: every writer, Lens included, writes
    the size. Chunks past ``.size`` are left alone, as Lens leaves them: an in-place migration
    (``props.update(...)``) can leave some behind. The catalog, whose cells are written whole,
    rejects those too (:func:`check_chunk_counts`).
    """
    size_text = props.get(f"{name}.size")
    if size_text is None:
        if f"{name}0" in props:
            raise CorruptTimeline(f"{name}.size is missing but chunk {name}0 is present")
        return []
    size = parse_size(name, size_text)
    items: list[str] = []
    for i in range(size):
        chunk = props.get(f"{name}{i}")
        if chunk is None:
            raise CorruptTimeline(f"{name}.size says {size} chunks but {name}{i} is missing")
        if chunk == "":
            raise CorruptTimeline(f"chunk {name}{i} is empty")
        items.extend(part.strip() for part in chunk.split(","))
    if any(not item for item in items):
        raise CorruptTimeline(f"{name} holds an empty list item")
    return items


def parse_size(name: str, text: str) -> int:
    """The chunk count of ``<name>.size``: ASCII digits, no sign, no padding, no spaces."""
    if not _SIZE.fullmatch(text):
        if text.startswith("-") and text[1:].isdigit():
            raise CorruptTimeline(f"{name}.size is negative ({text})")
        raise CorruptTimeline(f"{name}.size is {text!r}, not a count of chunks")
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
            raise CorruptTimeline(f"{name}.size is missing but chunk {key} is present")
        size = parse_size(name, size_text)
        if digits != str(int(digits)) or int(digits) >= size:
            raise CorruptTimeline(
                f"chunk {key} is not one of the {size} chunks that {name}.size counts"
            )
