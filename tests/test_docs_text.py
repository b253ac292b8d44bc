"""The docs and the code say what is true now; their history lives in CHANGELOG.md only.

Scans ``docs/*.md``, ``README.md`` and every ``.py`` under ``airflow_partitions/``, ``tests/``,
``benchmarks/`` and ``dags_examples/`` for references to how the project was built (tracker
numbers, the design notes it started from, review finding labels, notes outside the
repository)
and fails listing ``file:line`` for each. ``docs/design.md`` holds the vocabulary and the
invariants those references used to point at.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.import_graph import python_files

ROOT = Path(__file__).resolve().parent.parent

#: (name, pattern). Each is narrow enough to leave legitimate text alone: ``seed=`` and
#: ``random.seed``, ``--seed 7`` and ``seed 2015`` (random seeds), ``F.col`` (pyspark),
#: ``noqa: F401`` (lint codes), ``docs/design.md`` (lower case) do not match.
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("issue number", re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)),
    ("numbered design note", re.compile(r"(?<![-\w.])seeds? ?#?0\d\d\b", re.IGNORECASE)),
    ("shared design notes", re.compile(r"\bDESIGN\.md\b")),
    ("finding label",
     re.compile(r"\(F\d+\b|\bF\d+(?:, F\d+)*\)|\bissue \d+, F\d+|^\s*(?:\"\"\"|#)\s*F\d+:")),
    ("work round", re.compile(r"\bround \d+\b|\b(?:third|last) rounds?\b", re.IGNORECASE)),
]

#: Files that are not scanned: this test, and the changelog, where the history belongs.
SKIPPED = {"tests/test_docs_text.py", "CHANGELOG.md"}

#: (file, pattern name, reason): explicit exceptions, each with the reason it is legitimate.
ALLOWED: list[tuple[str, str, str]] = []


def scanned_files() -> list[Path]:
    files = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    for folder in ("airflow_partitions", "tests", "benchmarks", "dags_examples"):
        files += python_files(ROOT / folder)
    return [p for p in files if p.is_file() and p.relative_to(ROOT).as_posix() not in SKIPPED]


def history_references() -> list[str]:
    allowed = {(f, name) for f, name, _ in ALLOWED}
    hits = []
    for path in scanned_files():
        rel = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name, pattern in PATTERNS:
                if (rel, name) not in allowed and pattern.search(line):
                    hits.append(f"{rel}:{number}: {name}: {line.strip()[:120]}")
    return hits


def test_the_patterns_catch_history_and_spare_legitimate_text() -> None:
    # The history examples are put together from words, so that no line of this file reads
    # as the history it describes.
    issue, seed, notes = "issue", "seed", "DESIGN" + ".md"
    history = [f"({issue} 28)", f"{issue.title()} #14 made", f"{issue}s 28, 29",
               f"{seed} 000's table", f"({seed} 003)", f"as {notes} says", "(F5, F6)",
               f"({issue} 29, F12: a dry", '    """F13: ``--loc', "hardening round 2",
               f"before {issue} 33's third round", "(round 2)"]
    legitimate = ["random.seed(7)", "seed=2015", "[--seed 7]", "Data (seed 2015)", "F.col('dt')",
                  "# noqa: F401", "[design.md](design.md)", "an f-string",
                  "the rounds interleaved", "round trips", "(round trips)",
                  "for r in range(rounds):"]
    for text in history:
        assert any(p.search(text) for _, p in PATTERNS), text
    for text in legitimate:
        assert not any(p.search(text) for _, p in PATTERNS), text


def test_no_history_in_docs_and_code() -> None:
    hits = history_references()
    assert not hits, "history belongs in CHANGELOG.md; say what is true now:\n" + "\n".join(hits)
