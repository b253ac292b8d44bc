"""Which manifest location a data file Spark listed belongs to (pure: no pyspark).

The single-scan reader hands Spark every location of a group at once and then has to give each
file its partition's values back. Spark reports files as URIs (``file:///d/dt=1/part-0.parquet``,
percent-encoded: a space is ``%20``); manifests hold locations as written by the location template
(``/d/dt=1``, ``file:/d/dt=1``, ``s3a://bucket/d/dt=1``). Both sides are reduced to one key here,
and a file belongs to the nearest enclosing location. Anything that cannot be attributed exactly
(a glob, nested locations, a scheme-less location that Spark qualified against another file
system) is reported, so the reader falls back to reading those locations one by one.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

#: Characters Spark expands as a glob in a path it is asked to load.
GLOB_CHARS = frozenset("*?[]{}")

#: A location key: (scheme, authority, path); scheme ``""`` matches any file system.
LocationKey = tuple[str, str, str]


def location_key(location: str) -> LocationKey:
    """The key of a manifest location (as written; local paths made absolute)."""
    parts = urlsplit(location)
    if len(parts.scheme) > 1 and "/" not in parts.scheme:  # not a Windows drive letter
        scheme = parts.scheme.lower()
        path = parts.path
        if scheme == "file":
            return "file", "", _clean(path or "/")
        return scheme, parts.netloc, _clean(path or "/")
    return "", "", _clean(os.path.abspath(location))


def file_key(uri: str) -> LocationKey:
    """The key of a file URI from Spark (``inputFiles()``: percent-encoded)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower() or "file"
    netloc = "" if scheme == "file" else parts.netloc
    return scheme, netloc, _clean(unquote(parts.path))


def spark_path_forms(uri: str) -> tuple[str, ...]:
    """The spellings under which Spark may report one file: ``inputFiles()`` says
    ``file:///d/f``, the ``_metadata.file_path`` column says ``file:/d/f``."""
    scheme, sep, rest = uri.partition(":///")
    if sep and "/" not in scheme:
        return uri, f"{scheme}:/{rest}"
    scheme, sep, rest = uri.partition(":/")
    if sep and "/" not in scheme and not rest.startswith("/"):
        return uri, f"{scheme}:///{rest}"
    return (uri,)


def _clean(path: str) -> str:
    cleaned = posixpath.normpath(path)
    return "/" if cleaned in ("", ".") else cleaned.replace("//", "/")


def unattributable(locations: Sequence[str]) -> list[str]:
    """The locations a single scan cannot attribute files to: globs, and nested locations
    (Spark would list the inner one's files twice). Paths are compared across schemes: a
    false alarm only costs the per-location fallback."""
    bad = {loc for loc in locations if GLOB_CHARS & set(loc)}
    paths: dict[str, str] = {}
    for loc in locations:
        if loc not in bad:
            paths.setdefault(location_key(loc)[2], loc)
    for path, loc in paths.items():
        parent = posixpath.dirname(path)
        while parent != path:
            if parent in paths:
                bad.update((loc, paths[parent]))
            path, parent = parent, posixpath.dirname(parent)
    return sorted(bad)


@dataclass(frozen=True)
class Attribution:
    """Files matched to locations; ``unmatched`` files had no enclosing location."""

    files: Mapping[str, str]
    unmatched: tuple[str, ...]

    def empty(self, locations: Sequence[str]) -> list[str]:
        """The locations no file was attributed to."""
        used = set(self.files.values())
        return [loc for loc in dict.fromkeys(locations) if loc not in used]


def attribute(files: Iterable[str], locations: Iterable[str]) -> Attribution:
    """Each file URI -> the location (as written in the manifest) that encloses it."""
    exact: dict[LocationKey, str] = {}
    by_path: dict[str, str] = {}
    for loc in locations:
        key = location_key(loc)
        if key[0]:
            exact[key] = loc
        else:
            by_path[key[2]] = loc
    matched: dict[str, str] = {}
    unmatched = []
    for uri in files:
        scheme, netloc, path = file_key(uri)
        found = None
        parent = posixpath.dirname(path)
        while found is None:
            found = exact.get((scheme, netloc, parent)) or by_path.get(parent)
            if parent == "/":
                break
            parent = posixpath.dirname(parent)
        if found is None:
            unmatched.append(uri)
        else:
            matched[uri] = found
    return Attribution(matched, tuple(unmatched))
