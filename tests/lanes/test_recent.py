"""``Recent``: the view's small cache keeps the last ``size`` keys used."""

from __future__ import annotations

from airflow_partitions.lanes.recent import Recent


def test_it_keeps_the_most_recently_used_and_forgets_the_rest() -> None:
    cache: Recent[str, int] = Recent(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    cache.clear()
    assert cache.get("a") is None
