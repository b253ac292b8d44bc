"""A timeline cell read by its ends alone, without parsing its JSON.

Why: after each registration elsewhere, a reader that kept an answer asks whether a timeline
cell changed only its ``first`` and ``latest`` (``catalog/covers/answer_basis.py``); a producer
appending hours changes nothing else. Decoding the cell costs a JSON parse of every hole it
lists; matching its bytes against those it had costs a few byte comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from airflow_partitions.catalog.rows.layout import encode_timeline_cell


@dataclass(frozen=True)
class EndsTemplate:
    """The bytes :func:`encode_timeline_cell` writes for one kind and set of properties, with
    the texts of two of them (a timeline's ``first`` and ``latest``) and the version left out:
    ``pieces[0] + first + pieces[1] + latest + pieces[2] + version + b"}"``.

    Matching a cell against these pieces answers what decoding its JSON would: a text
    between two pieces holds no quote, backslash or control character, so it is the string
    JSON would decode there. Cost: a few byte comparisons and two searches.

    >>> t = EndsTemplate.of("EndsAndHoles", {"a.holes.size": "0"}, "a.first", "a.latest")
    >>> t.ends(encode_timeline_cell(7, "EndsAndHoles", {"a.holes.size": "0",
    ...     "a.first": "2015-01-01", "a.latest": "2015-01-09"}))
    ('2015-01-01', '2015-01-09')
    >>> t.ends(encode_timeline_cell(7, "EndsAndHoles", {"a.holes.size": "1",
    ...     "a.first": "2015-01-01", "a.latest": "2015-01-09"})) is None
    True
    """

    pieces: tuple[bytes, bytes, bytes]
    #: Whether ``first`` comes before ``latest`` in the bytes (their keys' sorted order).
    first_leads: bool

    @classmethod
    def of(cls, kind: str | None, properties_but_ends: Mapping[str, str], first_key: str,
           latest_key: str) -> EndsTemplate | None:
        """The template of these properties with ``first_key`` and ``latest_key`` set; None
        when the encoding cannot be cut into pieces (a property already holds a marker)."""
        marks = {first_key: "\x01", latest_key: "\x02"}
        raw = encode_timeline_cell(0, kind, {**properties_but_ends, **marks})
        end = b',"version":0}'
        if not raw.endswith(end) or raw.count(b"\\u0001") != 1 or raw.count(b"\\u0002") != 1:
            return None
        body = raw[:-len(end)] + b',"version":'
        at_first, at_latest = body.index(b"\\u0001"), body.index(b"\\u0002")
        lo, hi = sorted((at_first, at_latest))
        mark = len(b"\\u0001")
        return cls((body[:lo], body[lo + mark:hi], body[hi + mark:]), at_first < at_latest)

    def ends(self, raw: bytes) -> tuple[str, str] | None:
        """``(first, latest)`` as written in ``raw`` when ``raw`` is this template filled in
        with two plain texts and a JSON integer version; None otherwise (it may still be a
        timeline: decode it)."""
        head, middle, tail = self.pieces
        if not raw.startswith(head) or raw[-1:] != b"}":
            return None
        start = len(head)
        stop = raw.find(b'"', start)
        if stop < 0 or not raw.startswith(middle, stop):
            return None
        second = stop + len(middle)
        second_stop = raw.find(b'"', second)
        if second_stop < 0 or not raw.startswith(tail, second_stop):
            return None
        version = raw[second_stop + len(tail):-1]
        if not version.isdigit() or (version[:1] == b"0" and len(version) > 1):
            return None
        lead, trail = raw[start:stop], raw[second:second_stop]  # in the cell's order
        if b"\\" in lead or b"\\" in trail or not (lead.isascii() and trail.isascii()):
            return None
        one, two = lead.decode(), trail.decode()
        if not (one.isprintable() and two.isprintable()):
            return None  # a control character: JSON would refuse the cell
        return (one, two) if self.first_leads else (two, one)
