"""docs/cli.md keeps up with the command: every command and option that ``--help``
shows, at every level, is in the command table at the top of the page.

Driven by the help text a user reads, not by the parser's internals: a command is a line of a
help page's COMMAND list, an option is an ``--option`` in a leaf command's usage.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from airflow_partitions.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
#: Documented once, under "Global options and the store", not in every row.
GLOBAL = frozenset({"--help", "--store", "--data-root", "--debug", "--version"})
COMMAND_LINE = re.compile(r"^    ([a-z][a-z-]*)(?:\s{2,}|$)", re.MULTILINE)
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
ROW = re.compile(r"^\| `([^`]+)` \|", re.MULTILINE)


def help_of(path: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*path, "--help"]) == 0
    return capsys.readouterr().out


def commands_in(text: str) -> list[str]:
    """The commands a help page lists under COMMAND (none for a leaf command)."""
    if "\n  COMMAND" not in text:
        return []
    listing = text.split("\n  COMMAND", 1)[1].split("\n\n", 1)[0]
    return COMMAND_LINE.findall(listing)


def usage_options(text: str) -> set[str]:
    usage = text.split("Usage:", 1)[1].split("\n\n", 1)[0]
    return set(OPTION.findall(usage))


def leaf_commands(capsys: pytest.CaptureFixture[str]) -> dict[str, set[str]]:
    """Every leaf command (``partition add``) and the options its help shows."""
    leaves: dict[str, set[str]] = {}
    pending: list[list[str]] = [[]]
    while pending:
        path = pending.pop()
        text = help_of(path, capsys)
        subs = commands_in(text)
        if path and not subs:
            leaves[" ".join(path)] = usage_options(text)
        pending.extend([*path, sub] for sub in subs)
    return leaves


def test_every_command_and_option_of_the_help_is_in_the_command_table(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    leaves = leaf_commands(capsys)
    assert {"fact create", "partition add", "cover", "backfill", "explain"} <= set(leaves)
    assert "--restate" in leaves["partition add"]  # the one the table once left out
    doc = DOC.read_text()
    rows = ROW.findall(doc)
    gaps = []
    for command, options in sorted(leaves.items()):
        mine = [r for r in rows if r == command or r.startswith(f"{command} ")]
        if not mine:
            gaps.append(f"{command}: no row")
            continue
        shown = set(OPTION.findall(" ".join(mine)))
        gaps += [f"{command}: {o}" for o in sorted(options - GLOBAL - shown)]
    assert not gaps, f"docs/cli.md's command table lacks: {gaps}"
    assert all(option in doc for option in GLOBAL)


def test_the_table_lists_no_command_the_help_does_not(
        capsys: pytest.CaptureFixture[str]) -> None:
    leaves = leaf_commands(capsys)
    words = {" ".join(row.split()[:2]) for row in ROW.findall(DOC.read_text())}
    stray = {w for w in words if w not in leaves and w.split()[0] not in leaves}
    assert not stray, f"docs/cli.md lists commands that do not exist: {stray}"
