"""How ``make test`` hands units to pytest-xdist workers (tests/xdist_scheduling.py): driven
with fake workers through the scheduler's own calls, as pytest-xdist's session makes them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.xdist_scheduling import BACKGROUND_ENV, ModulesAndGroups, is_background

#: A collection as the workers send it: end-to-end units first (``tests/conftest.py``), each
#: grouped test's id ending in ``@`` and its group.
COLLECTION = [
    "tests/e2e/test_cluster.py::test_a@e2e:tests/e2e/test_cluster.py",
    "tests/e2e/test_cluster.py::test_b@e2e:tests/e2e/test_cluster.py",
    "tests/e2e/test_scheduler.py::test_a@e2e:scheduler",
    "tests/e2e/test_coverage_assets.py::test_a@e2e:scheduler",
    "tests/spark/test_reader.py::test_a@e2e:spark",
    "tests/pruning/test_e2e.py::test_a[x@y]@e2e:spark",
    *[f"tests/fast/test_{m}.py::test_{t}" for m in range(8) for t in range(4)],
]


class Worker:
    """What the scheduler calls on a worker, recorded."""

    def __init__(self, worker_id: str) -> None:
        self.gateway = SimpleNamespace(id=worker_id)
        self.shutting_down = False
        self.queue: list[int] = []
        self.ran: list[str] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def run(workers: int) -> list[Worker]:
    """Schedule :data:`COLLECTION` on ``workers`` fake workers and run it to the end, the
    workers taking turns one test at a time."""
    config: Any = SimpleNamespace(getvalue=lambda name: [f"{workers}*popen"],
                                  option=SimpleNamespace(loadscopereorder=False))
    scheduler = ModulesAndGroups(config)
    nodes = [Worker(f"gw{n}") for n in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, COLLECTION)
    scheduler.schedule()
    while any(node.queue for node in nodes):
        for node in nodes:
            if node.queue:
                index = node.queue.pop(0)
                node.ran.append(COLLECTION[index])
                scheduler.mark_test_complete(node, index)
    assert scheduler.tests_finished
    return nodes


def test_without_background_workers_every_worker_takes_end_to_end_units_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BACKGROUND_ENV, raising=False)
    nodes = run(2)
    assert sorted(t for node in nodes for t in node.ran) == sorted(COLLECTION)
    assert all(node.ran[0].startswith("tests/e2e/") for node in nodes)
    # a group stays whole on one worker
    for group in ("@e2e:scheduler", "@e2e:spark"):
        assert len({node.gateway.id for node in nodes
                    for t in node.ran if t.endswith(group)}) == 1


def test_a_background_worker_takes_fast_modules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKGROUND_ENV, "1")
    nodes = run(3)
    assert sorted(t for node in nodes for t in node.ran) == sorted(COLLECTION)
    background = nodes[2]
    assert background.ran and all("@" not in t for t in background.ran)
    assert all(node.ran[0].startswith("tests/e2e/") for node in nodes[:2])


def test_one_worker_always_stays_in_the_foreground(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKGROUND_ENV, "5")
    assert [is_background(f"gw{n}", 3) for n in range(3)] == [False, True, True]
    assert [is_background("gw0", 1)] == [False]
    nodes = run(2)
    assert sorted(t for node in nodes for t in node.ran) == sorted(COLLECTION)
    assert all("@" not in t for t in nodes[1].ran)
