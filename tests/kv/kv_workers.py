"""Worker functions for the multi-process tests (importable by spawned children)."""

from __future__ import annotations

from airflow_partitions.kv import open_store


def contend(url: str, rounds: int) -> int:
    """Add 1 to a check-and-put counter and to an increment counter ``rounds`` times.

    Returns how many check-and-put attempts lost a race (and were retried).
    """
    lost = 0
    with open_store(url) as store:
        table = store.table("counter")
        for _ in range(rounds):
            while True:
                current = table.get(b"c", columns=[b"cf:cas"]).get(b"cf:cas")
                new = b"%d" % (int(current) + 1 if current else 1)
                if table.check_and_put(b"c", b"cf:cas", current, new):
                    break
                lost += 1
            table.increment(b"c", b"cf:inc")
    return lost


def rewrite_pair(url: str, rounds: int) -> None:
    """Rewrite two cells of one row together, ``rounds`` times, each with one mutate_row."""
    with open_store(url) as store:
        table = store.table("counter")
        for i in range(1, rounds + 1):
            value = b"%d" % i
            table.mutate_row(b"pair", puts={b"cf:a": value, b"cf:b": value}, deletes=[b"cf:gone"])
