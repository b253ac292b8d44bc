"""Lens-compatible property keys and the chunked list codec.

Timelines are stored as string key/value properties (Hive table parameters in Lens, cells of
the table's row here). Long lists are split into chunks of at most 3999 characters, written as
``<name>.size`` plus ``<name>0``, ``<name>1``, ... because Hive parameters had that limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from airflow_partitions.errors import CorruptTimeline

KEY_ROOT: Final = "cube.storagetable.partition.timeline.cache"
PRESENT_KEY: Final = f"{KEY_ROOT}.present"
MAX_CHUNK_LENGTH: Final = 3999


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
    """Read a chunked list back; a missing ``.size`` means an empty list."""
    size_text = props.get(f"{name}.size")
    if size_text is None:
        return []
    try:
        size = int(size_text)
    except ValueError:
        raise CorruptTimeline(f"{name}.size is {size_text!r}, not a number") from None
    if size < 0:
        raise CorruptTimeline(f"{name}.size is negative ({size})")
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
