"""Assemble docs/benchmarks.md from the per-benchmark result files each script writes.

Each ``benchmarks/<name>.py --write docs/benchmarks-<name>.md`` run produces one section with the
command that produced it; this keeps them in one page, in a fixed order.

    python benchmarks/collect.py
"""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
ORDER = ["timelines", "kv", "catalog", "catalog_scale", "sparse_history", "cover", "slices",
         "slice_timelines", "slice_domains", "filters", "pruning", "plan", "spark_read",
         "ui_view", "poke", "peers", "verify_memo", "after_write", "cache_state", "hbase_real",
         "hbase_distributed",
         "coverage_assets"]
HEADER = """# Benchmarks

Measured on this project's machines (2 cores, shared and noisy): every ratio compares against a
baseline measured in the same run (the naive per-partition existence loop, a full scan, the
Lens per-slot recursion, StoreAll, Spark's own pruning), never against a wall-clock limit.
Each section names the command that produced it; re-run it to refresh the section, then
`python benchmarks/collect.py` to rebuild this page.

"""


def main() -> int:
    sections = []
    for name in ORDER:
        path = DOCS / f"benchmarks-{name}.md"
        if path.exists():
            sections.append(path.read_text().strip() + "\n")
        else:
            sections.append(f"## {name}\n\nNot measured yet (`benchmarks/{name}.py`).\n")
    (DOCS / "benchmarks.md").write_text(HEADER + "\n".join(sections))
    print(f"wrote {DOCS / 'benchmarks.md'} from {len(sections)} sections")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
