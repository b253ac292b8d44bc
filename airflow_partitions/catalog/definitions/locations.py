"""Explicit partition locations, checked and normalised before anything is written.

Why a module of its own: a location given by hand (``partition add --location``) is the one
path into the catalog that no template proves safe, so its rules (no control characters, no
``..`` segment, one spelling per directory) live in one place, with the error types that
:mod:`.definitions.tables` re-exports.
"""

from __future__ import annotations

import re

from airflow_partitions.arguments import control_character, require_text, shown
from airflow_partitions.errors import InvalidInput


class InvalidPartitionSpec(InvalidInput):
    """A partition's values are missing, extra, mistyped or unsafe."""


class UnsafeLocation(InvalidPartitionSpec):
    """A value would make the partition's location escape its table root."""


def check_location(location: object) -> str:
    """An explicit partition location: text without control characters, which would corrupt
    manifests, logs and the paths Spark is handed.

    >>> check_location("/data/a\\tb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    airflow_partitions.catalog.definitions.locations.UnsafeLocation: location '/data/a\\tb' ...
    """
    location = require_text("location", location)
    if not location.strip():
        raise UnsafeLocation("location is empty")
    control = control_character(location)
    if control is not None:
        raise UnsafeLocation(f"location {shown(location)} holds the control character {control}")
    return normal_location(location)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/]*")


def normal_location(location: str) -> str:
    """``location`` with ``.`` segments and repeated or trailing slashes removed; a ``..``
    segment is refused (registered as given, ``/data/ev/raw/../../../../etc`` would have
    Spark read ``/etc``). A ``scheme://authority`` prefix is kept as it is.

    >>> normal_location("s3://bucket//ev/./raw/")
    's3://bucket/ev/raw'
    >>> normal_location("/data/ev/raw/../../etc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    airflow_partitions.catalog.definitions.locations.UnsafeLocation: location ...
    """
    scheme = _SCHEME.match(location)
    head = scheme[0] if scheme else ""
    path = location[len(head):]
    segments = path.split("/")
    if ".." in segments:
        raise UnsafeLocation(f"location {shown(location)} holds a '..' segment: a partition's "
                             "location names its directory itself, never one above it")
    kept = [seg for seg in segments if seg not in ("", ".")]
    if head:
        normal = head + "".join("/" + seg for seg in kept)
    else:
        normal = ("/" if path.startswith("/") else "") + "/".join(kept)
    if not normal:
        raise UnsafeLocation(f"location {shown(location)} names no directory")
    return normal


__all__ = ["InvalidPartitionSpec", "UnsafeLocation", "check_location", "normal_location"]
