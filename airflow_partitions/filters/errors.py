"""Typed errors of the filter language: every one is an ``InvalidInput`` (CLI exit code 2)."""

from __future__ import annotations

from typing import Final

from airflow_partitions.errors import InvalidInput

#: Characters of the filter shown on each side of a syntax error's position.
WINDOW: Final = 60


class FilterError(InvalidInput):
    """Base of every error a filter string can cause."""


class FilterSyntaxError(FilterError):
    """The text is not a filter; ``position`` is the 0-based character offset of the problem.

    ``str()`` shows the text with a caret line under the offending character, so a human sees
    where the parser stopped without counting characters.
    """

    def __init__(self, message: str, text: str, position: int) -> None:
        self.message = message
        self.text = text
        self.position = max(0, min(position, len(text)))
        super().__init__(self.render())

    def render(self) -> str:
        # Control characters would shift or break the caret line: show each as one space. A long
        # text is cut to a window around the position, so the message stays a few lines.
        start = max(0, self.position - WINDOW)
        end = min(len(self.text), self.position + WINDOW)
        before = "…" if start else ""
        after = f"… ({len(self.text)} characters)" if end < len(self.text) else ""
        window = "".join(ch if ch.isprintable() else " " for ch in self.text[start:end])
        caret = " " * (len(before) + self.position - start)
        return f"{before}{window}{after}\n{caret}^ {self.message}"


class FilterTypeError(FilterError):
    """The filter parses but does not fit the storage's columns (a literal of the wrong type)."""


class UnknownColumnError(FilterTypeError):
    """The filter names a column the storage does not have (and unknown columns are not allowed)."""
